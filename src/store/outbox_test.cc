#include "store/outbox.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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

}  // namespace
}  // namespace mecha::store
