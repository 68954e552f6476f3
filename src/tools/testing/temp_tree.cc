#include "tools/testing/temp_tree.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace mecha::tools::testing {

namespace fs = std::filesystem;

TempTree::TempTree() {
  std::string tmpl = (fs::temp_directory_path() / "mecha-tree-XXXXXX").string();
  base_ = fs::canonical(::mkdtemp(tmpl.data()));
  root_ = base_ / "tree";
  fs::create_directory(root_);
  ctx_.work_tree = root_;
  ctx_.cancel = &cancel_;
}

TempTree::~TempTree() {
  std::error_code ec;
  // Restore permissions a test may have taken away so everything can be removed.
  for (auto it = fs::recursive_directory_iterator(base_, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::remove_all(base_, ec);
}

void TempTree::write(const std::string& rel, std::string_view content) const {
  fs::path p = root_ / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::string TempTree::read(const std::string& rel) const {
  std::ifstream in(root_ / rel, std::ios::binary);
  if (!in) return "<missing>";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void TempTree::write_outside(const std::string& rel, std::string_view content) const {
  fs::path p = base_ / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

void TempTree::symlink(const std::string& target, const std::string& rel) const {
  fs::path p = root_ / rel;
  fs::create_directories(p.parent_path());
  fs::create_symlink(target, p);
}

}  // namespace mecha::tools::testing
