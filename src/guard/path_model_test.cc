#include "guard/path_model.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

const std::string U(1, kUnknown);
const std::string H(1, kHome);
const std::string kTree = "/work/tree";

Places places() {
  Places p;
  p.work_tree = kTree;
  p.home = "/home/user";
  p.writable = {"/tmp", "/dev/null"};
  p.protected_ = {".git/hooks", ".mecha"};
  p.secrets = {"~/.ssh", "~/.bashrc", "/etc/shadow", "/proc/*/environ", "/root"};
  return p;
}

ShellWord word(std::string text, bool glob = false) {
  ShellWord w = literal_word(std::move(text));
  w.glob = glob;
  if (w.text.find(kUnknown) != std::string::npos) w.dynamic = true;
  return w;
}

TEST(Normalise, CollapsesSlashesDotsAndDotDots) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"/a/../b", "/b"},
      {"//a//b/", "/a/b"},
      {"/", "/"},
      {"/..", "/"},
      {"/a/./b/.", "/a/b"},
      {"/a/b/../../..", "/"},
      {"", "/"},
      {"a/b", "/a/b"},
      {"/work/tree/../tree-evil", "/work/tree-evil"},
      {"/a/.../b", "/a/.../b"},
  };
  for (const Case& c : cases) EXPECT_EQ(normalise(c.in), c.out) << c.in;
}

TEST(Within, ComparesWholeComponents) {
  struct Case {
    const char* path;
    const char* base;
    bool inside;
  } cases[] = {
      {"/work/tree", "/work/tree", true},
      {"/work/tree/a", "/work/tree", true},
      {"/work/tree-evil", "/work/tree", false},
      {"/work/treex/a", "/work/tree", false},
      {"/work", "/work/tree", false},
      {"/anything", "/", true},
      {"/", "/", true},
      {"/tmp", "/tmp/x", false},
  };
  for (const Case& c : cases)
    EXPECT_EQ(within(c.path, c.base), c.inside) << c.path << " in " << c.base;
}

// What a case checks of a Resolved; the protected part it names is checked apart.
struct Expected {
  Place place = Place::kUnknown;
  std::string path;
  bool secret = false;
  bool protected_ = false;
};

struct ResolveCase {
  ShellWord word;
  std::string cwd;
  Expected expected;
};

void check_resolves(const std::vector<ResolveCase>& cases, const Places& p = places()) {
  for (const ResolveCase& c : cases) {
    Resolved r = resolve_path(c.word, c.cwd, p);
    SCOPED_TRACE(c.word.shown() + " from '" + c.cwd + "'");
    EXPECT_EQ(r.place, c.expected.place);
    EXPECT_EQ(r.path, c.expected.path);
    EXPECT_EQ(r.secret, c.expected.secret);
    EXPECT_EQ(r.protected_, c.expected.protected_);
  }
}

TEST(ResolvePath, PlacesLiteralPaths) {
  check_resolves({
      {word("src/a.c"), kTree, {Place::kInside, "/work/tree/src/a.c"}},
      {word("./src/../b"), kTree, {Place::kInside, "/work/tree/b"}},
      {word("."), kTree, {Place::kTree, "/work/tree"}},
      {word("/work/tree/"), "", {Place::kTree, "/work/tree"}},
      {word(".."), kTree, {Place::kAncestor, "/work"}},
      {word("/"), kTree, {Place::kAncestor, "/"}},
      {word("a"), "/work/tree/src", {Place::kInside, "/work/tree/src/a"}},
      {word("../.."), "/work/tree/src", {Place::kAncestor, "/work"}},
      {word("/tmp/x"), kTree, {Place::kWritable, "/tmp/x"}},
      {word("/dev/null"), kTree, {Place::kWritable, "/dev/null"}},
      {word("/etc/passwd"), kTree, {Place::kOutside, "/etc/passwd"}},
      {word("/work/tree-evil/x"), kTree, {Place::kOutside, "/work/tree-evil/x"}},
      {word("/work/tree/../tree-evil"), kTree, {Place::kOutside, "/work/tree-evil"}},
      {word("x"), "/etc", {Place::kOutside, "/etc/x"}},
      {word("a"), "", {Place::kUnknown, ""}},
      {word("/etc/x"), "", {Place::kOutside, "/etc/x"}},
  });
}

TEST(ResolvePath, MarksSecretsAndProtectedParts) {
  check_resolves({
      {word("/etc/shadow"), kTree, {Place::kOutside, "/etc/shadow", true}},
      {word(H + "/.ssh/id_rsa"), kTree, {Place::kOutside, "/home/user/.ssh/id_rsa", true}},
      {word(H + "/.bashrc"), kTree, {Place::kOutside, "/home/user/.bashrc", true}},
      {word(H), kTree, {Place::kOutside, "/home/user", false}},
      {word(H + "/.sshx"), kTree, {Place::kOutside, "/home/user/.sshx", false}},
      {word("/proc/123/environ"), kTree, {Place::kOutside, "/proc/123/environ", true}},
      {word("/proc/self/status"), kTree, {Place::kOutside, "/proc/self/status", false}},
      {word("/root/.profile"), kTree, {Place::kOutside, "/root/.profile", true}},
      {word("/srv/app/.env"), kTree, {Place::kOutside, "/srv/app/.env", true}},
      {word("/srv/app/.env.local"), kTree, {Place::kOutside, "/srv/app/.env.local", true}},
      {word(".env"), kTree, {Place::kInside, "/work/tree/.env", false}},
      {word(".git/hooks/pre-commit"),
       kTree,
       {Place::kInside, "/work/tree/.git/hooks/pre-commit", false, true}},
      {word("hooks/x"),
       "/work/tree/.git",
       {Place::kInside, "/work/tree/.git/hooks/x", false, true}},
      {word(".mecha"), kTree, {Place::kInside, "/work/tree/.mecha", false, true}},
      {word(".git/config"), kTree, {Place::kInside, "/work/tree/.git/config", false, false}},
  });
}

TEST(ResolvePath, RootsHomeIsNotASecretToRoot) {
  Places p = places();
  p.home = "/root";
  check_resolves({{word("/root/notes"), kTree, {Place::kOutside, "/root/notes", false}},
                  {word(H + "/.ssh/id_rsa"), kTree, {Place::kOutside, "/root/.ssh/id_rsa", true}}},
                 p);
}

TEST(ResolvePath, GlobsStandForWhatTheyMayMatch) {
  check_resolves({
      {word("*", true), kTree, {Place::kTree, "/work/tree"}},
      {word("*.c", true), kTree, {Place::kInside, "/work/tree"}},
      {word("src/*.c", true), kTree, {Place::kInside, "/work/tree/src"}},
      {word(".*", true),
       kTree,
       {Place::kAncestor,
        "/work"}},  // A glob in a directory above the tree matches its siblings: outside.
      {word("/e?c/hosts", true), kTree, {Place::kOutside, "/"}},
      {word("/etc/*", true), kTree, {Place::kOutside, "/etc", true}},  // may be /etc/shadow
      {word(H + "/.ss*/id_rsa", true), kTree, {Place::kOutside, "/home/user", true}},
      {word(H + "/.b*", true), kTree, {Place::kOutside, "/home/user", true}},
      {word("/proc/*/environ", true), kTree, {Place::kOutside, "/proc", true}},
      {word("/tmp/*.log", true), kTree, {Place::kWritable, "/tmp"}},
  });
}

TEST(ResolvePath, UnknownPartsKeepOnlyTheDirectoryBeforeThem) {
  check_resolves({
      {word(U), kTree, {Place::kUnknown, ""}},
      {word(H + U), kTree, {Place::kUnknown, ""}},
      {word("build/" + U), kTree, {Place::kUnknown, "/work/tree/build"}},
      {word("pre" + U), kTree, {Place::kUnknown, "/work/tree"}},
      {word("/etc/" + U), kTree, {Place::kOutside, "/etc"}},
      {word("/tmp/" + U), kTree, {Place::kUnknown, "/tmp"}},
      {word(H + "/.ssh/" + U), kTree, {Place::kOutside, "/home/user/.ssh", true}},
  });
}

// Regression (issue 45): a glob that may name a protected part was placed by the folder
// before its first glob character alone, so `.git/hoo*/pre-commit` was only `.git`.
TEST(ResolvePath, GlobsAndUnknownPartsAreMatchedAgainstProtectedParts) {
  struct Case {
    ShellWord word;
    bool protected_;
    bool holds_protected;
    std::string part;
  } cases[] = {
      {word(".git/hoo*/pre-commit", true), true, false, ".git/hooks"},
      {word(".g?t/hooks/x", true), true, false, ".git/hooks"},
      {word(".git/[h]ooks/x", true), true, false, ".git/hooks"},
      {word(".git/*/pre-commit", true), true, false, ".git/hooks"},
      {word(".m*", true), true, false, ".mecha"},
      {word(".m*/config.toml", true), true, false, ".mecha"},
      {word("**/pre-commit", true), false, false, ""},  // globstar does not enter .git
      {word(".g*", true), false, true, ".git/hooks"},   // may be .git, which holds hooks
      {word("*", true), false, false, ""},              // bash's * skips .mecha and .git
      {word("*/hooks/x", true), false, false, ""},
      {word("src/*.c", true), false, false, ""},
      {word(".git/*.sample", true), false, false, ""},
      {word(".git/ho" + U + "/pre-commit"), true, false, ".git/hooks"},
      {word(".git/" + U), true, false, ".git/hooks"},
      {word(".me" + U), true, false, ".mecha"},
      {word("." + U), true, false, ".git/hooks"},
      {word("./" + U), false, false, ""},  // anything at all: left to the sandbox
      {word(".." + U), false, false, ""},
      {word("build/" + U), false, false, ""},
      {word("out_" + U + ".txt"), false, false, ""},
      {word(".git"), false, true, ".git/hooks"},
      {word("."), false, false, ""},  // the tree itself holds everything
      {word(".git/hooks"), true, false, ".git/hooks"},
  };
  for (const Case& c : cases) {
    Resolved r = resolve_path(c.word, kTree, places());
    SCOPED_TRACE(c.word.shown());
    EXPECT_EQ(r.protected_, c.protected_);
    EXPECT_EQ(r.holds_protected, c.holds_protected);
    EXPECT_EQ(r.protected_part, c.part);
  }
  // With dotglob, `*` matches .git and .mecha too.
  Resolved dot = resolve_path(word("*/hooks/x", true), kTree, places(), false, /*dotglob=*/true);
  EXPECT_TRUE(dot.protected_);
  EXPECT_EQ(dot.protected_part, ".git/hooks");
}

TEST(ResolveDirectory, FollowsKnownCdTargetsOnly) {
  Places p = places();
  struct Case {
    ShellWord word;
    std::string cwd;
    std::string dir;
  } cases[] = {
      {word("src"), kTree, "/work/tree/src"},
      {word(".."), "/work/tree/src", "/work/tree"},
      {word(H), kTree, "/home/user"},
      {word(H + "/.ssh"), kTree, "/home/user/.ssh"},
      {word("/etc/../tmp"), kTree, "/tmp"},
      {word("/etc"), "", "/etc"},
      {word("src"), "", ""},
      {word("build/" + U), kTree, ""},
      {word("sr*", true), kTree, ""},
      {word(""), kTree, ""},
  };
  for (const Case& c : cases)
    EXPECT_EQ(resolve_directory(c.word, c.cwd, p), c.dir) << c.word.shown() << " from " << c.cwd;
}

TEST(SecretUnder, NamesASecretLocationBelowAFolder) {
  struct Case {
    const char* path;
    const char* secret;
  } cases[] = {
      {"/home/user", "~/.ssh"},
      {"/etc", "/etc/shadow"},
      {"/", "~/.ssh"},
      {"/proc", "/proc/*/environ"},
      {"/home", "~/.ssh"},
      {"/home/user/.ssh", ""},  // the secret itself: a plain read names it
      {"/home/user/project", ""},
      {"/work/tree", ""},
      {"/etc/ssh", ""},
      {"/usr", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(secret_under(c.path, places()), c.secret) << c.path;
  // Another user's home lies under /home even with no secret of ours there.
  Places elsewhere = places();
  elsewhere.home = "/srv/me";
  elsewhere.secrets = {};
  EXPECT_EQ(secret_under("/home", elsewhere), "/home/* (other users' homes)");
  EXPECT_EQ(secret_under("/srv", elsewhere), "");
}

}  // namespace
}  // namespace mecha::guard
