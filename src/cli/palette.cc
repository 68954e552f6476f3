#include "cli/palette.h"

#include <unistd.h>

#include <cstdlib>

namespace mecha::cli {

Palette Palette::of(bool color) {
  if (!color) return Palette{};
  return Palette{"\x1b[2m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[35m", "\x1b[0m"};
}

bool color_wanted(int fd) { return isatty(fd) == 1 && std::getenv("NO_COLOR") == nullptr; }

}  // namespace mecha::cli
