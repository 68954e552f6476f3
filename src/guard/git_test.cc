#include "guard/git.h"

#include <gtest/gtest.h>

#include "guard/testing/look_through_dump.h"

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

// What a command runs by its options: scripts as "via: text", a refusal as "rule: reason".
V runs(const std::vector<std::string>& words) { return testing::look_through_dump(words); }

TEST(Git, RunsWhatItsOptionsAndSubcommandsName) {
  EXPECT_EQ(runs({"git", "rebase", "-x", "make test", "main"}), V{"git rebase -x: make test"});
  EXPECT_EQ(runs({"git", "rebase", "--exec=rm -rf ~", "main"}), V{"git rebase --exec: rm -rf ~"});
  EXPECT_EQ(runs({"git", "submodule", "foreach", "--recursive", "git", "pull"}),
            V{"git submodule foreach: git pull"});
  EXPECT_EQ(runs({"git", "bisect", "run", "make", "test"}), V{"cmd git bisect run: make test"});
  EXPECT_EQ(runs({"git", "status"}), V{});
}

TEST(Git, ConfigOfKeysThatRunCommandsIsRefused) {
  const std::string config = "git-config-runs-commands: `git config ";
  const std::string why =
      "` sets a key that makes git run a command or load one (it would run outside the sandbox "
      "the next time git runs)";
  EXPECT_EQ(runs({"git", "config", "core.fsmonitor", "rm -rf ~"}),
            V{config + "core.fsmonitor" + why});
  EXPECT_EQ(runs({"git", "config", "--local", "core.hooksPath", "/tmp/h"}),
            V{config + "core.hooksPath" + why});
  EXPECT_EQ(runs({"git", "config", "alias.st", "!rm -rf ~"}), V{config + "alias.st" + why});
  EXPECT_EQ(runs({"git", "config", "set", "filter.x.clean", "x"}),
            V{config + "filter.x.clean" + why});
  EXPECT_EQ(runs({"git", "config", "include.path", "/tmp/x"}), V{config + "include.path" + why});
  // Data keys, reads, unsets, plain aliases and a pager that only shows text are fine.
  EXPECT_EQ(runs({"git", "config", "user.name", "Jane"}), V{});
  EXPECT_EQ(runs({"git", "config", "--get", "core.pager"}), V{});
  EXPECT_EQ(runs({"git", "config", "--unset", "core.fsmonitor"}), V{});
  EXPECT_EQ(runs({"git", "config", "alias.st", "status -sb"}), V{});
  EXPECT_EQ(runs({"git", "config", "core.pager", "less -R"}), V{});
  EXPECT_EQ(runs({"git", "-c", "core.fsmonitor=x", "status"}),
            V{"git-config-runs-commands: `git -c core.fsmonitor` makes git run or load a program"});
}

// The files git writes besides its operands, words shown.
V writes(const std::vector<std::string>& words) {
  Command c;
  for (const std::string& w : words) c.argv.push_back(literal_word(w));
  c.name = "git";
  Operands o;
  git_writes(c, o);
  V out;
  for (const ShellWord& w : o.writes) out.push_back(w.shown());
  for (const ShellWord& w : o.reads) out.push_back("read " + w.shown());
  return out;
}

TEST(Git, WritesItsConfigurationFilesAndWhatItClones) {
  EXPECT_EQ(writes({"git", "config", "--global", "user.name", "x"}), V{"~/.gitconfig"});
  EXPECT_EQ(writes({"git", "config", "--system", "a.b", "c"}), V{"/etc/gitconfig"});
  EXPECT_EQ(writes({"git", "config", "--file", "/etc/x", "a.b", "c"}), V{"/etc/x"});
  EXPECT_EQ(writes({"git", "-C", "sub", "log"}), V{"read sub"});
  EXPECT_EQ(writes({"git", "clone", "https://x/r.git", "dir"}), V{"dir"});
  // Without a directory, or given only the URL, the clone's directory is not named.
  EXPECT_EQ(writes({"git", "clone", "https://x/r.git"}), V{});
  EXPECT_EQ(writes({"git", "status"}), V{});
}

}  // namespace
}  // namespace mecha::guard
