#include "guard/awk_program.h"

#include <gtest/gtest.h>

#include "guard/shell_word.h"

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

TEST(AwkProgram, LiteralCommandsAndOnesBuiltAtRunTime) {
  AwkCommands a = awk_commands("BEGIN{system(\"id\"); \"date\" | getline d}");
  EXPECT_EQ(a.commands, (V{"id", "date"}));
  EXPECT_FALSE(a.dynamic);
  EXPECT_TRUE(awk_commands("{system(\"rm \" $1)}").dynamic);
  EXPECT_TRUE(awk_commands("{print | cmd}").dynamic);
  EXPECT_EQ(awk_commands("$1 || $2").commands, V{});
}

// Issue 45: a file named by a variable (`-v f=...`) was not seen as written.
TEST(AwkProgram, OutputFilesThroughStringsAndVariables) {
  const std::string U(1, kUnknown);
  AwkVariables given = {{"f", ".git/hooks/pre-commit"}, {"d", "out"}, {"x", std::nullopt}};
  struct Case {
    std::string program;
    V files;
  } cases[] = {
      {"BEGIN{print \"x\" > f}", {".git/hooks/pre-commit"}},
      {"BEGIN{printf \"x\" >> f}", {".git/hooks/pre-commit"}},
      {"{print > d \"/\" $1 \".txt\"}", {"out/" + U + ".txt"}},
      {"BEGIN{print \"x\" > (d \"/a\")}", {"out/a"}},
      {"BEGIN{printf(\"%s\", 1) > \"o.txt\"}", {"o.txt"}},
      {"BEGIN{g = \".mecha/x\"; print 1 > g}", {".mecha/x"}},
      {"BEGIN{print 1 > x}", {U}},
      {"{print > $1}", {U}},
      {"{print > unset}", {U}},
      // A variable given two values, or changed, is not known.
      {"BEGIN{f = \"a\"; print 1 > f}", {U}},
      {"{n = $1; print > n}", {U}},
      // Comparisons, and `>` inside strings, write nothing.
      {"$1 > 5 {print}", {}},
      {"{if ($1 > d) print \"a > b\"}", {}},
      {"{if (NR > 1) print > \"rest.txt\"}", {"rest.txt"}},
  };
  for (const Case& c : cases) EXPECT_EQ(awk_output_files(c.program, given), c.files) << c.program;
}

}  // namespace
}  // namespace mecha::guard
