#include "tools/glob_tool.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

using testing::TempTree;

// Sets a file's modification time to `seconds` after the epoch.
void set_mtime(const TempTree& t, const std::string& rel, time_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (t.root() / rel).c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << rel;
}

class GlobToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::pair<std::string, time_t> files[] = {
        {"src/a.py", 1000},
        {"src/sub/b.py", 3000},
        {"README.md", 2000},
        {"build/out.py", 5000},
        {".github/workflows/ci.yml", 4000},
        {".git/config.py", 6000},
        {"données/été.py", 500},
    };
    for (const auto& [rel, mtime] : files) {
      t.write(rel, "x\n");
      set_mtime(t, rel, mtime);
    }
    t.write(".gitignore", "build/\n");
    set_mtime(t, ".gitignore", 100);
  }
  ToolOutput glob(Json input) { return GlobTool().call(input, t.ctx()); }
  TempTree t;
};

TEST_F(GlobToolTest, Table) {
  struct Case {
    Json input;
    bool is_error;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{{"pattern", "**/*.py"}}, false, "src/sub/b.py\nsrc/a.py\ndonnées/été.py\n"},
      {{{"pattern", "*.py"}}, false, "src/sub/b.py\nsrc/a.py\ndonnées/été.py\n"},
      {{{"pattern", "src/*.py"}}, false, "src/a.py\n"},
      {{{"pattern", "*.{md,yml}"}}, false, ".github/workflows/ci.yml\nREADME.md\n"},
      {{{"pattern", "*.py"}, {"path", "src"}}, false, "src/sub/b.py\nsrc/a.py\n"},
      {{{"pattern", "sub/*.py"}, {"path", "src"}}, false, "src/sub/b.py\n"},
      {{{"pattern", t.root().string() + "/src/**/*.py"}}, false, "src/sub/b.py\nsrc/a.py\n"},
      {{{"pattern", "*.rs"}}, false, "No files match '*.rs' in ."},
      {{{"pattern", "../*.py"}},
       true,
       "the pattern '../*.py' climbs out of the folder searched with ..; set path to the folder "
       "to search instead"},
      {{{"pattern", "[x"}}, true, "the glob pattern '[x' has a '[' that is not closed"},
      {{{"pattern", "*"}, {"path", "README.md"}},
       true,
       (t.root() / "README.md").string() + " is not a directory; path names the folder to search"},
  };
  for (const Case& c : cases) {
    ToolOutput out = glob(c.input);
    EXPECT_EQ(out.is_error, c.is_error) << c.input.dump();
    EXPECT_EQ(out.content, c.expected) << c.input.dump();
  }
}

TEST_F(GlobToolTest, RefusesAFolderOutsideTheTree) {
  ToolOutput out = glob({{"pattern", "*"}, {"path", "/etc"}});
  EXPECT_EQ(out.refusal_rule, "confinement");
  EXPECT_EQ(out.content, fmt::format("refused: '/etc' resolves to /etc, outside the work tree {}; "
                                     "the file tools only reach files inside the work tree",
                                     t.root().string()));
}

TEST_F(GlobToolTest, CapsTheResultsWithANote) {
  for (int i = 0; i < 150; ++i) {
    std::string rel = fmt::format("many/f{:03}.txt", i);
    t.write(rel, "");
    set_mtime(t, rel, 10000 + i);
  }
  ToolOutput out = glob({{"pattern", "many/*.txt"}});
  ASSERT_FALSE(out.is_error);
  std::string expected;
  for (int i = 149; i >= 50; --i) expected += fmt::format("many/f{:03}.txt\n", i);
  expected +=
      "[150 files match; the 100 newest are shown. Narrow the pattern or the path to see "
      "the others.]\n";
  EXPECT_EQ(out.content, expected);
}

}  // namespace
}  // namespace mecha::tools
