#include "tools/grep_tool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "tools/bash_sandbox.h"
#include "tools/sandbox_masks.h"
#include "tools/testing/temp_tree.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {
namespace {

using testing::TempTree;

class GrepToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.write("a.py", "def foo():\n    return 1\n");
    t.write("b.py", "foo = 2\n");
    t.write("notes/c.txt", "FOO\n-x flag\n--pre=sh\n");
    t.write("build/gen.py", "foo\n");
    t.write(".gitignore", "build/\n");
    t.write(".git/config", "foo\n");
    t.write("données/été.txt", "foo été\n");
  }
  ToolOutput grep(Json input) { return GrepTool().call(input, t.ctx()); }
  TempTree t;
};

TEST_F(GrepToolTest, Table) {
  struct Case {
    Json input;
    bool is_error;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{{"pattern", "foo"}}, false, "a.py\nb.py\ndonnées/été.txt\n"},
      {{{"pattern", "foo"}, {"-i", true}}, false, "a.py\nb.py\ndonnées/été.txt\nnotes/c.txt\n"},
      {{{"pattern", "foo"}, {"output_mode", "content"}},
       false,
       "a.py:1:def foo():\nb.py:1:foo = 2\ndonnées/été.txt:1:foo été\n"},
      {{{"pattern", "foo"}, {"output_mode", "content"}, {"-n", false}, {"glob", "*.py"}},
       false,
       "a.py:def foo():\nb.py:foo = 2\n"},
      {{{"pattern", "def"}, {"output_mode", "content"}, {"-A", 1}},
       false,
       "a.py:1:def foo():\na.py-2-    return 1\n"},
      {{{"pattern", "return"}, {"output_mode", "content"}, {"-B", 1}},
       false,
       "a.py-1-def foo():\na.py:2:    return 1\n"},
      {{{"pattern", "foo"}, {"output_mode", "count"}, {"type", "py"}},
       false,
       "a.py:1\nb.py:1\n[2 matches in 2 files]\n"},
      {{{"pattern", "foo"}, {"path", "a.py"}, {"output_mode", "content"}},
       false,
       "a.py:1:def foo():\n"},
      {{{"pattern", "FOO"}, {"path", "notes"}}, false, "notes/c.txt\n"},
      {{{"pattern", "foo"},
        {"path", t.root().string() + "/notes/c.txt"},
        {"-i", true},
        {"output_mode", "content"}},
       false,
       "notes/c.txt:1:FOO\n"},
      {{{"pattern", "foo"}, {"head_limit", 1}},
       false,
       "a.py\n[3 files in all; the first 1 are shown (head_limit). Narrow the search with path, "
       "glob or type.]\n"},
      {{{"pattern", "-x"}, {"output_mode", "content"}}, false, "notes/c.txt:2:-x flag\n"},
      {{{"pattern", "--pre=sh"}, {"output_mode", "content"}}, false, "notes/c.txt:3:--pre=sh\n"},
      {{{"pattern", "nothing here"}}, false, "No matches for 'nothing here' in ."},
      {{{"pattern", "été"}, {"output_mode", "content"}}, false, "données/été.txt:1:foo été\n"},
      {{{"pattern", "foo"}, {"path", "missing"}},
       true,
       (t.root() / "missing").string() + " does not exist"},
  };
  for (const Case& c : cases) {
    ToolOutput out = grep(c.input);
    EXPECT_EQ(out.is_error, c.is_error) << c.input.dump();
    EXPECT_EQ(out.content, c.expected) << c.input.dump();
  }
}

TEST_F(GrepToolTest, BadRegexIsAnError) {
  ToolOutput out = grep({{"pattern", "("}});
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content, "ripgrep failed: regex parse error:\n    (\n    ^\nerror: unclosed group");
}

TEST_F(GrepToolTest, RefusesPathsOutsideTheTree) {
  t.write_outside("secret.txt", "foo\n");
  ToolOutput out = grep({{"pattern", "foo"}, {"path", ".."}});
  EXPECT_EQ(out.refusal_rule, "confinement");
  EXPECT_EQ(out.content, fmt::format("refused: '..' resolves to {}, outside the work tree {}; the "
                                     "file tools only reach files inside the work tree",
                                     t.base().string(), t.root().string()));
}

TEST_F(GrepToolTest, ContentIsCappedWithANote) {
  std::string many;
  for (int i = 0; i < 3000; ++i) many += "match\n";
  t.write("many.txt", many);
  ToolOutput out = grep({{"pattern", "match"}, {"output_mode", "content"}});
  ASSERT_FALSE(out.is_error);
  EXPECT_EQ(out.content.substr(out.content.rfind('[')),
            "[3000 lines in all; the first 2000 are shown. Narrow the search with path, glob or "
            "type, or use output_mode files_with_matches.]\n");
  EXPECT_EQ(out.content.substr(0, 32), "many.txt:1:match\nmany.txt:2:matc");
}

// Masks one file, hidden, as a Read deny rule naming it would.
class HiddenFile final : public SandboxMasks {
 public:
  explicit HiddenFile(std::string path) : path_(std::move(path)) {}
  Mask mask_for(std::string_view path) const override {
    return path == path_ ? Mask::kHidden : Mask::kNone;
  }
  Found find(const std::filesystem::path&, size_t) const override {
    return {{{path_, Mask::kHidden}}, true};
  }

 private:
  std::string path_;
};

// ripgrep writes nothing: a search opens the run's boundary (whose walks of the whole tree
// cost more than most searches) only for the deny rules' masks, which then hold.
TEST_F(GrepToolTest, ASearchOpensTheBoundaryOnlyForTheMasks) {
  if (Status s = sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  EXPECT_EQ(grep({{"pattern", "foo"}}).content, "a.py\nb.py\ndonnées/été.txt\n");
  EXPECT_EQ(existing_tree_boundary(t.ctx()), nullptr);
  t.ctx().masks = std::make_shared<HiddenFile>((t.root() / "b.py").string());
  EXPECT_EQ(grep({{"pattern", "foo"}}).content,
            "a.py\ndonnées/été.txt\n[ripgrep also reported: b.py: Permission denied (os error "
            "13)]\n");
  EXPECT_NE(existing_tree_boundary(t.ctx()), nullptr);
}

}  // namespace
}  // namespace mecha::tools
