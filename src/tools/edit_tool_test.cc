#include "tools/edit_tool.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempTree;

struct EditCase {
  std::string name;
  std::string content;  // of f.txt before the edit
  Json input;           // file_path defaults to f.txt
  bool is_error;
  std::string expected;
  std::string after;  // f.txt afterwards
};

TEST(EditTool, Table) {
  const std::string three_foo = "foo\nbar\nfoo\nbaz\nfoo\n";
  const std::vector<EditCase> cases = {
      {"one replacement",
       "a\nb\nc\n",
       {{"old_string", "b"}, {"new_string", "B"}},
       false,
       "Edited f.txt: replaced 1 occurrence at line 2. The lines around it now read:\n"
       "     1\ta\n     2\tB\n     3\tc\n",
       "a\nB\nc\n"},
      {"not found",
       "a\nb\n",
       {{"old_string", "x"}, {"new_string", "y"}},
       true,
       "old_string was not found in f.txt. It must match the file exactly, including whitespace "
       "and indentation; Read the file to see its current text.",
       "a\nb\n"},
      {"not unique",
       three_foo,
       {{"old_string", "foo"}, {"new_string", "qux"}},
       true,
       "old_string occurs 3 times in f.txt (at lines 1, 3, 5); include more of the surrounding "
       "text to make it unique, or set replace_all to true to replace every occurrence.",
       three_foo},
      {"replace all",
       three_foo,
       {{"old_string", "foo"}, {"new_string", "qux"}, {"replace_all", true}},
       false,
       "Edited f.txt: replaced 3 occurrences at line 1.",
       "qux\nbar\nqux\nbaz\nqux\n"},
      {"no-op",
       "a\n",
       {{"old_string", "a"}, {"new_string", "a"}},
       true,
       "old_string and new_string are the same, so the edit would change nothing",
       "a\n"},
      {"empty old_string",
       "a\n",
       {{"old_string", ""}, {"new_string", "b"}},
       true,
       "old_string is empty; give the exact text to replace (to create a file, use Write)",
       "a\n"},
      {"empty file",
       "",
       {{"old_string", "a"}, {"new_string", "b"}},
       true,
       "old_string was not found in f.txt. It must match the file exactly, including whitespace "
       "and indentation; Read the file to see its current text.",
       ""},
      {"CRLF kept when the model writes LF",
       "one\r\ntwo\r\nthree\r\n",
       {{"old_string", "one\ntwo"}, {"new_string", "1\n2\n2.5"}},
       false,
       "Edited f.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
       "     1\t1\n     2\t2\n     3\t2.5\n     4\tthree\n",
       "1\r\n2\r\n2.5\r\nthree\r\n"},
      {"CRLF kept for a one-line match",
       "a\r\nb\r\n",
       {{"old_string", "a"}, {"new_string", "x\ny"}},
       false,
       "Edited f.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
       "     1\tx\n     2\ty\n     3\tb\n",
       "x\r\ny\r\nb\r\n"},
      {"BOM and other bytes kept",
       "\xef\xbb\xbfname = 'caf\xc3\xa9'\n",
       {{"old_string", "name"}, {"new_string", "nom"}},
       false,
       "Edited f.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
       "     1\t\xef\xbb\xbfnom = 'caf\xc3\xa9'\n",
       "\xef\xbb\xbfnom = 'caf\xc3\xa9'\n"},
      {"unicode",
       "héllo wörld\n",
       {{"old_string", "wörld"}, {"new_string", "世界"}},
       false,
       "Edited f.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
       "     1\théllo 世界\n",
       "héllo 世界\n"},
  };
  EditTool tool;
  for (const EditCase& c : cases) {
    TempTree t;
    t.write("f.txt", c.content);
    Json input = c.input;
    input["file_path"] = "f.txt";
    ToolOutput out = tool.call(input, t.ctx());
    EXPECT_EQ(out.is_error, c.is_error) << c.name;
    EXPECT_EQ(out.content, c.expected) << c.name;
    EXPECT_EQ(t.read("f.txt"), c.after) << c.name;
  }
}

TEST(EditTool, KeepsModeAndRefusesOutsideAndMissing) {
  TempTree t;
  t.write("run.sh", "echo a\n");
  fs::permissions(t.root() / "run.sh", fs::perms(0755));
  EditTool tool;
  ToolOutput ok =
      tool.call({{"file_path", "run.sh"}, {"old_string", "a"}, {"new_string", "b"}}, t.ctx());
  EXPECT_FALSE(ok.is_error) << ok.content;
  EXPECT_EQ(t.read("run.sh"), "echo b\n");
  EXPECT_EQ(fs::status(t.root() / "run.sh").permissions(), fs::perms(0755));

  t.write_outside("o.txt", "a\n");
  ToolOutput out =
      tool.call({{"file_path", "../o.txt"}, {"old_string", "a"}, {"new_string", "b"}}, t.ctx());
  EXPECT_EQ(out.refusal_rule, "confinement");

  ToolOutput missing =
      tool.call({{"file_path", "nope.txt"}, {"old_string", "a"}, {"new_string", "b"}}, t.ctx());
  EXPECT_EQ(missing.content,
            (t.root() / "nope.txt").string() + " does not exist (to create a file, use Write)");

  t.write(".mecha/config.toml", "a = 1\n");
  ToolOutput prot = tool.call(
      {{"file_path", ".mecha/config.toml"}, {"old_string", "1"}, {"new_string", "2"}}, t.ctx());
  EXPECT_EQ(prot.refusal_rule, "protected_path");
  EXPECT_EQ(t.read(".mecha/config.toml"), "a = 1\n");
}

}  // namespace
}  // namespace mecha::tools
