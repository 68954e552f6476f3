#include "store/testing/temp_dir.h"

#include <stdlib.h>

#include <string>

namespace mecha::store::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace mecha::store::testing
