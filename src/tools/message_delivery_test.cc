#include "tools/message_delivery.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/testing/wait_until.h"
#include "store/testing/temp_dir.h"
#include "tools/mail_parse.h"
#include "tools/testing/scoped_env.h"
#include "tools/testing/smtp_sink.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using store::testing::TempDir;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MessageDelivery, HeaderInjectionAndAddressListsAreRefusedNamingTheField) {
  struct Case {
    std::string to, subject, error;
  };
  const std::string not_plain =
      "field 'to' is not one plain address (local@domain, with no name, brackets, commas or "
      "spaces): ";
  for (const Case& c : std::vector<Case>{
           {"bob@example.com\r\nBcc: eve@evil.example", "hi",
            "field 'to' holds a line break: it must be one plain address"},
           {"bob@example.com", "hi\nBcc: eve@evil.example",
            "field 'subject' holds a line break: a subject is one line"},
           {"bob@example.com, eve@evil.example", "",
            not_plain + "'bob@example.com, eve@evil.example'"},
           {"Bob <bob@example.com>", "", not_plain + "'Bob <bob@example.com>'"},
           {"bob", "", not_plain + "'bob'"},
           {"bob@@example.com", "", not_plain + "'bob@@example.com'"},
           {"-oProxyCommand=x@example.com;", "", not_plain + "'-oProxyCommand=x@example.com;'"},
       }) {
    Status st = check_outgoing({1, c.to, c.subject, "body"});
    ASSERT_FALSE(st.ok()) << c.to;
    EXPECT_EQ(st.message(), c.error);
  }
  EXPECT_TRUE(check_outgoing({1, "bob.smith+tag@mail.example.com", "Grüße", "x"}).ok());
}

TEST(MessageDelivery, MaildirBackendWritesTheMessageIntoNewAndItReadsBack) {
  TempDir dir;
  config::MessagingConfig cfg;
  cfg.backend = "maildir";
  cfg.maildir = dir.path() / "Sent";
  cfg.from = "me@example.com";
  Status st =
      deliver_message(cfg, {7, "bob@example.com", "Grüße aus Köln", "Zeile 1\nZeile 2 ✓"}, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  auto files = files_in(dir.path() / "Sent/new");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files_in(dir.path() / "Sent/tmp").empty());
  ParsedMail m = parse_mail(slurp(files[0]), 10000);
  EXPECT_EQ(m.headers.from, "me@example.com");
  EXPECT_EQ(m.headers.to, "bob@example.com");
  EXPECT_EQ(m.headers.subject, "Grüße aus Köln");
  EXPECT_EQ(m.headers.message_id.rfind("<outbox-7.", 0), 0u) << m.headers.message_id;
  EXPECT_EQ(m.body, "Zeile 1\nZeile 2 ✓");
}

TEST(MessageDelivery, MaildirBackendWithoutAFolderIsAnError) {
  config::MessagingConfig cfg;
  cfg.backend = "maildir";
  Status st = deliver_message(cfg, {1, "bob@example.com", "", "x"}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "[messaging] backend = \"maildir\" needs [messaging] maildir, the folder");
}

class WebhookSink {
 public:
  explicit WebhookSink(int status = 200) {
    server_.Post("/hook", [this, status](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(req.body);
      types_.push_back(req.get_header_value("Content-Type"));
      res.status = status;
      res.set_content(status == 200 ? "ok" : "broken", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(mecha::testing::wait_until([this] { return server_.is_running(); },
                                           std::chrono::seconds(10), std::chrono::milliseconds(1)))
        << "the webhook sink did not start listening";
  }
  ~WebhookSink() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> types() {
    std::lock_guard<std::mutex> lock(mu_);
    return types_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> bodies_, types_;
};

TEST(MessageDelivery, WebhookBackendPostsTheMessageAsJson) {
  WebhookSink sink;
  config::MessagingConfig cfg;
  cfg.backend = "webhook";
  cfg.webhook_url = sink.url();
  Status st = deliver_message(cfg, {3, "bob@example.com", "hi", "hello \"bob\""}, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(sink.bodies().size(), 1u);
  EXPECT_EQ(
      Json::parse(sink.bodies()[0]),
      (Json{{"id", 3}, {"to", "bob@example.com"}, {"subject", "hi"}, {"body", "hello \"bob\""}}));
  EXPECT_EQ(sink.types()[0], "application/json");
}

TEST(MessageDelivery, AWebhookThatAnswersAnErrorIsAFailure) {
  WebhookSink sink(500);
  config::MessagingConfig cfg;
  cfg.backend = "webhook";
  cfg.webhook_url = sink.url();
  Status st = deliver_message(cfg, {3, "bob@example.com", "hi", "x"}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "webhook POST " + sink.url() + ": the server answered HTTP 500: broken");
}

TEST(MessageDelivery, SmtpBackendSendsThroughLibcurl) {
  if (!testing::SmtpSink::available()) GTEST_SKIP() << "python3 is not installed: no SMTP sink";
  TempDir dir;
  testing::SmtpSink sink(dir.path());
  ASSERT_TRUE(sink.running());
  config::MessagingConfig cfg;
  cfg.backend = "smtp";
  cfg.smtp_url = sink.url();
  cfg.from = "me@example.com";
  Status st = deliver_message(cfg, {4, "bob@example.com", "Report", "line one\n.\nlast"}, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  auto got = sink.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].at("from"), "<me@example.com>");
  EXPECT_EQ(got[0].at("rcpt"), Json::array({"<bob@example.com>"}));
  ParsedMail m = parse_mail(got[0].at("data").get<std::string>(), 10000);
  EXPECT_EQ(m.headers.to, "bob@example.com");
  EXPECT_EQ(m.headers.subject, "Report");
  // A line holding only a dot survives the SMTP transfer (libcurl stuffs it, the sink unstuffs).
  EXPECT_EQ(m.body, "line one\n.\nlast");
}

TEST(MessageDelivery, SmtpLoginFromAnUnsetVariableIsAnErrorNamingIt) {
  testing::ScopedEnv unset("MECHA_TEST_SMTP_USER", "");
  config::MessagingConfig cfg;
  cfg.backend = "smtp";
  cfg.smtp_url = "smtp://127.0.0.1:1";
  cfg.from = "me@example.com";
  cfg.smtp_user_env = "MECHA_TEST_SMTP_USER";
  Status st = deliver_message(cfg, {4, "bob@example.com", "", "x"}, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "[messaging] smtp_user_env names the environment variable MECHA_TEST_SMTP_USER, which "
            "is not set");
}

}  // namespace
}  // namespace mecha::tools
