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
  Seen(V w = {}, V r = {}, Flags f = {}, std::string nu = "", V into = {})
      : writes(std::move(w)),
        reads(std::move(r)),
        flags(std::move(f)),
        not_understood(nu),
        into(std::move(into)) {}
  V writes;
  V reads;
  Flags flags;
  std::string not_understood;  // "" when understood
  V into;                      // directories written into
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
  list("into", s.into);
  return os << "not_understood '" << s.not_understood << "'";
}

Seen seen(const Operands& o) {
  Seen s;
  for (const ShellWord& w : o.writes) s.writes.push_back(w.shown());
  for (const ShellWord& w : o.reads) s.reads.push_back(w.shown());
  for (const ShellWord& w : o.write_dirs) s.into.push_back(w.shown());
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
      {{"mv", "a", "b"}, {{"a", "b", "b/a"}, {}, {}}},
      // chmod's and chattr's modes may look like options.
      {{"chmod", "-x", "run.sh"}, {{"run.sh"}, {}, {}}},
      {{"chmod", "-R", "-w", "d"}, {{"d"}, {}, {"R"}}},
      {{"chattr", "-i", "f"}, {{"f"}, {}, {}}},
      {{"chattr", "-R", "+i", "d"}, {{"d"}, {}, {"R"}}},
      {{"gzip", "a.txt"}, {{"a.txt"}, {}, {}}},
      {{"gzip", "-c", "a.txt"}, {{}, {"a.txt"}, {"c"}}},
      {{"zstd", "-o", "out.zst", "in"}, {{"out.zst", "in"}, {}, {"o"}}},
  });
}

TEST(Operands, CopiesWriteTheLastOperandOrTheTarget) {
  check_operands({
      // A destination that is a folder receives each source by its name.
      {{"cp", "a", "b"}, {{"b", "b/a"}, {"a"}, {}}},
      {{"cp", "-r", "a", "x/b", "dir/"}, {{"dir/", "dir/a", "dir/b"}, {"a", "x/b"}, {"r"}}},
      {{"cp", "-t", "dir", "a", "b"}, {{"dir", "dir/a", "dir/b"}, {"a", "b"}, {"t"}}},
      {{"cp", "--target-directory=dir", "a"}, {{"dir", "dir/a"}, {"a"}, {"target-directory"}}},
      {{"cp", "a"}, {{}, {"a"}, {}}},
      {{"cp", "-r", "/tmp/hooks/", ".git"}, {{".git", ".git/hooks"}, {"/tmp/hooks/"}, {"r"}}},
      // A folder's contents land under names of their own.
      {{"cp", "-r", "src/.", "dst"}, {{"dst"}, {"src/."}, {"r"}, "", {"dst"}}},
      {{"install", "-m", "755", "app", "/usr/local/bin/"},
       {{"/usr/local/bin/", "/usr/local/bin/app"}, {"755", "app"}, {"m"}}},
      {{"install", "-d", "out"}, {{"out"}, {}, {"d"}}},
      {{"ln", "-s", "target", "link"}, {{"link", "link/target"}, {"target"}, {"s"}}},
      {{"ln", "-s", "/x/target"}, {{"./target"}, {"/x/target"}, {"s"}}},
      {{"rsync", "-a", "src/", "dst/"}, {{"dst/"}, {"src/"}, {"a"}, "", {"dst/"}}},
      {{"rsync", "-a", "src", "dst/"}, {{"dst/", "dst/src"}, {"src"}, {"a"}}},
      {{"rsync", "-av", "src/", "host:dst"}, {{}, {"src/"}, {"a", "v"}}},
      {{"scp", "f", "host:/x"}, {{}, {"f"}, {}}},
      // A copy from another host writes its local destination.
      {{"scp", "host:/x/hooks", ".git/"}, {{".git/", ".git/hooks"}, {}, {}}},
      {{"rsync", "-a", "host:/x/", "out"}, {{"out"}, {}, {"a"}, "", {"out"}}},
      {{"rsync", "-an", "host:/x/", "out"}, {{}, {"out"}, {"a", "n"}}},
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
      {{"unzip", "x.zip", "-d", "out"}, {{}, {"x.zip"}, {"d"}, "", {"out"}}},
      {{"patch", "-o", "out.c", "a.c", "fix.diff"}, {{"out.c"}, {"a.c", "fix.diff"}, {"o"}}},
      {{"time", "-o", "t.txt", "make"}, {{"t.txt"}, {}, {"o"}}},
      {{"dd", "if=a", "of=b", "bs=1M"}, {{"b"}, {"a"}, {}}},
  });
}

// Issue 45: tools' own output options, per family. A file written is a write; a directory
// written into (an output directory, an install prefix, where a build runs) is `into`.
TEST(Operands, OutputOptionsOfBuildToolsAndInstallers) {
  check_operands({
      {{"go", "build", "-o", "bin/app", "./cmd"}, {{"bin/app"}, {"build", "./cmd"}, {"o"}}},
      {{"go", "build", "-o=bin/app", "."}, {{"bin/app"}, {"build", "."}, {"o"}}},
      {{"go", "test", "-coverprofile=c.out", "-race", "./..."},
       {{"c.out"}, {"test", "./..."}, {"coverprofile", "race"}}},
      {{"go", "-C", "sub", "build"}, {{}, {"build"}, {"C"}, "", {"sub"}}},
      {{"cargo", "build", "--target-dir", "t"}, {{}, {"build"}, {"target-dir"}, "", {"t"}}},
      {{"pip", "install", "-t", "lib", "x"}, {{}, {"install", "x"}, {"t"}, "", {"lib"}}},
      {{"pip", "install", "--target=lib", "x"}, {{}, {"install", "x"}, {"target"}, "", {"lib"}}},
      {{"pip", "install", "-r", "req.txt"}, {{}, {"req.txt", "install"}, {"r"}}},
      {{"python3", "-m", "pip", "install", "--prefix", "p", "x"},
       {{}, {"install", "x"}, {"prefix"}, "", {"p"}}},
      {{"npm", "install", "--prefix", "web"}, {{}, {"install"}, {"prefix"}, "", {"web"}}},
      {{"yarn", "--cwd", "web", "add", "x"}, {{}, {"add", "x"}, {"cwd"}, "", {"web"}}},
      {{"gcc", "-MD", "-MF", "a.d", "-c", "a.c"}, {{"a.d"}, {"a.c"}, {"MD", "MF", "c"}}},
      {{"cc", "a.c", "-oapp"}, {{"app"}, {"a.c"}, {"o"}}},
      {{"make", "-C", "build", "install", "DESTDIR=stage"},
       {{}, {"install"}, {"C"}, "", {"build", "stage"}}},
      {{"make", "--directory=sub"}, {{}, {}, {"directory"}, "", {"sub"}}},
      {{"ninja", "-C", "build"}, {{}, {}, {"C"}, "", {"build"}}},
      {{"cmake", "-S", ".", "-B", "build"}, {{}, {"."}, {"S", "B"}, "", {"build"}}},
      {{"cmake", "--build", "build", "-j", "2"}, {{}, {"2"}, {"build", "j"}, "", {"build"}}},
      {{"rustc", "-o", "app", "main.rs"}, {{"app"}, {"main.rs"}, {"o"}}},
      {{"rustc", "--out-dir", "target", "main.rs"}, {{}, {"main.rs"}, {"out-dir"}, "", {"target"}}},
      {{"javac", "-encoding", "UTF-8", "-d", "out", "Main.java"},
       {{}, {"UTF-8", "Main.java"}, {"encoding", "d"}, "", {"out"}}},
      {{"tsc", "--outDir", "dist"}, {{}, {}, {"outDir"}, "", {"dist"}}},
      {{"esbuild", "app.ts", "--outfile=dist/app.js"}, {{"dist/app.js"}, {"app.ts"}, {"outfile"}}},
      {{"sphinx-build", "docs", "build/html"}, {{}, {"docs"}, {}, "", {"build/html"}}},
  });
}

TEST(Operands, ConvertersAndInPlaceEditorsWriteTheirOutputs) {
  check_operands({
      {{"zip", "-r", "out.zip", "src"}, {{"out.zip"}, {"src"}, {"r"}}},
      {{"objcopy", "-O", "binary", "a.elf", "a.bin"}, {{"a.bin"}, {"binary", "a.elf"}, {"O"}}},
      {{"objcopy", "--strip-debug", "a.o"}, {{"a.o"}, {}, {"strip-debug"}}},
      {{"strip", "a.out"}, {{"a.out"}, {}, {}}},
      {{"strip", "-o", "small", "a.out"}, {{"small"}, {"a.out"}, {"o"}}},
      {{"xxd", "-r", "x.hex", "x.bin"}, {{"x.bin"}, {"x.hex"}, {"r"}}},
      {{"iconv", "-f", "utf8", "-t", "ascii", "x", "-o", "y"},
       {{"y"}, {"utf8", "ascii", "x"}, {"f", "t", "o"}}},
      {{"openssl", "enc", "-d", "-in", "x", "-out", "y"},
       {{"y"}, {"x", "enc"}, {"d", "in", "out"}}},
      {{"gpg", "-o", "out", "-d", "x.gpg"}, {{"out"}, {"x.gpg"}, {"o", "d"}}},
      {{"pandoc", "a.md", "-o", "a.html"}, {{"a.html"}, {"a.md"}, {"o"}}},
      {{"mktemp", "-d"}, {{}, {}, {"d"}}},
      {{"mktemp", "-p", "build"}, {{}, {}, {"p"}, "", {"build"}}},
      {{"mktemp", "out.XXXX"}, {{"out.XXXX"}, {}, {}}},
      {{"dos2unix", "run.sh"}, {{"run.sh"}, {}, {}}},
      {{"clang-format", "-i", "a.cc"}, {{"a.cc"}, {}, {"i"}}},
      {{"clang-format", "-style=file", "a.cc"}, {{}, {"file", "a.cc"}, {"style"}}},
      {{"gofmt", "-l", "."}, {{}, {"."}, {"l"}}},
      {{"gofmt", "-w", "."}, {{"."}, {}, {"w"}}},
      {{"yq", "-i", ".a=1", "c.yaml"}, {{"c.yaml"}, {}, {"i"}}},
      {{"black", "src"}, {{"src"}, {}, {}}},
      {{"black", "--check", "src"}, {{}, {"src"}, {"check"}}},
      {{"gzip", "-t", "a.gz"}, {{}, {"a.gz"}, {"t"}}},
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
      // Variables' values are read as they may name files (`getline < f`).
      {{"awk", "-v", "n=1", "{print n}", "f", "x=2"}, {{}, {"1", "f", "2"}, {"v"}}},
      {{"awk", "-v", "f=.git/hooks/x", "BEGIN{print 1 > f}"},
       {{".git/hooks/x"}, {".git/hooks/x"}, {"v"}}},
      {{"awk", "{print > f}", "f=out.txt", "in"}, {{"out.txt"}, {"out.txt", "in"}, {}}},
      {{"awk", "{print > $1\".txt\"}", "in"}, {{"….txt"}, {"in"}, {}}},
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
      {{"tar", "-xzf", "in.tgz", "-C", "vendor"},
       {{}, {"in.tgz"}, {"x", "z", "f", "C"}, "", {"vendor"}}},
      {{"tar", "xf", "a.tar"}, {{}, {"a.tar"}, {"x", "f"}, "", {"."}}},
      {{"tar", "--extract", "--file=a.tar", "--directory=/opt"}, {{}, {"a.tar"}, {}, "", {"/opt"}}},
      {{"tar", "-tf", "a.tar"}, {{}, {"a.tar"}, {"t", "f"}}},
      {{"tar", "-cf", "-", "src"}, {{}, {"src"}, {"c", "f"}}},
      {{"tar", "--to-command=x", "-xf", "a"}, {{}, {"a"}, {"x", "f"}, "", {"."}}},
      {{"tar", "-I", "zstd", "-cf", "a", "src"}, {{"a"}, {"src"}, {"c", "f"}}},
      // getopt: -I takes the rest of its cluster ("f"); zstd and a are members.
      {{"tar", "-xIf", "zstd", "a"}, {{"zstd", "a"}, {}, {"x", "I"}, "", {"."}}},
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
