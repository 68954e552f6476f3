// TempTree: a work tree in a fresh temporary folder, removed afterwards, with a
// ToolContext for calling tools in it. For tests.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/cancel.h"
#include "tools/tool.h"

namespace mecha::tools::testing {

class TempTree {
 public:
  TempTree();
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  // The folder holding the tree (and room for things "outside" it).
  const std::filesystem::path& base() const { return base_; }
  // The work tree: base()/tree, canonical.
  const std::filesystem::path& root() const { return root_; }
  ToolContext& ctx() { return ctx_; }

  // Writes `content` to root()/rel, creating folders.
  void write(const std::string& rel, std::string_view content) const;
  // The content of root()/rel ("<missing>" when there is none).
  std::string read(const std::string& rel) const;
  // Writes a file outside the tree: base()/rel.
  void write_outside(const std::string& rel, std::string_view content) const;
  void symlink(const std::string& target, const std::string& rel) const;

 private:
  std::filesystem::path base_;
  std::filesystem::path root_;
  CancelToken cancel_;
  ToolContext ctx_;
};

}  // namespace mecha::tools::testing
