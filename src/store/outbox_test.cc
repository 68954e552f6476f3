#include "store/outbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "store/sqlite.h"
#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

TEST(Outbox, RecordsListsAndDecidesMessagesInAPrivateFile) {
  testing::TempDir dir;
  const auto path = dir.path() / "state" / "outbox.db";
  auto outbox = Outbox::open(path);
  ASSERT_TRUE(outbox.ok()) << outbox.message();
  OutboxMessage m;
  m.session = "s1";
  m.agent = "main";
  m.to = "bob@example.com";
  m.subject = "hi";
  m.body = "hello";
  m.reason = "waiting";
  auto id1 = (*outbox)->add(m);
  ASSERT_TRUE(id1.ok()) << id1.message();
  m.to = "carol@example.com";
  auto id2 = (*outbox)->add(m);
  ASSERT_TRUE(id2.ok());
  EXPECT_EQ(*id1, 1);
  EXPECT_EQ(*id2, 2);

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(path.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  auto got = (*outbox)->get(1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->to, "bob@example.com");
  EXPECT_EQ((*got)->status, OutboxStatus::kHeld);
  EXPECT_EQ((*got)->reason, "waiting");
  EXPECT_FALSE((*got)->decided_ms.has_value());
  EXPECT_GT((*got)->created_ms, 0);

  // Only from held: a second approval of the same message changes nothing.
  auto first = (*outbox)->set_status(1, OutboxStatus::kSent, "approved", OutboxStatus::kHeld);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  auto second = (*outbox)->set_status(1, OutboxStatus::kSent, "again", OutboxStatus::kHeld);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  got = (*outbox)->get(1);
  EXPECT_EQ((*got)->status, OutboxStatus::kSent);
  EXPECT_EQ((*got)->reason, "approved");
  EXPECT_TRUE((*got)->decided_ms.has_value());

  auto held = (*outbox)->list(OutboxStatus::kHeld);
  ASSERT_TRUE(held.ok());
  ASSERT_EQ(held->size(), 1u);
  EXPECT_EQ((*held)[0].id, 2);
  auto all = (*outbox)->list();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  auto none = (*outbox)->get(3);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // Reopened: the same rows.
  outbox->reset();
  auto again = Outbox::open(path);
  ASSERT_TRUE(again.ok());
  auto rows = (*again)->list();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u);
}

// Invariant 3: the content is sealed when it is recorded; a row changed in the file since
// (here by SQL, as anything that can write the file could) no longer matches its seal.
TEST(Outbox, SealsTheContentAndTellsWhenTheFileWasChanged) {
  testing::TempDir dir;
  const auto path = dir.path() / "outbox.db";
  auto outbox = Outbox::open(path);
  ASSERT_TRUE(outbox.ok()) << outbox.message();
  OutboxMessage m;
  m.to = "bob@company.example";
  m.subject = "lunch";
  m.body = "noon?";
  ASSERT_TRUE((*outbox)->add(m).ok());
  auto got = (*outbox)->get(1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->seal, content_seal("bob@company.example", "lunch", "noon?"));
  EXPECT_EQ((*got)->seal.size(), 64u);
  EXPECT_TRUE((*got)->unchanged());
  // The lengths frame the parts: moving a byte from one part to the next changes the seal.
  EXPECT_NE(content_seal("ab", "c", ""), content_seal("a", "bc", ""));

  auto db = Database::open(path, 1000);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->exec("UPDATE outbox SET recipient = 'attacker@evil.example'").ok());
  got = (*outbox)->get(1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->to, "attacker@evil.example");
  EXPECT_FALSE((*got)->unchanged());
}

// An outbox written before seals: its messages are sealed as they are when it is first
// opened, once.
TEST(Outbox, SealsTheMessagesOfAnOutboxFromBeforeSeals) {
  testing::TempDir dir;
  const auto path = dir.path() / "outbox.db";
  {
    auto db = Database::open(path, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, created "
                         "INTEGER NOT NULL, session TEXT NOT NULL, agent TEXT NOT NULL, recipient "
                         "TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, status TEXT "
                         "NOT NULL, reason TEXT NOT NULL, decided INTEGER);"
                         "INSERT INTO outbox VALUES (1, 5, 's', 'main', 'bob@company.example', "
                         "'lunch', 'noon?', 'held', '', NULL);")
                    .ok());
  }
  for (int open = 0; open < 2; ++open) {
    auto outbox = Outbox::open(path);
    ASSERT_TRUE(outbox.ok()) << outbox.message();
    auto got = (*outbox)->get(1);
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->seal, content_seal("bob@company.example", "lunch", "noon?"));
    EXPECT_TRUE((*got)->unchanged());
  }
}

}  // namespace
}  // namespace mecha::store
