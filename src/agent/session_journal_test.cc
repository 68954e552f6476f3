// A run recorded into a session as it happens, and resumed from it.
#include "agent/session_journal.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "agent/agent.h"
#include "providers/cassette.h"
#include "store/conversation_log.h"
#include "store/testing/temp_dir.h"

namespace mecha::agent {
namespace {

// Returns its text; marked as content from outside when `untrusted`.
class FetchTool final : public tools::Tool {
 public:
  std::string name() const override { return "Fetch"; }
  std::string description() const override { return "Fetches a page."; }
  Json input_schema() const override {
    return Json{{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}};
  }
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return {true, false, false}; }
  tools::ToolOutput call(const Json& input, tools::ToolContext&) override {
    tools::ToolOutput out = tools::ToolOutput::ok("page: " + input.value("text", ""));
    out.external = true;
    return out;
  }
};

// Passes requests to a cassette and keeps the messages of each.
class RecordingProvider final : public providers::Provider {
 public:
  explicit RecordingProvider(std::shared_ptr<providers::Provider> inner)
      : inner_(std::move(inner)) {}
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                 providers::StreamSink* sink) override {
    requests.push_back(req.messages);
    return inner_->complete(req, sink);
  }
  std::string model() const override { return inner_->model(); }
  std::vector<std::vector<Message>> requests;

 private:
  std::shared_ptr<providers::Provider> inner_;
};

std::shared_ptr<providers::Provider> journal_cassette(const std::vector<std::string>& lines) {
  std::string text = "{\"mecha_cassette\": 1}\n";
  for (const auto& l : lines) text += l + "\n";
  auto c = providers::CassetteProvider::parse(text, "test.cassette");
  EXPECT_TRUE(c.ok()) << c.message();
  return std::shared_ptr<providers::Provider>(std::move(*c));
}

std::string fetch_line(const std::string& id) {
  return fmt::format(
      R"({{"response": {{"content": [{{"type": "text", "text": "fetching"}}, {{"type": "tool_use", "id": "{}", "name": "Fetch", "input": {{"text": "{}"}}}}], "usage": {{"input_tokens": 5, "output_tokens": 1}}}}}})",
      id, id);
}
std::string journal_text_line(const std::string& text) {
  return fmt::format(
      R"({{"response": {{"content": [{{"type": "text", "text": "{}"}}], "usage": {{"input_tokens": 7, "output_tokens": 2}}}}}})",
      text);
}

Agent make_agent(std::shared_ptr<providers::Provider> provider) {
  tools::ToolRegistry registry;
  EXPECT_TRUE(registry.add(std::make_shared<FetchTool>()).ok());
  return Agent(AgentSpec{}, std::move(provider), std::move(registry));
}

// What `mecha run` does: the prompt into the log, the conversation from the log, the run.
Outcome run_in_session(store::Session& session, const std::string& prompt,
                       std::shared_ptr<providers::Provider> provider) {
  EXPECT_TRUE(session.append(store::Record::user_message(Message::user_text(prompt))).ok());
  auto messages = session.conversation();
  EXPECT_TRUE(messages.ok()) << messages.message();
  Conversation conv(*messages);
  SessionJournal journal(&session);
  RunContext ctx;
  ctx.journal = &journal;
  Outcome o = make_agent(std::move(provider)).run(ctx, conv, nullptr);
  auto rebuilt = session.conversation();
  EXPECT_TRUE(rebuilt.ok()) << rebuilt.message();
  EXPECT_EQ(*rebuilt, conv.messages());  // the log holds exactly what the model saw
  return o;
}

std::vector<std::string> kinds(const std::vector<store::Record>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.emplace_back(store::record_kind_name(r.kind));
  return out;
}

TEST(SessionJournal, RecordsTheRunAsItHappens) {
  store::testing::TempDir dir;
  auto st = store::SessionStore::open(dir.path() / "s.db");
  ASSERT_TRUE(st.ok());
  auto session = (*st)->create("read the page");
  ASSERT_TRUE(session.ok());
  Outcome o = run_in_session(**session, "read the page",
                             journal_cassette({fetch_line("t1"), journal_text_line("it says hi")}));
  EXPECT_EQ(o.status, RunStatus::kCompleted);
  auto records = (*session)->records().value();
  EXPECT_EQ(kinds(records),
            (std::vector<std::string>{"user_message", "usage", "assistant_message", "tool_call",
                                      "tool_result", "usage", "assistant_message"}));
  EXPECT_EQ(records[4].body, (Json{{"agent", "main"},
                                   {"id", "t1"},
                                   {"is_error", false},
                                   {"untrusted", true},
                                   {"content", "page: t1"}}));
  EXPECT_EQ(records[1].body, (Json{{"agent", "main"},
                                   {"model", "cassette"},
                                   {"usage", {{"input_tokens", 5}, {"output_tokens", 1}}},
                                   {"cost_usd", nullptr}}));
  EXPECT_TRUE((*session)->untrusted());
}

TEST(SessionJournal, ResumeGivesTheModelTheWholeHistory) {
  store::testing::TempDir dir;
  std::string id;
  {
    auto st = store::SessionStore::open(dir.path() / "s.db");
    auto session = (*st)->create("first");
    id = (*session)->id();
    Outcome o = run_in_session(**session, "first",
                               journal_cassette({fetch_line("t1"), journal_text_line("one")}));
    ASSERT_EQ(o.status, RunStatus::kCompleted);
  }
  auto st = store::SessionStore::open(dir.path() / "s.db");  // as a new process would
  auto session = (*st)->open_session(id);
  ASSERT_TRUE(session.ok()) << session.message();
  EXPECT_TRUE((*session)->untrusted());
  auto recorder = std::make_shared<RecordingProvider>(journal_cassette({journal_text_line("two")}));
  Outcome o = run_in_session(**session, "second", recorder);
  ASSERT_EQ(o.status, RunStatus::kCompleted);
  EXPECT_EQ(o.text, "two");
  ASSERT_EQ(recorder->requests.size(), 1u);
  Message call{Role::kAssistant,
               {TextBlock{"fetching"}, ToolUseBlock{"t1", "Fetch", Json{{"text", "t1"}}, "", ""}}};
  std::vector<Message> want{
      Message::user_text("first"),
      call,
      Message{Role::kUser, {ToolResultBlock{"t1", "page: t1", false}}},
      Message::assistant_text("one"),
      Message::user_text("second"),
  };
  EXPECT_EQ(recorder->requests[0], want);
}

// Before each model call, the flushes the store has run so far.
class FlushCountingProvider final : public providers::Provider {
 public:
  FlushCountingProvider(std::shared_ptr<providers::Provider> inner, store::SessionStore* store)
      : inner_(std::move(inner)), store_(store) {}
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& req,
                                                 providers::StreamSink* sink) override {
    flushes_seen.push_back(store_->flushes());
    return inner_->complete(req, sink);
  }
  std::string model() const override { return inner_->model(); }
  std::vector<int64_t> flushes_seen;

 private:
  std::shared_ptr<providers::Provider> inner_;
  store::SessionStore* store_;
};

TEST(SessionJournal, EachStepIsSyncedOnceBeforeTheModelCallThatDependsOnIt) {
  store::testing::TempDir dir;
  auto st = store::SessionStore::open(dir.path() / "s.db");
  ASSERT_TRUE(st.ok()) << st.message();
  auto session = (*st)->create("five steps");
  ASSERT_TRUE(session.ok()) << session.message();
  auto counting = std::make_shared<FlushCountingProvider>(
      journal_cassette({fetch_line("t1"), fetch_line("t2"), fetch_line("t3"), fetch_line("t4"),
                        journal_text_line("done")}),
      st->get());
  Outcome o = run_in_session(**session, "five steps", counting);
  ASSERT_EQ(o.status, RunStatus::kCompleted);
  // Five model calls: each found one more flush, covering the step before it (the first
  // covers the prompt). Four records a step, one fdatasync.
  EXPECT_EQ(counting->flushes_seen, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ((*st)->flushes(), 5);
  EXPECT_EQ((*session)->record_count(), 1 + 4 * 4 + 2);
}

TEST(SessionJournal, AResultWithoutItsEventIsRecordedAsUntrusted) {
  store::testing::TempDir dir;
  auto st = store::SessionStore::open(dir.path() / "s.db");
  auto session = (*st)->create("t");
  SessionJournal journal(session->get());
  journal.record_event(ToolResultEvent{"main", "a", false, false, false, "seen"});
  Message results{Role::kUser,
                  {ToolResultBlock{"a", "seen", false}, ToolResultBlock{"b", "unseen", false}}};
  ASSERT_TRUE(journal.record_message("main", results).ok());
  auto records = (*session)->records().value();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].body["untrusted"], false);
  EXPECT_EQ(records[1].body, (Json{{"agent", "main"},
                                   {"id", "b"},
                                   {"is_error", false},
                                   {"untrusted", true},
                                   {"content", "unseen"}}));
}

TEST(SessionJournal, RefusalsAndNotesAreRecorded) {
  store::testing::TempDir dir;
  auto st = store::SessionStore::open(dir.path() / "s.db");
  auto session = (*st)->create("t");
  SessionJournal journal(session->get());
  RunContext ctx;
  ctx.journal = &journal;
  AgentSpec spec;
  spec.allowlisted = true;
  Agent agent(
      spec,
      journal_cassette(
          {R"({"response": {"content": [{"type": "tool_use", "id": "x", "name": "Send", "input": {}}]}})",
           journal_text_line("ok")}),
      tools::ToolRegistry{});
  Conversation conv;
  conv.append(Message::user_text("go"));
  Outcome o = agent.run(ctx, conv, nullptr);
  ASSERT_EQ(o.status, RunStatus::kCompleted);
  auto records = (*session)->records().value();
  EXPECT_EQ(kinds(records),
            (std::vector<std::string>{"usage", "assistant_message", "tool_call", "refusal",
                                      "tool_result", "usage", "assistant_message"}));
  EXPECT_EQ(records[3].body, (Json{{"agent", "main"},
                                   {"id", "x"},
                                   {"rule", "allowlist"},
                                   {"message", "tool 'Send' is not permitted for agent 'main'"}}));
}

class FailingJournal final : public RunJournal {
 public:
  Status record_message(std::string_view, const Message&) override {
    return Status::error("disk full");
  }
  Status record_compaction(std::string_view, std::string_view, std::string_view, size_t) override {
    return Status::error("disk full");
  }
  void record_event(const Event&) override {}
  Status failure() const override { return ok_status(); }
};

// Records messages, but fails at the first usage event, as a full disk would.
class UsageFailingJournal final : public RunJournal {
 public:
  Status record_message(std::string_view, const Message&) override { return failed_; }
  Status record_compaction(std::string_view, std::string_view, std::string_view, size_t) override {
    return failed_;
  }
  void record_event(const Event& e) override {
    if (std::holds_alternative<UsageEvent>(e.kind())) failed_ = Status::error("disk full");
  }
  Status failure() const override { return failed_; }

 private:
  Status failed_;
};

// Runs a tool call and an answer against `journal`: the run must end at the first failure to
// record, before the next model call and before acting on a reply it could not record.
void expect_the_run_ends_at_the_failure(RunJournal& journal, size_t messages_kept) {
  RunContext ctx;
  ctx.journal = &journal;
  Conversation conv;
  conv.append(Message::user_text("go"));
  auto provider = std::make_shared<RecordingProvider>(
      journal_cassette({fetch_line("t1"), journal_text_line("x")}));
  Outcome o = make_agent(provider).run(ctx, conv, nullptr);
  EXPECT_EQ(o.status, RunStatus::kError);
  EXPECT_EQ(o.error, "recording the session failed: disk full");
  EXPECT_EQ(provider->requests.size(), 1u);  // no model call after the failure
  EXPECT_EQ(conv.messages().size(), messages_kept);
}

TEST(SessionJournal, AUsageThatCannotBeRecordedEndsTheRunBeforeItsToolsRun) {
  UsageFailingJournal journal;
  expect_the_run_ends_at_the_failure(journal, 1);  // the reply was not acted on
}

TEST(SessionJournal, AFailureToRecordEndsTheRunWithAnError) {
  FailingJournal journal;
  expect_the_run_ends_at_the_failure(journal, 2);
}

TEST(SessionJournal, ASubagentRunDoesNotWriteTheSessionConversation) {
  FailingJournal journal;
  RunContext ctx;
  ctx.journal = &journal;
  ctx.depth = 1;
  Conversation conv;
  conv.append(Message::user_text("go"));
  Outcome o = make_agent(journal_cassette({journal_text_line("x")})).run(ctx, conv, nullptr);
  EXPECT_EQ(o.status, RunStatus::kCompleted);
}

}  // namespace
}  // namespace mecha::agent
