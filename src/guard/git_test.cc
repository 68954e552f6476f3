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
  // `git init` copies the template's hooks into the repository.
  EXPECT_EQ(
      runs({"git", "-c", "init.templateDir=/tmp/t", "init"}),
      V{"git-config-runs-commands: `git -c init.templateDir` makes git run or load a program"});
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
  // Without a directory the clone's is named after the URL.
  EXPECT_EQ(writes({"git", "clone", "https://x/r.git"}), V{"r"});
  EXPECT_EQ(writes({"git", "status"}), V{});
}

// What into a folder is shown with a leading "into ".
V places(const std::vector<std::string>& words) {
  Command c;
  for (const std::string& w : words) c.argv.push_back(literal_word(w));
  c.name = "git";
  Operands o;
  git_writes(c, o);
  V out;
  for (const ShellWord& w : o.writes) out.push_back(w.shown());
  for (const ShellWord& w : o.write_dirs) out.push_back("into " + w.shown());
  for (const ShellWord& w : o.reads) out.push_back("read " + w.shown());
  return out;
}

// Issue 45: where git writes moves with -C, --git-dir and --work-tree, and several
// subcommands write a place the line names.
TEST(Git, WritesWhereItsGlobalOptionsAndSubcommandsPoint) {
  EXPECT_EQ(places({"git", "-C", "sub", "status"}), V{"read sub"});
  EXPECT_EQ(places({"git", "-C", "/other", "log", "--oneline"}), V{"read /other"});
  EXPECT_EQ(places({"git", "-C", "sub", "commit", "-m", "x"}), V{"sub"});
  EXPECT_EQ(places({"git", "-C", "a", "-C", "b", "init"}), (V{"a/b", "a/b/./.git"}));
  EXPECT_EQ(places({"git", "--git-dir=.git/hooks", "init"}), (V{".git/hooks", ".git/hooks"}));
  EXPECT_EQ(places({"git", "--work-tree=w", "checkout", "--", "."}), V{"into w"});
  EXPECT_EQ(places({"git", "--work-tree=.", "status"}), V{"read ."});
  EXPECT_EQ(places({"git", "init"}), V{"./.git"});
  EXPECT_EQ(places({"git", "init", "--bare", "r.git"}), V{"r.git"});
  EXPECT_EQ(places({"git", "init", "--template=/tmp/t"}), (V{"./.git", "./.git/hooks"}));
  EXPECT_EQ(places({"git", "clone", "--depth", "1", "https://x/r.git", "d"}), V{"d"});
  EXPECT_EQ(places({"git", "-C", ".git", "clone", "https://x/hooks.git"}),
            (V{".git", ".git/hooks"}));
  EXPECT_EQ(places({"git", "worktree", "add", "-b", "f", "wt/f", "main"}), V{"wt/f"});
  EXPECT_EQ(places({"git", "worktree", "list"}), V{});
  EXPECT_EQ(places({"git", "submodule", "add", "https://x/lib.git"}), V{"lib"});
  EXPECT_EQ(places({"git", "archive", "-o", "a.tar", "HEAD"}), V{"a.tar"});
  EXPECT_EQ(places({"git", "diff", "--output=p.diff"}), V{"p.diff"});
  EXPECT_EQ(places({"git", "format-patch", "-o", "patches", "HEAD~2"}), V{"into patches"});
  EXPECT_EQ(places({"git", "bundle", "create", "r.bundle", "HEAD"}), V{"r.bundle"});
  EXPECT_EQ(places({"git", "checkout-index", "-a", "--prefix=out/"}), V{"out/…"});
  EXPECT_EQ(places({"git", "mv", "a", "b", "dir"}), V{"dir"});
  EXPECT_EQ(places({"git", "rm", "-r", "x"}), V{"x"});
}

}  // namespace
}  // namespace mecha::guard
