#include "base/file_text.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

namespace mecha {

Result<std::string> read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("reading " + path.string() + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Status write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Status::error("writing " + tmp.string() + ": failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::error("writing " + path.string() + ": " + ec.message());
  return ok_status();
}

}  // namespace mecha
