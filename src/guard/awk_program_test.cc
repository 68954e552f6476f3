#include "guard/awk_program.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mecha::guard
