#include "tools/maildir.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "store/testing/temp_dir.h"
#include "tools/mail_tools.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;

std::string mail(const std::string& from, const std::string& subject, const std::string& body) {
  return "From: " + from + "\r\nSubject: " + subject +
         "\r\nDate: Mon, 30 Nov 2026 09:00:00 +0000\r\n\r\n" + body + "\r\n";
}

class MaildirTest : public ::testing::Test {
 protected:
  MaildirTest() {
    for (const char* sub : {"new", "cur", "tmp"}) fs::create_directories(box() / sub);
    // Delivered in this order, a minute apart: old (read), middle (unread in cur), newest (new).
    put("cur/1001.M1P1.host:2,S", mail("old@example.com", "Old news", "read long ago"), 0);
    put("cur/1002.M1P1.host:2,F", mail("mid@example.com", "Middle", "flagged, not seen"), 1);
    put("new/1003.M1P1.host", mail("new@example.com", "=?utf-8?Q?Gr=C3=BC=C3=9Fe?=", "fresh"), 2);
  }

  fs::path box() const { return dir_.path() / "Mail"; }
  void put(const std::string& rel, const std::string& text, int minute) {
    dir_.write("Mail/" + rel, text);
    fs::last_write_time(box() / rel, fs::file_time_type::clock::now() - std::chrono::hours(1) +
                                         std::chrono::minutes(minute));
  }

  TempDir dir_;
};

TEST_F(MaildirTest, ListsNewestFirstWithUnreadFlags) {
  auto list = Maildir(box()).list(10, false);
  ASSERT_TRUE(list.ok()) << list.message();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].id, "1003.M1P1.host");
  EXPECT_EQ((*list)[0].headers.subject, "Grüße");
  EXPECT_TRUE((*list)[0].unread);
  EXPECT_EQ((*list)[1].id, "1002.M1P1.host");
  EXPECT_TRUE((*list)[1].unread);
  EXPECT_EQ((*list)[2].id, "1001.M1P1.host");
  EXPECT_FALSE((*list)[2].unread);

  auto unread = Maildir(box()).list(1, true);
  ASSERT_TRUE(unread.ok());
  ASSERT_EQ(unread->size(), 1u);
  EXPECT_EQ((*unread)[0].id, "1003.M1P1.host");
}

TEST_F(MaildirTest, ReadsAMessageByIdWithoutMarkingItRead) {
  auto m = Maildir(box()).read("1002.M1P1.host");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->mail.headers.from, "mid@example.com");
  EXPECT_EQ(m->mail.body, "flagged, not seen");
  EXPECT_TRUE(m->unread);
  // Nothing moved: the new message stays in new/, the flags stay as they were.
  ASSERT_TRUE(Maildir(box()).read("1003.M1P1.host").ok());
  EXPECT_TRUE(fs::exists(box() / "new/1003.M1P1.host"));
  EXPECT_TRUE(fs::exists(box() / "cur/1002.M1P1.host:2,F"));
}

// The model chooses the id: no id may reach a file outside the mailbox.
TEST_F(MaildirTest, TraversalIdsAreRefused) {
  dir_.write("secret.txt", "From: x\n\nTHE SECRET\n");
  fs::create_symlink(dir_.path() / "secret.txt", box() / "new/2000.link");
  struct Case {
    std::string id, error;
  };
  const std::string not_an_id =
      "' is not a message id: an id is a file name of the mailbox, without '/', '..' or ':' "
      "(ReadInbox lists them)";
  for (const Case& c : std::vector<Case>{
           {"../secret.txt", "'../secret.txt" + not_an_id},
           {"../../etc/passwd", "'../../etc/passwd" + not_an_id},
           {"/etc/passwd", "'/etc/passwd" + not_an_id},
           {"..", "'.." + not_an_id},
           {".", "'." + not_an_id},
           {"new/1003.M1P1.host", "'new/1003.M1P1.host" + not_an_id},
           {"1002.M1P1.host:2,F", "'1002.M1P1.host:2,F" + not_an_id},
           {"", "a message id is needed (ReadInbox lists them)"},
           {"2000.link", "no message with id '2000.link' in the mailbox (ReadInbox lists the ids)"},
           {"9999.none", "no message with id '9999.none' in the mailbox (ReadInbox lists the ids)"},
       }) {
    auto m = Maildir(box()).read(c.id);
    ASSERT_FALSE(m.ok()) << c.id << " was read: " << m->mail.body;
    EXPECT_EQ(m.message(), c.error);
  }
}

TEST_F(MaildirTest, AFolderThatIsNoMaildirIsAnErrorNamingIt) {
  auto list = Maildir(dir_.path() / "nothing").list(10, false);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.message(), (dir_.path() / "nothing").string() +
                                " is not a Maildir (it has no readable new/ or cur/); check [mail] "
                                "maildir");
}

TEST_F(MaildirTest, ReadInboxAndReadMessageToolsShowMailAsExternalPrivateContent) {
  ReadInboxTool inbox(box());
  ReadMessageTool reader(box());
  EXPECT_EQ(inbox.capabilities(), (Capabilities{.untrusted_input = true, .private_data = true}));
  EXPECT_EQ(reader.capabilities(), (Capabilities{.untrusted_input = true, .private_data = true}));
  EXPECT_TRUE(inbox.read_only());
  EXPECT_EQ(inbox.tree_access(), TreeAccess::kNone);
  ToolContext ctx;
  ToolOutput out = inbox.call(Json{{"limit", 2}}, ctx);
  EXPECT_FALSE(out.is_error);
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content,
            "2 messages, newest first:\n\n"
            "id: 1003.M1P1.host\ndate: Mon, 30 Nov 2026 09:00:00 +0000\nfrom: new@example.com\n"
            "subject: Grüße\nunread: yes\n\n"
            "id: 1002.M1P1.host\ndate: Mon, 30 Nov 2026 09:00:00 +0000\nfrom: mid@example.com\n"
            "subject: Middle\nunread: yes\n");
  out = reader.call(Json{{"id", "1001.M1P1.host"}}, ctx);
  EXPECT_TRUE(out.external);
  EXPECT_EQ(out.content,
            "id: 1001.M1P1.host\nfrom: old@example.com\nto: (none)\ndate: Mon, 30 Nov 2026 "
            "09:00:00 +0000\nsubject: Old news\nmessage-id: (none)\nunread: no\n\nread long ago");
  out = reader.call(Json{{"id", "../secret.txt"}}, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content.find("THE SECRET"), std::string::npos);
}

}  // namespace
}  // namespace mecha::tools
