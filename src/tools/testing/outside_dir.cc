#include "tools/testing/outside_dir.h"

#include <random>
#include <string>

namespace mecha::tools::testing {

std::filesystem::path outside_path() {
  std::string dir = MECHA_BINARY_DIR;
  if (dir.rfind("/tmp/", 0) == 0 || dir.rfind("/var/tmp/", 0) == 0) dir = "/var";
  std::random_device rd;
  return std::filesystem::path(dir) / ("sandbox-probe-" + std::to_string(rd() % 1000000 + 1000000));
}

OutsideDir::OutsideDir() : path_(outside_path()) { std::filesystem::create_directories(path_); }

OutsideDir::~OutsideDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace mecha::tools::testing
