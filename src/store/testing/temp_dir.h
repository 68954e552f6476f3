// A fresh directory under the system's temp dir, removed with everything in it when the
// object goes. For tests that need real files (SQLite stores, lock files).
#pragma once

#include <filesystem>

namespace mecha::store::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace mecha::store::testing
