#include "guard/sed_program.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

TEST(SedProgram, FilesWrittenReadAndCommandsRun) {
  struct Case {
    const char* program;
    V writes;
    V reads;
    bool executes;
  } cases[] = {
      {"s/a/b/g", {}, {}, false},
      {"s/a/b/w out.txt", {"out.txt"}, {}, false},
      {"s|a|b|gw  /tmp/x", {"/tmp/x"}, {}, false},
      {"w /etc/x", {"/etc/x"}, {}, false},
      {"/re/w out", {"out"}, {}, false},
      {"1,5W part", {"part"}, {}, false},
      {"r in.txt", {}, {"in.txt"}, false},
      {"$r footer.txt", {}, {"footer.txt"}, false},
      {"1e id", {}, {}, true},
      {"s/a/b/e", {}, {}, true},
      {"s/w/e/", {}, {}, false},
      {"y/abc/xyz/", {}, {}, false},
      {"/x/d;s|/|_|g", {}, {}, false},
      {"a hello w x", {}, {}, false},
      {"\\%w%d", {}, {}, false},
      {":loop;N;b loop", {}, {}, false},
      {"p\nw a\nw b", {"a", "b"}, {}, false},
  };
  for (const Case& c : cases) {
    SedEffects e = sed_effects(c.program);
    EXPECT_EQ(e.writes, c.writes) << c.program;
    EXPECT_EQ(e.reads, c.reads) << c.program;
    EXPECT_EQ(e.executes, c.executes) << c.program;
  }
}

TEST(SedProgram, SeveralCommandsOnLinesAndTextThatIsNoCommand) {
  SedEffects e = sed_effects("s/a/b/w out.txt\n/x/w log\n1r in.txt\ny/abc/xyz/;p");
  EXPECT_EQ(e.writes, (std::vector<std::string>{"out.txt", "log"}));
  EXPECT_EQ(e.reads, (std::vector<std::string>{"in.txt"}));
  EXPECT_FALSE(e.executes);
  EXPECT_TRUE(sed_effects("s/a/b/ge").executes);
  EXPECT_TRUE(sed_effects("1e id").executes);
  EXPECT_FALSE(sed_effects("s/e/w/g").executes);
  EXPECT_TRUE(sed_effects("s/e/w/g").writes.empty());
  EXPECT_TRUE(sed_effects("a\\ text with w and e").writes.empty());
}

}  // namespace
}  // namespace mecha::guard
