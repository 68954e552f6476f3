// The colours of mecha's terminal output, and when to use them: only on a terminal, and
// never when NO_COLOR is set to anything (https://no-color.org).
#pragma once

namespace mecha::cli {

// SGR sequences, or empty strings when colour is off.
struct Palette {
  const char* dim = "";
  const char* bold = "";
  const char* red = "";
  const char* green = "";
  const char* yellow = "";
  const char* magenta = "";
  const char* reset = "";

  static Palette of(bool color);
};

// True when `fd` is a terminal and NO_COLOR is not set (any value, even empty).
bool color_wanted(int fd);

}  // namespace mecha::cli
