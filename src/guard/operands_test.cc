#include "guard/operands.h"

#include <gtest/gtest.h>

#include "guard/wrappers.h"

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;
using Flags = std::set<std::string>;

Command command(const V& words) {
  Command c;
  for (const std::string& w : words) c.argv.push_back(literal_word(w));
  c.name = command_name(c.argv[0]);
  return c;
}

// Operands as plain values, words shown.
struct Seen {
  Seen(V w = {}, V r = {}, Flags f = {}, std::string nu = "")
      : writes(std::move(w)), reads(std::move(r)), flags(std::move(f)), not_understood(nu) {}
  V writes;
  V reads;
  Flags flags;
  std::string not_understood;  // "" when understood
  bool operator==(const Seen&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Seen& s) {
  auto list = [&](const char* what, const auto& v) {
    os << what << " [";
    for (const auto& x : v) os << " '" << x << "'";
    os << " ] ";
  };
  list("writes", s.writes);
  list("reads", s.reads);
  list("flags", s.flags);
  return os << "not_understood '" << s.not_understood << "'";
}

Seen seen(const Operands& o) {
  Seen s;
  for (const ShellWord& w : o.writes) s.writes.push_back(w.shown());
  for (const ShellWord& w : o.reads) s.reads.push_back(w.shown());
  s.flags = o.flags;
  s.not_understood = o.not_understood.value_or("");
  return s;
}

struct OperandCase {
  V argv;
  Seen expected;
};

void check_operands(const std::vector<OperandCase>& cases) {
  for (const OperandCase& c : cases) {
    std::string line;
    for (const std::string& w : c.argv) line += "[" + w + "]";
    EXPECT_EQ(seen(operands_of(command(c.argv))), c.expected) << line;
  }
}

TEST(Operands, FileCommandsWriteTheirOperands) {
  check_operands({
      {{"rm", "-rf", "build"}, {{"build"}, {}, {"r", "f"}}},
      {{"rm", "--", "-x"}, {{"-x"}, {}, {}}},
      {{"mkdir", "-p", "a/b"}, {{"a/b"}, {}, {"p"}}},
      {{"mkdir", "-m", "755", "d"}, {{"d"}, {"755"}, {"m"}}},
      {{"touch", "f"}, {{"f"}, {}, {}}},
      {{"tee", "-a", "log"}, {{"log"}, {}, {"a"}}},
      {{"truncate", "-s", "0", "f"}, {{"f"}, {"0"}, {"s"}}},
      {{"chmod", "755", "x"}, {{"x"}, {}, {}}},
      {{"chmod", "-R", "u+w", "build"}, {{"build"}, {}, {"R"}}},
      {{"chmod", "--reference=r", "x"}, {{"x"}, {"r"}, {"reference"}}},
      {{"chown", "user:group", "f"}, {{"f"}, {}, {}}},
      {{"mv", "a", "b"}, {{"a", "b"}, {}, {}}},
      {{"gzip", "a.txt"}, {{"a.txt"}, {}, {}}},
      {{"gzip", "-c", "a.txt"}, {{}, {"a.txt"}, {"c"}}},
      {{"zstd", "-o", "out.zst", "in"}, {{"out.zst", "in"}, {}, {"o"}}},
  });
}

TEST(Operands, CopiesWriteTheLastOperandOrTheTarget) {
  check_operands({
      {{"cp", "a", "b"}, {{"b"}, {"a"}, {}}},
      {{"cp", "-r", "a", "b", "dir/"}, {{"dir/"}, {"a", "b"}, {"r"}}},
      {{"cp", "-t", "dir", "a", "b"}, {{"dir"}, {"a", "b"}, {"t"}}},
      {{"cp", "--target-directory=dir", "a"}, {{"dir"}, {"a"}, {"target-directory"}}},
      {{"cp", "a"}, {{}, {"a"}, {}}},
      {{"install", "-m", "755", "app", "/usr/local/bin/"},
       {{"/usr/local/bin/"}, {"755", "app"}, {"m"}}},
      {{"install", "-d", "out"}, {{"out"}, {}, {"d"}}},
      {{"ln", "-s", "target", "link"}, {{"link"}, {"target"}, {"s"}}},
      {{"ln", "-s", "target"}, {{"."}, {"target"}, {"s"}}},
      {{"rsync", "-a", "src/", "dst/"}, {{"dst/"}, {"src/"}, {"a"}}},
      {{"rsync", "-av", "src/", "host:dst"}, {{}, {"src/"}, {"a", "v"}}},
      {{"scp", "f", "host:/x"}, {{}, {"f"}, {}}},
      {{"uniq", "in", "out"}, {{"out"}, {"in"}, {}}},
      {{"split", "-l", "10", "big", "part_"}, {{"part_"}, {"10", "big"}, {"l"}}},
  });
}

TEST(Operands, OptionValuesThatAreFilesWritten) {
  check_operands({
      {{"sort", "-o", "out", "in"}, {{"out"}, {"in"}, {"o"}}},
      {{"sort", "-o/etc/x", "in"}, {{"/etc/x"}, {"in"}, {"o"}}},
      {{"sort", "--output=o", "in"}, {{"o"}, {"in"}, {"output"}}},
      {{"gcc", "-o", "app", "a.c"}, {{"app"}, {"a.c"}, {"o"}}},
      {{"gcc", "-I/usr/include", "-c", "a.c"}, {{}, {"/usr/include", "a.c"}, {"I", "c"}}},
      {{"curl", "-o", "f.json", "https://x"}, {{"f.json"}, {"https://x"}, {"o"}}},
      {{"curl", "-sSLo", "f", "https://x"}, {{"f"}, {"https://x"}, {"s", "S", "L", "o"}}},
      {{"curl", "--dump-header=h.txt", "https://x"}, {{"h.txt"}, {"https://x"}, {"dump-header"}}},
      {{"curl", "-d", "@data.json", "https://x"}, {{}, {"data.json", "https://x"}, {"d"}}},
      {{"wget", "-O", "out", "https://x"}, {{"out"}, {"https://x"}, {"O"}}},
      {{"wget", "--directory-prefix=dl", "https://x"},
       {{"dl"}, {"https://x"}, {"directory-prefix"}}},
      {{"unzip", "x.zip", "-d", "out"}, {{"out"}, {"x.zip"}, {"d"}}},
      {{"patch", "-o", "out.c", "a.c", "fix.diff"}, {{"out.c"}, {"a.c", "fix.diff"}, {"o"}}},
      {{"time", "-o", "t.txt", "make"}, {{"t.txt"}, {}, {"o"}}},
      {{"dd", "if=a", "of=b", "bs=1M"}, {{"b"}, {"a"}, {}}},
  });
}

TEST(Operands, TextIsNeverAPath) {
  check_operands({
      {{"echo", "/etc/passwd"}, {{}, {}, {}}},
      {{"printf", "%s\\n", "~/.ssh"}, {{}, {}, {}}},
      {{"grep", "-rn", "pat", "src"}, {{}, {"src"}, {"r", "n"}}},
      {{"grep", "-e", "pat", "f"}, {{}, {"f"}, {"e"}}},
      {{"grep", "--include=*.c", "x", "."}, {{}, {"*.c", "."}, {"include"}}},
      {{"rg", "-g", "*.rs", "fn", "src"}, {{}, {"*.rs", "src"}, {"g"}}},
      {{"jq", ".a", "f.json"}, {{}, {"f.json"}, {}}},
      {{"cat", "a", "-n", "b"}, {{}, {"a", "b"}, {"n"}}},
      {{"unknown-tool", "a", "--flag", "c"}, {{}, {"a", "c"}, {"flag"}}},
  });
}

TEST(Operands, WrappedCommandsAreNotTheWrappersReads) {
  check_operands({
      {{"timeout", "5", "rm", "x"}, {{}, {}, {}}},
      {{"nice", "-n", "3", "cat", "f"}, {{}, {}, {"n"}}},
      {{"bash", "-c", "cat /etc/shadow"}, {{}, {}, {"c"}}},
      {{"sudo", "cat", "f"}, {{}, {}, {}}},
  });
}

TEST(Operands, SedWritesInPlaceAndByItsProgram) {
  check_operands({
      {{"sed", "s/a/b/", "f"}, {{}, {"f"}, {}}},
      {{"sed", "-i", "s/a/b/", "f"}, {{"f"}, {}, {"i"}}},
      {{"sed", "-ni", "s/a/b/", "f"}, {{"f"}, {}, {"n", "i"}}},
      {{"sed", "-i.bak", "-e", "s/a/b/", "f"}, {{"f"}, {}, {"i", "e"}}},
      {{"sed", "--in-place=.bak", "s/a/b/", "f"}, {{"f"}, {}, {}}},
      {{"sed", "-n", "w out", "f"}, {{"out"}, {"f"}, {"n"}}},
      {{"sed", "s/x/y/w /dev/stdout", "f"}, {{}, {"f"}, {}}},
      {{"sed", "-f", "prog.sed", "f"}, {{}, {"prog.sed", "f"}, {"f"}}},
      {{"sed", "r header.txt", "f"}, {{}, {"header.txt", "f"}, {}}},
      {{"sed", "s/a/b/e", "f"},
       {{}, {}, {}, "a sed program that runs shell commands (the `e` command or flag)"}},
      {{"sed", "1e id", "f"},
       {{}, {}, {}, "a sed program that runs shell commands (the `e` command or flag)"}},
  });
  Command dynamic = command({"sed", "x", "f"});
  dynamic.argv[1] = unknown_word();
  EXPECT_EQ(seen(operands_of(dynamic)), (Seen{{}, {}, {}, "a sed program known only at run time"}));
}

TEST(Operands, AwkWritesByItsProgramAndRunsCommands) {
  check_operands({
      {{"awk", "{print $1}", "data.csv"}, {{}, {"data.csv"}, {}}},
      {{"awk", "{print > \"o.txt\"}", "in"}, {{"o.txt"}, {"in"}, {}}},
      {{"awk", "{printf \"x\" > \"/etc/x\"}", "in"}, {{"/etc/x"}, {"in"}, {}}},
      {{"awk", "$1 || $2", "f"}, {{}, {"f"}, {}}},
      {{"awk", "-v", "n=1", "{print n}", "f", "x=2"}, {{}, {"n=1", "f"}, {"v"}}},
      {{"awk", "-f", "prog.awk", "f"},
       {{},
        {"prog.awk", "f"},
        {"f"}}},  // Commands it runs are screened as scripts (option_commands_test.cc).
      {{"awk", "BEGIN{system(\"id\")}"}, {{}, {}, {}}},
      {{"gawk", "{print | \"sh\"}", "f"}, {{}, {"f"}, {}}},
  });
}

TEST(Operands, TarWritesTheArchiveOrWhatItExtracts) {  // Options that run a command are screened as
                                                       // scripts (option_commands_test.cc); here
  // they only must not be taken for archives or members.
  check_operands({
      {{"tar", "-czf", "out.tgz", "src"}, {{"out.tgz"}, {"src"}, {"c", "z", "f"}}},
      {{"tar", "czf", "out.tgz", "src"}, {{"out.tgz"}, {"src"}, {"c", "z", "f"}}},
      {{"tar", "-xzf", "in.tgz", "-C", "vendor"}, {{"vendor"}, {"in.tgz"}, {"x", "z", "f", "C"}}},
      {{"tar", "xf", "a.tar"}, {{"."}, {"a.tar"}, {"x", "f"}}},
      {{"tar", "--extract", "--file=a.tar", "--directory=/opt"}, {{"/opt"}, {"a.tar"}, {}}},
      {{"tar", "-tf", "a.tar"}, {{}, {"a.tar"}, {"t", "f"}}},
      {{"tar", "-cf", "-", "src"}, {{}, {"src"}, {"c", "f"}}},
      {{"tar", "--to-command=x", "-xf", "a"}, {{"."}, {"a"}, {"x", "f"}}},
      {{"tar", "-I", "zstd", "-cf", "a", "src"}, {{"a"}, {"src"}, {"c", "f"}}},
      // getopt: -I takes the rest of its cluster ("f"); zstd and a are members.
      {{"tar", "-xIf", "zstd", "a"}, {{".", "zstd", "a"}, {}, {"x", "I"}}},
      {{"tar", "-cf", "a", "--checkpoint-action=exec=id", "src"}, {{"a"}, {"src"}, {"c", "f"}}},
  });
}

TEST(Operands, FindDeletesItsStartPointsAndWritesItsLists) {
  check_operands({
      {{"find", ".", "-name", "x"}, {{}, {"."}, {"name"}}},
      {{"find", "-name", "x"}, {{}, {"."}, {"name"}}},
      {{"find", ".", "-name", "*.o", "-delete"}, {{"."}, {}, {"name", "delete"}}},
      {{"find", "src", "-fprint", "out"}, {{"out"}, {"src"}, {"fprint"}}},
      {{"find", "a", "b", "-fls", "/etc/x"}, {{"/etc/x"}, {"a", "b"}, {"fls"}}},
      {{"find", "/", "-exec", "rm", "{}", "+"}, {{}, {"/"}, {"exec"}}},
  });
}

TEST(Operands, GitWritesGlobalConfigAndCloneTargets) {
  check_operands({
      {{"git", "status"}, {{}, {"status"}, {}}},
      {{"git", "config", "--global", "user.name", "x"},
       {{"~/.gitconfig"}, {"config", "user.name", "x"}, {"global"}}},
      {{"git", "config", "--system", "a.b", "c"},
       {{"/etc/gitconfig"}, {"config", "a.b", "c"}, {"system"}}},
      {{"git", "-C", "sub", "log"}, {{}, {"sub", "sub", "log"}, {"C"}}},
      {{"git", "clone", "https://x/r.git", "dir"},
       {{"dir"}, {"clone", "https://x/r.git", "dir"}, {}}},
  });
}

TEST(Operands, PerlEditsInPlaceWithI) {
  check_operands({
      {{"perl", "-pi", "-e", "s/a/b/", "f"}, {{"f"}, {}, {}}},
      {{"perl", "-ne", "print", "f"}, {{}, {"f"}, {}}},
      {{"perl", "script.pl", "arg"}, {{}, {"arg"}, {}}},
      {{"perl", "-i.bak", "-pe", "s/a/b/", "/etc/hosts"}, {{"/etc/hosts"}, {}, {}}},
  });
}

}  // namespace
}  // namespace mecha::guard
