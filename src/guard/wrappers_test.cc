#include "guard/wrappers.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

std::vector<ShellWord> argv_of(const V& words) {
  std::vector<ShellWord> out;
  for (const std::string& w : words) out.push_back(literal_word(w));
  return out;
}

// A LookThrough as lines: "cmd VIA: argv", "script VIA: text", "not-understood: why",
// "stdin", in that order.
V described(const LookThrough& l) {
  V out;
  for (const InnerCommand& c : l.commands) {
    std::string s = "cmd " + c.via + ":";
    for (const ShellWord& w : c.argv) s += " " + w.shown();
    out.push_back(s);
  }
  for (const InnerScript& s : l.scripts) out.push_back("script " + s.via + ": " + s.text.shown());
  if (l.not_understood) out.push_back("not-understood: " + *l.not_understood);
  if (l.reads_script_from_stdin) out.push_back("stdin");
  return out;
}

struct WrapperCase {
  V argv;
  V expected;
};

void check_wrappers(const std::vector<WrapperCase>& cases) {
  for (const WrapperCase& c : cases) {
    std::string line;
    for (const std::string& w : c.argv) line += "[" + w + "]";
    EXPECT_EQ(described(look_through(argv_of(c.argv))), c.expected) << line;
  }
}

TEST(LookThrough, PlainCommandsRunNothingElse) {
  check_wrappers({
      {{"ls", "-la"}, {}},
      {{"rm", "-rf", "build"}, {}},
      {{"rg", "-n", "x", "src"}, {}},
      {{"git", "log", "-c", "core.pager=x"}, {}},  // after the subcommand: log's own -c
      {{"source", "env.sh"}, {}},
      {{"command", "-v", "ls"}, {}},
      {{"trap", "-p"}, {}},
      {{"trap", "-", "EXIT"}, {}},
      {{"timeout", "5"}, {}},
  });
  EXPECT_EQ(described(look_through({})), V{});
}

TEST(LookThrough, SkipsTheOptionsOfWrappers) {
  check_wrappers({
      {{"env", "A=1", "rm", "x"}, {"cmd env: rm x"}},
      {{"env", "-u", "X", "ls"}, {"cmd env: ls"}},
      {{"env", "-i", "--", "ls"}, {"cmd env: ls"}},
      {{"nohup", "rm", "x"}, {"cmd nohup: rm x"}},
      {{"setsid", "-f", "make"}, {"cmd setsid: make"}},
      {{"builtin", "command", "ls"}, {"cmd builtin: command ls"}},
      {{"timeout", "-s", "KILL", "5", "rm", "x"}, {"cmd timeout: rm x"}},
      {{"timeout", "--kill-after=2", "5", "make"}, {"cmd timeout: make"}},
      {{"nice", "-n", "10", "make"}, {"cmd nice: make"}},
      {{"nice", "-n10", "make"}, {"cmd nice: make"}},
      {{"ionice", "-c3", "rm", "x"}, {"cmd ionice: rm x"}},
      {{"ionice", "-c", "2", "-n", "7", "rm", "x"}, {"cmd ionice: rm x"}},
      {{"stdbuf", "-oL", "cat"}, {"cmd stdbuf: cat"}},
      {{"stdbuf", "-o", "0", "cat"}, {"cmd stdbuf: cat"}},
      {{"time", "-p", "ls"}, {"cmd time: ls"}},
      {{"time", "-o", "t.txt", "make"}, {"cmd time: make"}},
      {{"command", "rm", "x"}, {"cmd command: rm x"}},
      {{"exec", "-a", "name", "rm", "x"}, {"cmd exec: rm x"}},
      {{"/usr/bin/sudo", "-u", "root", "ls"}, {"cmd sudo: ls"}},
      {{"sudo", "-uroot", "ls"}, {"cmd sudo: ls"}},
      {{"sudo", "-E", "VAR=1", "ls"}, {"cmd sudo: ls"}},
      {{"doas", "sh"}, {"cmd doas: sh"}},
      {{"busybox", "rm", "-rf", "x"}, {"cmd busybox: rm -rf x"}},
      {{"unshare", "-r", "rm", "x"}, {"cmd unshare: rm x"}},
      {{"chrt", "-i", "0", "rm", "x"}, {"cmd chrt: rm x"}},
      {{"taskset", "1", "ls"}, {"cmd taskset: ls"}},
      {{"taskset", "-c", "0", "ls"}, {"cmd taskset: ls"}},
      {{"flock", "/tmp/l", "make"}, {"cmd flock: make"}},
      {{"flock", "-w", "5", "/tmp/l", "make", "-j2"}, {"cmd flock: make -j2"}},
  });
}

TEST(LookThrough, XargsAppendsOrReplacesWhatItReads) {
  check_wrappers({
      {{"xargs", "rm"}, {"cmd xargs: rm …"}},
      {{"xargs"}, {"cmd xargs: echo …"}},
      {{"xargs", "-0", "rm", "-f"}, {"cmd xargs: rm -f …"}},
      {{"xargs", "-n1", "-P4", "gzip"}, {"cmd xargs: gzip …"}},
      {{"xargs", "-n", "1", "gzip"}, {"cmd xargs: gzip …"}},
      {{"xargs", "-I{}", "mv", "{}", "{}.bak"}, {"cmd xargs: mv … ….bak"}},
      {{"xargs", "-I", "%", "rm", "-rf", "%"}, {"cmd xargs: rm -rf …"}},
      {{"xargs", "-i", "cp", "{}", "out/"}, {"cmd xargs: cp … out/"}},
  });
}

TEST(LookThrough, FindExecStandsForWhatIsFoundUnderEachStartPoint) {
  check_wrappers({
      {{"find", ".", "-name", "x", "-exec", "rm", "{}", ";"}, {"cmd find -exec: rm ./*?"}},
      {{"find", "src", "lib", "-exec", "rm", "{}", "+"},
       {"cmd find -exec: rm src/*?", "cmd find -exec: rm lib/*?"}},
      {{"find", "-name", "x", "-execdir", "chmod", "644", "{}", "+"},
       {"cmd find -execdir: chmod 644 ./*?"}},
      {{"find", "/", "-ok", "rm", "{}", ";", "-exec", "ls", ";"},
       {"cmd find -ok: rm //*?", "cmd find -exec: ls"}},
      {{"find", ".", "-name", "x"}, {}},
  });
  std::vector<ShellWord> argv = argv_of({"find", ".", "-exec", "rm", "{}", "+"});
  LookThrough l = look_through(argv);
  ASSERT_EQ(l.commands.size(), 1u);
  EXPECT_TRUE(l.commands[0].argv[1].glob) << "`{}` stands for many names";
}

TEST(LookThrough, ShellsHandBackTheirCommandString) {
  check_wrappers({
      {{"bash", "-c", "rm x"}, {"script bash -c: rm x"}},
      {{"/bin/sh", "-ec", "ls"}, {"script sh -c: ls"}},
      {{"bash", "-o", "pipefail", "-c", "ls | wc"}, {"script bash -c: ls | wc"}},
      {{"zsh", "--norc", "-c", "ls"}, {"script zsh -c: ls"}},
      {{"bash", "-c"}, {"not-understood: `bash -c` without a command string"}},
      {{"bash"}, {"stdin"}},
      {{"sh", "-s"}, {"stdin"}},
      {{"bash", "-s", "arg"}, {"stdin"}},
      {{"bash", "-"}, {"stdin"}},
      {{"bash", "scripts/build.sh"}, {}},
      {{"su", "-c", "id", "bob"}, {"script su -c: id"}},
      {{"runuser", "-u", "bob", "--command", "id"}, {"script runuser -c: id"}},
      {{"script", "-c", "make test", "log.txt"}, {"script script -c: make test"}},
      {{"trap", "rm x", "EXIT"}, {"script trap: rm x"}},
      {{"watch", "-n", "1", "ls", "-la"}, {"script watch: ls -la"}},
      {{"flock", "/tmp/l", "-c", "make x"}, {"script flock -c: make x"}},
      {{"env", "-S", "rm -rf x"}, {"script env -S: rm -rf x"}},
      {{"env", "-Srm x"}, {"script env -S: rm x"}},
      {{"env", "--split-string=ls -l"}, {"script env -S: ls -l"}},
  });
}

TEST(LookThrough, SettingsThatRunOrLoadCode) {
  check_wrappers({
      {{"env", "PAGER=less -R", "git", "log"}, {"cmd env: git log", "script PAGER: less -R"}},
      {{"env", "LD_PRELOAD=/tmp/x.so", "ls"},
       {"not-understood: `LD_PRELOAD=` makes programs load code"}},
      {{"env", "-C", "/tmp", "ls"},
       {"not-understood: `env -C` changes directory in a way the guard does not follow; use "
        "cd"}},  // A pager that only shows text is allowed; any other command key is refused.
      {{"git", "-c", "core.pager=less", "log"}, {}},
      {{"git", "-c", "core.pager=rm -rf ~", "log"},
       {"not-understood: `git -c core.pager` makes git run or load a program"}},
      {{"git", "-c", "alias.x=!rm y", "x"},
       {"not-understood: `git -c alias.x` makes git run or load a program"}},
      {{"git", "-c", "alias.st=status", "st"}, {}},
      {{"git", "-c", "user.name=x", "commit"}, {}},
      {{"git", "-c", "core.hooksPath=/tmp/h", "commit"},
       {"not-understood: `git -c core.hooksPath` makes git run or load a program"}},
      {{"git", "-c", "core.editor", "commit"},
       {"not-understood: `git -c core.editor` makes git run or load a program"}},
      {{"git", "--config-env=core.pager=P", "log"},
       {"not-understood: `git --config-env` sets configuration from the environment"}},
      {{"parallel", "gzip", ":::", "a", "b"},
       {"script parallel: gzip 'a'", "script parallel: gzip 'b'"}},
      {{"parallel", "rm", "{}", ":::", "x"}, {"script parallel: rm 'x'"}},
      {{"parallel", "-j4"},
       {"not-understood: `parallel` without a command runs its input as commands"}},
      {{"rg", "--pre", "cat", "x"},
       {"not-understood: `rg --pre` runs a program on every file it searches"}},
      {{"rg", "--pre=cat", "x"},
       {"not-understood: `rg --pre` runs a program on every file it searches"}},
      {{"eval", "ls"}, {"not-understood: `eval` builds its command at run time"}},
      {{"."}, {"not-understood: `.` of a file whose name is known only at run time"}},
  });
  std::vector<ShellWord> argv{literal_word("source"), unknown_word()};
  EXPECT_EQ(described(look_through(argv)),
            V{"not-understood: `source` of a file whose name is known only at run time"});
}

TEST(VariableKind, NamesThatRunOrLoadCode) {
  struct WrapperCase {
    const char* name;
    SettingKind kind;
  } cases[] = {
      {"PAGER", SettingKind::kCommand},
      {"GIT_SSH_COMMAND", SettingKind::kCommand},
      {"PROMPT_COMMAND", SettingKind::kCommand},
      {"LESSOPEN", SettingKind::kCommand},
      {"LD_PRELOAD", SettingKind::kLoads},
      {"BASH_ENV", SettingKind::kLoads},
      {"NODE_OPTIONS", SettingKind::kLoads},
      {"GIT_CONFIG_GLOBAL", SettingKind::kLoads},
      {"GIT_CONFIG_PARAMETERS", SettingKind::kLoads},
      {"PATH", SettingKind::kData},
      {"HOME", SettingKind::kData},
      {"pager", SettingKind::kData},
  };
  for (const WrapperCase& c : cases) EXPECT_EQ(variable_kind(c.name), c.kind) << c.name;
}

TEST(GitConfigKind, KeysThatRunOrLoadCodeInAnyCase) {
  struct WrapperCase {
    const char* key;
    SettingKind kind;
  } cases[] = {
      {"core.pager", SettingKind::kCommand},
      {"CORE.SSHCOMMAND", SettingKind::kCommand},
      {"core.fsmonitor", SettingKind::kCommand},
      {"alias.st", SettingKind::kCommand},
      {"pager.log", SettingKind::kCommand},
      {"credential.helper", SettingKind::kCommand},
      {"core.hooksPath", SettingKind::kLoads},
      {"include.path", SettingKind::kLoads},
      {"url.https://x/.insteadOf", SettingKind::kLoads},
      {"remote.origin.url", SettingKind::kLoads},
      {"filter.lfs.smudge", SettingKind::kLoads},
      {"user.name", SettingKind::kData},
      {"color.ui", SettingKind::kData},
  };
  for (const WrapperCase& c : cases) EXPECT_EQ(git_config_kind(c.key), c.kind) << c.key;
}

TEST(CommandName, IsTheLastPathComponent) {
  struct WrapperCase {
    const char* word;
    const char* name;
  } cases[] = {{"rm", "rm"}, {"/usr/bin/rm", "rm"}, {"./x", "x"}, {"a/", ""}, {"", ""}};
  for (const WrapperCase& c : cases)
    EXPECT_EQ(command_name(literal_word(c.word)), c.name) << c.word;
}

TEST(IsShell, KnowsTheShells) {
  for (const char* s : {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "rbash"})
    EXPECT_TRUE(is_shell(s)) << s;
  for (const char* s : {"python", "bashful", "shx", "", "busybox"}) EXPECT_FALSE(is_shell(s)) << s;
}

}  // namespace
}  // namespace mecha::guard
