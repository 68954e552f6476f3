// Runs the built `mecha` binary as a child process, for end-to-end tests: in a given
// directory, with $HOME and $XDG_CONFIG_HOME pointed at that directory so no user config
// leaks in, capturing stdout, stderr and the exit code.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mecha::cli::testing {

struct BinaryResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

BinaryResult run_binary(const std::filesystem::path& binary, const std::filesystem::path& dir,
                        const std::vector<std::string>& args);

#ifdef MECHA_BINARY_DIR
// The mecha binary of this build; MECHA_BINARY_DIR is defined for test executables only.
inline std::filesystem::path mecha_binary() {
  return std::filesystem::path(MECHA_BINARY_DIR) / "mecha";
}
inline BinaryResult run_mecha(const std::filesystem::path& dir,
                              const std::vector<std::string>& args) {
  return run_binary(mecha_binary(), dir, args);
}
#endif

}  // namespace mecha::cli::testing
