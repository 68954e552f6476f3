#include "store/testing/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <string>

namespace mecha::store::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  path_ = std::filesystem::canonical(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::write(const std::string& name, const std::string& content) const {
  std::filesystem::path p = path_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

}  // namespace mecha::store::testing
