// Places outside any work tree and outside /tmp and /var/tmp (which the sandbox replaces with
// its own): where a write escaping the sandbox would land, or what the sandbox must hide.
// For tests.
#pragma once

#include <filesystem>

namespace mecha::tools::testing {

// A fresh path beneath the build folder, or beneath /var when the build is under /tmp. Not
// the home folder: the sandbox hides /root behind an empty tmpfs, where a write succeeds.
// Nothing is created there.
std::filesystem::path outside_path();

// A folder at outside_path(), removed afterwards.
class OutsideDir {
 public:
  OutsideDir();
  ~OutsideDir();
  OutsideDir(const OutsideDir&) = delete;
  OutsideDir& operator=(const OutsideDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace mecha::tools::testing
