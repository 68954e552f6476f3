#include "agent/file_standing.h"

#include <gtest/gtest.h>

#include "agent/deny_masks.h"
#include "agent/permissions.h"
#include "store/session_store.h"
#include "store/testing/temp_dir.h"

namespace mecha::agent {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;

class FileStandingTest : public ::testing::Test {
 protected:
  FileStandingTest() {
    dir_.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    dir_.write("repo/app/CLAUDE.md", "rules\n");
    dir_.write("repo/CLAUDE.md", "root rules\n");
    dir_.write("home/.claude/CLAUDE.md", "mine\n");
  }
  fs::path tree() const { return fs::canonical(dir_.path()) / "repo" / "app"; }
  FileStanding::Sources sources() const {
    FileStanding::Sources s;
    s.work_tree = tree();
    return s;
  }
  config::TrustStore trust_store() const {
    auto store = config::TrustStore::load(dir_.path() / "trusted");
    EXPECT_TRUE(store.ok()) << store.message();
    return *store;
  }

  TempDir dir_;
};

// The project is the repository holding the tree: its files are untrusted (the tree's and
// an ancestor's alike), the user's elsewhere are theirs, and a trust record counts for the
// exact content only.
TEST_F(FileStandingTest, TheProjectsFilesAreUntrustedUntilTrustedByContent) {
  const fs::path mine = fs::canonical(dir_.path()) / "home/.claude/CLAUDE.md";
  const fs::path app = tree() / "CLAUDE.md";
  const fs::path root = tree().parent_path() / "CLAUDE.md";
  {
    FileStanding none(sources());
    EXPECT_EQ(none.project_root(), tree().parent_path());
    EXPECT_EQ(none.of(mine, "mine\n"), Standing::kOwn);
    EXPECT_EQ(none.of(app, "rules\n"), Standing::kUntrusted);
    EXPECT_EQ(none.of(root, "root rules\n"), Standing::kUntrusted);
  }
  config::TrustStore store = trust_store();
  ASSERT_TRUE(store.trust(app.string(), config::identify(app, "rules\n").sha256).ok());
  FileStanding::Sources s = sources();
  s.trust = store;
  FileStanding trusted(std::move(s));
  EXPECT_EQ(trusted.of(app, "rules\n"), Standing::kTrusted);
  EXPECT_EQ(trusted.of(app, "rules!\n"), Standing::kUntrusted);  // changed since
  EXPECT_EQ(trusted.of(root, "rules\n"), Standing::kUntrusted);  // another path
}

// Tainted wins over trusted; a store that cannot answer counts as tainted.
TEST_F(FileStandingTest, ATaintedFileIsTaintedWhateverItsTrust) {
  const fs::path db = dir_.path() / "sessions.db";
  ASSERT_TRUE(store::SessionStore::open(db).ok());
  auto taint = store::FileTaint::open(db);
  ASSERT_TRUE(taint.ok()) << taint.message();
  ASSERT_TRUE((*taint)->mark(tree(), {"CLAUDE.md"}, "s1").ok());
  const fs::path app = tree() / "CLAUDE.md";
  config::TrustStore store = trust_store();
  ASSERT_TRUE(store.trust(app.string(), config::identify(app, "rules\n").sha256).ok());
  FileStanding::Sources s = sources();
  s.trust = store;
  s.taint = std::move(*taint);
  FileStanding standing(std::move(s));
  EXPECT_EQ(standing.of(app, "rules\n"), Standing::kTainted);
  EXPECT_FALSE(readable(Standing::kTainted));

  FileStanding::Sources broken = sources();
  broken.taint = store::FileTaint::open_on_first_use(dir_.path() / "no-such.db");
  EXPECT_EQ(FileStanding(std::move(broken)).of(app, "rules\n"), Standing::kTainted);
}

// A Read deny rule hides a file, the user's own included.
TEST_F(FileStandingTest, AFileADenyRuleHidesIsDenied) {
  config::PermissionSettings settings;
  settings.rules.push_back({config::RuleAction::kDeny, "Read(./CLAUDE.md)", {"test", 1}});
  settings.rules.push_back({config::RuleAction::kDeny, "Read(//**/home/.claude/**)", {"test", 2}});
  auto policy = PermissionPolicy::build(settings, config::PermissionMode::kDefault, "/nonexistent");
  ASSERT_TRUE(policy.ok()) << policy.message();
  FileStanding::Sources s = sources();
  s.masks = policy->sandbox_masks(tree());
  FileStanding standing(std::move(s));
  EXPECT_TRUE(standing.hidden(tree() / "CLAUDE.md"));
  EXPECT_EQ(standing.of(tree() / "CLAUDE.md", "rules\n"), Standing::kDenied);
  EXPECT_EQ(standing.of(fs::canonical(dir_.path()) / "home/.claude/CLAUDE.md", "mine\n"),
            Standing::kDenied);
  EXPECT_EQ(standing.of(tree().parent_path() / "CLAUDE.md", "root rules\n"), Standing::kUntrusted);
}

}  // namespace
}  // namespace mecha::agent
