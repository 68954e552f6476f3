// A fresh directory under the system's temp dir, removed with everything in it when the
// object goes. For tests that need real files (SQLite stores, lock files, work trees).
#pragma once

#include <filesystem>
#include <string>

namespace mecha::store::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Absolute and canonical, so it compares equal to a work tree resolved from it.
  const std::filesystem::path& path() const { return path_; }
  // Writes `content` to path()/name, creating parent folders.
  void write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

}  // namespace mecha::store::testing
