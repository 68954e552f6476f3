#include "tools/write_tool.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/read_tool.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

std::string write_fill(std::string s, const TempTree& t) {
  for (size_t pos; (pos = s.find("{root}")) != std::string::npos;)
    s.replace(pos, 6, t.root().string());
  for (size_t pos; (pos = s.find("{base}")) != std::string::npos;)
    s.replace(pos, 6, t.base().string());
  return s;
}

struct WriteCase {
  std::string name;
  std::string path;
  std::string content;
  bool is_error;
  std::string expected;               // the tool's output ({root}, {base} filled in)
  std::optional<std::string> rule{};  // the refusal rule, when refused
  std::string check_file{};           // a file that must hold...
  std::string check_content{};        // ...this afterwards
};

TEST(WriteTool, Table) {
  TempTree t;
  t.write("existing.txt", "old\n");
  t.write("dir/keep", "");
  t.write(".git/config", "[core]\n");
  t.write_outside("outside.txt", "outside\n");
  t.symlink("../outside.txt", "out_link");
  const std::vector<WriteCase> cases = {
      {"new file",
       "new.txt",
       "hello\n",
       false,
       "Created new.txt (6 bytes, 1 line)",
       {},
       "new.txt",
       "hello\n"},
      {"new folders",
       "a/b/c/deep.txt",
       "x\ny",
       false,
       "Created a/b/c/deep.txt (3 bytes, 2 lines)",
       {},
       "a/b/c/deep.txt",
       "x\ny"},
      {"unicode name",
       "données/日本語.txt",
       "こんにちは\n",
       false,
       "Created données/日本語.txt (16 bytes, 1 line)",
       {},
       "données/日本語.txt",
       "こんにちは\n"},
      {"empty content",
       "empty.txt",
       "",
       false,
       "Created empty.txt (0 bytes, 0 lines)",
       {},
       "empty.txt",
       ""},
      {"unread file is not replaced",
       "existing.txt",
       "new\n",
       true,
       "refused to replace existing.txt: it exists and this run has not read it. Read it first, "
       "then Write the whole new content (or use Edit to change part of it).",
       {},
       "existing.txt",
       "old\n"},
      {"a folder",
       "dir",
       "x",
       true,
       "{root}/dir is a directory; Write writes files",
       {},
       "dir/keep",
       ""},
      {"outside", "../outside.txt", "pwned", true,
       "refused: '../outside.txt' resolves to {base}/outside.txt, outside the work tree {root}; "
       "the file tools only reach files inside the work tree",
       "confinement"},
      {"symlink out", "out_link", "pwned", true,
       "refused: 'out_link' resolves through the symlink {root}/out_link -> ../outside.txt to "
       "{base}/outside.txt, outside the work tree {root}; the file tools only reach files inside "
       "the work tree",
       "confinement"},
      {".git internals", ".git/hooks/post-checkout", "#!/bin/sh\n", true,
       "refused: '.git/hooks/post-checkout' resolves to {root}/.git/hooks/post-checkout, inside a "
       ".git directory of the work tree {root}; git's internals are not written by the file tools",
       "protected_path"},
  };
  WriteTool tool;
  for (const WriteCase& c : cases) {
    ToolOutput out = tool.call({{"file_path", c.path}, {"content", c.content}}, t.ctx());
    EXPECT_EQ(out.is_error, c.is_error) << c.name;
    EXPECT_EQ(out.content, write_fill(c.expected, t)) << c.name;
    EXPECT_EQ(out.refusal_rule, c.rule) << c.name;
    if (!c.check_file.empty()) {
      EXPECT_EQ(t.read(c.check_file), c.check_content) << c.name;
    }
  }
  std::ifstream outside(t.base() / "outside.txt");
  std::string line;
  std::getline(outside, line);
  EXPECT_EQ(line, "outside");
  EXPECT_FALSE(fs::exists(t.root() / ".git/hooks"));
}

TEST(WriteTool, ReplacesAFileReadFirstKeepingItsMode) {
  TempTree t;
  t.write("run.sh", "#!/bin/sh\necho old\n");
  fs::permissions(t.root() / "run.sh", fs::perms(0751));
  ASSERT_FALSE(ReadTool().call({{"file_path", "run.sh"}}, t.ctx()).is_error);
  ToolOutput out =
      WriteTool().call({{"file_path", "run.sh"}, {"content", "#!/bin/sh\necho new\n"}}, t.ctx());
  EXPECT_EQ(out.content, "Replaced run.sh (19 bytes, 2 lines)");
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(t.read("run.sh"), "#!/bin/sh\necho new\n");
  EXPECT_EQ(fs::status(t.root() / "run.sh").permissions(), fs::perms(0751));
  // Nothing but the file is left in the folder (no temporary file).
  int entries = 0;
  for (auto& e : fs::directory_iterator(t.root()))
    entries += e.path().filename() != "run.sh" ? 100 : 1;
  EXPECT_EQ(entries, 1);
}

TEST(WriteTool, AFileWrittenInThisRunMayBeWrittenAgain) {
  TempTree t;
  WriteTool tool;
  EXPECT_FALSE(tool.call({{"file_path", "f.txt"}, {"content", "1"}}, t.ctx()).is_error);
  ToolOutput again = tool.call({{"file_path", "f.txt"}, {"content", "2"}}, t.ctx());
  EXPECT_EQ(again.content, "Replaced f.txt (1 byte, 1 line)");
  EXPECT_EQ(t.read("f.txt"), "2");
}

TEST(WriteTool, WritingThroughASymlinkInsideReplacesItsTarget) {
  TempTree t;
  t.write("src/a.py", "a = 1\n");
  t.symlink("src/a.py", "link.py");
  ASSERT_FALSE(ReadTool().call({{"file_path", "link.py"}}, t.ctx()).is_error);
  ToolOutput out = WriteTool().call({{"file_path", "link.py"}, {"content", "a = 2\n"}}, t.ctx());
  EXPECT_EQ(out.content, "Replaced src/a.py (6 bytes, 1 line)");
  EXPECT_TRUE(fs::is_symlink(t.root() / "link.py"));
  EXPECT_EQ(t.read("src/a.py"), "a = 2\n");
}

}  // namespace
}  // namespace mecha::tools
