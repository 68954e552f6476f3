#include "guard/archives.h"

#include <gtest/gtest.h>

#include "guard/wrappers.h"

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

// What an archiver writes, writes into and reads, words shown.
struct Seen {
  V writes;
  V into;
  V reads;
  bool operator==(const Seen&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Seen& s) {
  auto list = [&](const char* what, const V& v) {
    os << what << " [";
    for (const auto& x : v) os << " '" << x << "'";
    os << " ] ";
  };
  list("writes", s.writes);
  list("into", s.into);
  list("reads", s.reads);
  return os;
}

Seen seen(const V& words) {
  Command c;
  for (const std::string& w : words) c.argv.push_back(literal_word(w));
  c.name = command_name(c.argv[0]);
  Operands o;
  EXPECT_TRUE(archive_operands(c, o)) << words[0];
  Seen s;
  for (const ShellWord& w : o.writes) s.writes.push_back(w.shown());
  for (const ShellWord& w : o.write_dirs) s.into.push_back(w.shown());
  for (const ShellWord& w : o.reads) s.reads.push_back(w.shown());
  return s;
}

struct Case {
  V argv;
  Seen expected;
};

void check(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::string line;
    for (const std::string& w : c.argv) line += "[" + w + "]";
    EXPECT_EQ(seen(c.argv), c.expected) << line;
  }
}

TEST(Archives, TarExtractsIntoItsDirectoryAndRenamesWhereItsTransformPoints) {
  check({
      {{"tar", "-xf", "a.tar"}, {{}, {"."}, {"a.tar"}}},
      {{"tar", "-C", ".git", "-xf", "a.tar"}, {{}, {".git"}, {"a.tar"}}},
      {{"tar", "-xf", "a.tar", "--directory", "out", "src/x"}, {{"out/src/x"}, {"out"}, {"a.tar"}}},
      {{"tar", "--one-top-level=.claude", "-xf", "a.tar"}, {{}, {".", ".claude"}, {"a.tar"}}},
      {{"tar", "-C", "out", "-xf", "a.tar", "--one-top-level=v"},
       {{}, {"out", "out/v"}, {"a.tar"}}},
      {{"tar", "-xf", "a.tar", "--transform", "s,^,.git/hooks/,"},
       {{".git/hooks/…"}, {"."}, {"a.tar"}}},
      {{"tar", "-xf", "a.tar", "--xform=s/x/y/;s|^|lib/|"}, {{"y…", "lib/…"}, {"."}, {"a.tar"}}},
      // A regex anchored at the end only puts its replacement at the end of the name.
      {{"tar", "-xf", "a.tar", "--transform=s/\\.cc$/.c/"}, {{"….c…"}, {"."}, {"a.tar"}}},
      {{"tar", "-xf", "a.tar", "--transform=s/a/&-\\1/"}, {{"…-……"}, {"."}, {"a.tar"}}},
      {{"bsdtar", "-xf", "a.tar", "-s", ",^,.git/hooks/,"}, {{".git/hooks/…"}, {"."}, {"a.tar"}}},
      // Making or listing an archive writes only the archive.
      {{"tar", "-C", ".git", "-czf", "/tmp/g.tgz", "."}, {{"/tmp/g.tgz"}, {}, {".git", ".git/."}}},
      {{"tar", "-tf", "a.tar"}, {{}, {}, {"a.tar"}}},
  });
}

TEST(Archives, UnzipSevenZipCpioAndArWriteIntoTheirTargets) {
  check({
      {{"unzip", "a.zip"}, {{}, {"."}, {"a.zip"}}},
      {{"unzip", "-o", "a.zip", "-d", ".claude"}, {{}, {".claude"}, {"a.zip"}}},
      {{"unzip", "-q", "a.zip", "-d.mecha"}, {{}, {".mecha"}, {"a.zip"}}},
      {{"unzip", "a.zip", ".git/hooks/*", "-x", "skip"}, {{".git/hooks/*"}, {"."}, {"a.zip"}}},
      {{"unzip", "a.zip", "m", "-d", "out"}, {{"out/m"}, {"out"}, {"a.zip"}}},
      {{"unzip", "-l", "a.zip"}, {{}, {}, {"a.zip"}}},
      {{"unzip", "-p", "a.zip", "f"}, {{}, {}, {"a.zip"}}},
      {{"7z", "x", "a.7z", "-o.git/hooks", "-y"}, {{}, {".git/hooks"}, {"a.7z"}}},
      {{"7za", "e", "a.zip"}, {{}, {"."}, {"a.zip"}}},
      {{"7z", "x", "a.7z", "-oout", "f"}, {{"out/f"}, {"out"}, {"a.7z"}}},
      {{"7z", "a", "out.7z", "src"}, {{"out.7z"}, {}, {"src"}}},
      {{"7z", "l", "a.7z"}, {{}, {}, {"a.7z"}}},
      {{"7z", "x", "a.7z", "-so"}, {{}, {}, {"a.7z"}}},
      {{"cpio", "-idm", "-D", ".git/hooks"}, {{}, {".git/hooks"}, {}}},
      {{"cpio", "-i", "--directory=out", "m"}, {{"out/m"}, {"out"}, {}}},
      {{"cpio", "-id"}, {{}, {"."}, {}}},
      {{"cpio", "-it"}, {{}, {}, {}}},
      {{"cpio", "-pdm", "dest"}, {{}, {"dest"}, {}}},
      {{"cpio", "-o", "-O", "out.cpio"}, {{"out.cpio"}, {}, {}}},
      {{"cpio", "-i", "-F", "in.cpio"}, {{}, {"."}, {"in.cpio"}}},
      {{"ar", "rcs", "lib.a", "a.o", "b.o"}, {{"lib.a"}, {}, {"a.o", "b.o"}}},
      {{"ar", "x", "lib.a"}, {{}, {"."}, {"lib.a"}}},
      {{"ar", "x", "--output=out", "lib.a", "a.o"}, {{"out/a.o"}, {"out"}, {"lib.a"}}},
      {{"ar", "-t", "lib.a"}, {{}, {}, {"lib.a"}}},
      {{"ar", "rb", "pos.o", "lib.a", "a.o"}, {{"lib.a"}, {}, {"a.o"}}},
  });
}

TEST(Archives, OtherCommandsAreNotArchivers) {
  Command c;
  c.argv = {literal_word("zip"), literal_word("a.zip"), literal_word("f")};
  c.name = "zip";
  Operands o;
  EXPECT_FALSE(archive_operands(c, o));
  EXPECT_TRUE(o.writes.empty() && o.reads.empty() && o.write_dirs.empty());
}

}  // namespace
}  // namespace mecha::guard
