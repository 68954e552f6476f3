#include "tools/protected_paths.h"

#include <gtest/gtest.h>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

using testing::TempTree;

TEST(ProtectedPaths, NamesAreComparedAsAFoldingFileSystemWould) {
  EXPECT_TRUE(protected_in_tree(".envrc"));
  EXPECT_TRUE(protected_in_tree(".VSCode"));
  EXPECT_TRUE(protected_in_tree("lefthook.yml"));
  EXPECT_FALSE(protected_in_tree(".git"));  // git's places are the boundary's own
  EXPECT_FALSE(protected_in_tree("src"));
  EXPECT_EQ(protected_place_names().size(), 18u);
}

TEST(ProtectedPaths, AHooksPathInTheTreeIsNamedAndOneOutsideIsNot) {
  TempTree t;
  t.write(".git/config", "[core]\n\tbare = false\n\thooksPath = tools/hooks\n");
  EXPECT_EQ(hooks_path_in_tree(t.root().string(), (t.root() / ".git/config").string()),
            (t.root() / "tools/hooks").string());
  t.write(".git/config", "[core]\n\thooksPath = ../elsewhere\n");
  EXPECT_EQ(hooks_path_in_tree(t.root().string(), (t.root() / ".git/config").string()), "");
  t.write(".git/config", "[core]\n\thooksPath = ~/hooks\n");
  EXPECT_EQ(hooks_path_in_tree(t.root().string(), (t.root() / ".git/config").string()), "");
  t.write(".git/config", "[user]\n\thooksPath = tools/hooks\n");  // not [core]
  EXPECT_EQ(hooks_path_in_tree(t.root().string(), (t.root() / ".git/config").string()), "");
}

}  // namespace
}  // namespace mecha::tools
