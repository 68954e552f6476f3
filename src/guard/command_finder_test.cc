#include "guard/command_finder.h"

#include <gtest/gtest.h>

#include "guard/syntax_tree.h"

namespace mecha::guard {
namespace {

// The commands of a line as "name arg arg" strings, with their wrapper, in order.
std::vector<std::string> commands_of(std::string_view line) {
  auto found = find_commands(line);
  if (auto* p = std::get_if<Problem>(&found)) return {"PROBLEM " + p->rule + ": " + p->reason};
  std::vector<std::string> out;
  for (const Step& s : std::get<Script>(found).steps) {
    if (s.kind != Step::Kind::kCommand) continue;
    std::string c = s.command.name;
    for (size_t i = 1; i < s.command.argv.size(); ++i) c += " " + s.command.argv[i].shown();
    if (!s.command.via.empty()) c += " [" + s.command.via + "]";
    if (!s.command.fed_by.empty()) {
      c += " <-";
      for (const auto& f : s.command.fed_by) c += " " + f;
    }
    out.push_back(c);
  }
  return out;
}

using V = std::vector<std::string>;

// The last answer is kept per thread (so the rules and the guard parse a line once); it is
// kept for that line under those limits only.
TEST(FindCommands, TheKeptAnswerIsForTheSameLineAndLimitsOnly) {
  const std::string line = "a | b | c | d";
  FinderLimits tight;
  tight.max_commands = 2;
  EXPECT_EQ(commands_of(line).size(), 4u);
  EXPECT_TRUE(std::holds_alternative<Problem>(find_commands(line, tight)));
  EXPECT_EQ(commands_of(line).size(), 4u);
  EXPECT_EQ(commands_of("x; y"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(commands_of("z"), (std::vector<std::string>{"z"}));
}

TEST(FindCommands, ListsPipelinesAndSubstitutions) {
  EXPECT_EQ(commands_of("a && b || c; d | e"), (V{"a", "b", "c", "d", "e <- d"}));
  EXPECT_EQ(commands_of("echo $(rm -rf x) `id` <(ls) >(wc)"),
            (V{"echo … … … … <- ls", "rm -rf x", "id", "ls", "wc"}));
  EXPECT_EQ(commands_of("(cd a; make) && { b; }"), (V{"cd a", "make", "b"}));
  EXPECT_EQ(commands_of("if a; then b; elif c; then d; else e; fi"), (V{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(commands_of("for i in 1 2; do x $i; done; while y; do z; done"),
            (V{"x 1", "x 2", "y", "z"}));
  EXPECT_EQ(commands_of("case $v in a) p ;; *) q ;; esac"), (V{"p", "q"}));
  EXPECT_EQ(commands_of("f() { g; }"), (V{"g"}));
  EXPECT_EQ(commands_of("x=$(id) y=2"), (V{"id"}));
}

TEST(FindCommands, NormalisesNames) {
  EXPECT_EQ(commands_of("\\rm a; \"rm\" b; r''m c; $'\\x72m' d; /bin/rm e"),
            (V{"rm a", "rm b", "rm c", "rm d", "rm e"}));
}

TEST(FindCommands, LooksThroughWrappers) {
  EXPECT_EQ(commands_of("env -i A=1 nohup timeout -s KILL 5 nice -n 3 rm x"),
            (V{"env -i A=1 nohup timeout -s KILL 5 nice -n 3 rm x",
               "nohup timeout -s KILL 5 nice -n 3 rm x [env]",
               "timeout -s KILL 5 nice -n 3 rm x [env, nohup]",
               "nice -n 3 rm x [env, nohup, timeout]", "rm x [env, nohup, timeout, nice]"}));
  EXPECT_EQ(commands_of("sudo -u root ls"), (V{"sudo -u root ls", "ls [sudo]"}));
  EXPECT_EQ(commands_of("find . -name x -exec rm {} +"),
            (V{"find . -name x -exec rm {} +", "rm ./*? [find -exec]"}));
  EXPECT_EQ(commands_of("ls | xargs -n1 rm"),
            (V{"ls", "xargs -n1 rm <- ls", "rm … [xargs] <- ls"}));
  EXPECT_EQ(commands_of("bash -c 'a | b'"), (V{"bash -c a | b", "a", "b <- a"}));
  EXPECT_EQ(commands_of("sh -c \"sh -c 'rm x'\""), (V{"sh -c sh -c 'rm x'", "sh -c rm x", "rm x"}));
}

TEST(FindCommands, HeredocIntoAFileIsDataButIntoAShellIsScript) {
  EXPECT_EQ(commands_of("cat > f <<'EOF'\nrm -rf /\nEOF"), (V{"cat"}));
  EXPECT_EQ(commands_of("cat > f <<EOF\n$(id) / x\nEOF"), (V{"cat", "id"}));
  EXPECT_EQ(commands_of("bash <<'EOF'\nrm -rf /\nEOF"), (V{"bash", "rm -rf /"}));
  EXPECT_EQ(commands_of("bash <<< 'ls x'"), (V{"bash", "ls x"}));
  EXPECT_EQ(commands_of("echo 'rm y' | sh"), (V{"echo rm y", "sh <- echo", "rm y"}));
}

TEST(FindCommands, RefusesWhatItCannotKnow) {
  EXPECT_EQ(commands_of("$X a"), (V{"PROBLEM not-understood: the command name `…` at line 1, "
                                    "column 1 is known only when it runs"}));
  EXPECT_EQ(
      commands_of("ls; eval x"),
      (V{"PROBLEM not-understood: `eval` builds its command at run time at line 1, column 5"}));
  EXPECT_EQ(commands_of("source \"$F\""),
            (V{"PROBLEM not-understood: `source` of a file whose name is known only at run time at "
               "line 1, column 1"}));
  EXPECT_EQ(commands_of("bash -c \"$S\""), (V{"PROBLEM not-understood: the script given to bash -c "
                                              "at line 1, column 1 is known only when it runs"}));
  EXPECT_EQ(commands_of("echo `echo \\`id\\``"),
            (V{"PROBLEM not-understood: backticks nested inside backticks at line 1, column 6; use "
               "$(...)"}));
  EXPECT_EQ(
      commands_of("ls\necho \"open"),
      (V{"PROBLEM parse-error: shell syntax not understood at line 2, column 6 (near `\"open`)"}));
  // Regression: the newline the parser is given after the line must not be read as part of
  // it when an error lies past its end (a missing `;` before `fi`).
  EXPECT_EQ(commands_of("if true; then echo y; else \"x\" fi"),
            (V{"PROBLEM parse-error: shell syntax not understood at line 1, column 34"}));
  // Nor quoted as part of it when the line ends inside a quote.
  EXPECT_EQ(
      commands_of("echo it's"),
      (V{"PROBLEM parse-error: shell syntax not understood at line 1, column 8 (near `'s`)"}));
  EXPECT_EQ(commands_of("bash -c 'echo \"open'"),
            (V{"PROBLEM parse-error: shell syntax not understood at line 1, column 6 (near "
               "`\"open`) (in the script given to bash -c)"}));
}

TEST(FindCommands, BoundsDepthAndSize) {
  std::string deep(300, '(');
  deep += "ls" + std::string(300, ')');
  auto found = find_commands(deep);
  ASSERT_TRUE(std::holds_alternative<Problem>(found));
  EXPECT_EQ(std::get<Problem>(found).rule, "too-complex");
  std::string nested = "ls";
  for (int i = 0; i < 6; ++i) {
    std::string quoted;
    for (char c : nested) {
      if (c == '\'')
        quoted += "'\\''";
      else
        quoted += c;
    }
    nested = "sh -c '" + quoted + "'";
  }
  EXPECT_EQ(commands_of(nested),
            (V{"PROBLEM too-complex: shells inside shells nest deeper than 4 levels"}));
  EXPECT_EQ(commands_of(std::string(kMaxInputBytes + 1, 'a')),
            (V{"PROBLEM too-complex: the command is 131073 bytes, over the guard's limit of 131072 "
               "bytes; write long "
               "content with the Write tool instead"}));
}

}  // namespace
}  // namespace mecha::guard
