#include "providers/cassette.h"

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "providers/recorder.h"

namespace mecha::providers {
namespace {

Result<std::unique_ptr<CassetteProvider>> load(const std::string& text) {
  return CassetteProvider::parse(text, "c.jsonl");
}

CompletionRequest request(const std::string& agent = "main") {
  CompletionRequest r;
  r.agent = agent;
  r.messages.push_back(Message::user_text("task"));
  return r;
}

TEST(Cassette, ReplaysPerAgentInOrder) {
  auto c = load(R"({"mecha_cassette": 1, "note": "two agents"}
{"response": {"content": [{"type": "text", "text": "main 1"}]}}
{"agent": "Explore", "response": {"content": [{"type": "text", "text": "explore 1"}]}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "main 2"}], "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 4}}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  auto r1 = (*c)->complete(request("Explore"), nullptr);
  auto r2 = (*c)->complete(request(), nullptr);
  auto r3 = (*c)->complete(request(), nullptr);
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
  EXPECT_EQ(r1->message.text(), "explore 1");
  EXPECT_EQ(r2->message.text(), "main 1");
  EXPECT_EQ(r3->message.text(), "main 2");
  EXPECT_EQ(r3->usage, (Usage{3, 4, 0, 0}));
  EXPECT_EQ(r3->stop_reason, "end_turn");
  auto r4 = (*c)->complete(request("Explore"), nullptr);
  ASSERT_FALSE(r4.ok());
  EXPECT_EQ(r4.message(), "cassette exhausted: agent Explore asked for response 2");
}

CompletionRequest top_level_request(const std::string& definition) {
  CompletionRequest r = request(definition);
  r.top_level = true;
  return r;
}

std::string text_line(const std::string& agent, const std::string& text) {
  std::string prefix = agent.empty() ? "" : "\"agent\": \"" + agent + "\", ";
  return "{" + prefix + "\"response\": {\"content\": [{\"type\": \"text\", \"text\": \"" + text +
         "\"}]}}\n";
}

std::vector<std::string> draw_texts(Provider& c, const std::vector<CompletionRequest>& requests) {
  std::vector<std::string> out;
  for (const auto& r : requests) {
    auto resp = c.complete(r, nullptr);
    out.push_back(resp.ok() ? resp->message.text() : resp.message());
  }
  return out;
}

// Parallel subagents: agents drawing from several threads at once each get their own lines,
// in file order, whatever the timing.
TEST(Cassette, AgentsDrawingAtOnceEachGetTheirOwnLinesInOrder) {
  constexpr int kLines = 200;
  const std::vector<std::string> agents = {"alpha", "beta", "gamma", "delta"};
  std::string text = "{\"mecha_cassette\": 1}\n";
  for (int i = 0; i < kLines; ++i) {
    for (const auto& a : agents) text += text_line(a, a + " " + std::to_string(i));
  }
  auto c = load(text);
  ASSERT_TRUE(c.ok()) << c.message();
  std::map<std::string, std::vector<std::string>> drawn;
  for (const auto& a : agents) drawn[a];  // every key in place before the threads start
  std::vector<std::thread> threads;
  for (const auto& a : agents) {
    threads.emplace_back([&, a] {
      std::vector<std::string> mine;
      for (int i = 0; i < kLines; ++i) {
        auto r = (*c)->complete(request(a), nullptr);
        mine.push_back(r.ok() ? r->message.text() : r.message());
      }
      drawn.at(a) = std::move(mine);  // each thread its own entry, read after join
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& a : agents) {
    std::vector<std::string> want;
    for (int i = 0; i < kLines; ++i) want.push_back(a + " " + std::to_string(i));
    EXPECT_EQ(drawn[a], want) << a;
  }
}

// Regression: `mecha run --agent Explore --model cassette:F` ignored the lines without
// `agent` and reported the cassette exhausted.
TEST(Cassette, TheTopLevelAgentIsMainWhateverDefinitionItRuns) {
  auto c = load("{\"mecha_cassette\": 1}\n" + text_line("", "one") + text_line("main", "two") +
                text_line("Explore", "sub") + text_line("", "three"));
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(draw_texts(**c, {top_level_request("Explore"), top_level_request("Explore"),
                             request("Explore"), top_level_request("Explore"),
                             top_level_request("Explore"), request("Explore")}),
            (std::vector<std::string>{"one", "two", "sub", "three",
                                      "cassette exhausted: agent main asked for response 4",
                                      "cassette exhausted: agent Explore asked for response 2"}));
}

TEST(Cassette, ASubagentNeverDrawsTheLinesOfMain) {
  auto c = load("{\"mecha_cassette\": 1}\n" + text_line("", "one") + text_line("Plan", "plan"));
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(draw_texts(**c, {request("Explore"), request("Plan"), top_level_request("Plan")}),
            (std::vector<std::string>{"cassette exhausted: agent Explore asked for response 1",
                                      "plan", "one"}));
}

// A cassette recorded before the rule names the top-level agent by its definition; it
// shares those lines in file order with a subagent of the same name, which runs only while
// the top-level agent waits on its Task call.
TEST(Cassette, AnOldCassetteNamingTheTopLevelDefinitionReplaysAsRecorded) {
  auto c = load("{\"mecha_cassette\": 1}\n" + text_line("Explore", "top calls Task") +
                text_line("Explore", "sub 1") + text_line("Plan", "plan 1") +
                text_line("Explore", "sub 2") + text_line("Explore", "top answers"));
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(draw_texts(**c, {top_level_request("Explore"), request("Explore"), request("Plan"),
                             request("Explore"), top_level_request("Explore"),
                             top_level_request("Explore")}),
            (std::vector<std::string>{"top calls Task", "sub 1", "plan 1", "sub 2", "top answers",
                                      "cassette exhausted: agent main asked for response 3"}));
}

TEST(Cassette, ToolUseResponsesDefaultToStopReasonToolUse) {
  auto c = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "E"}}]}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  auto r = (*c)->complete(request(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, "tool_use");
  ASSERT_EQ(r->message.tool_uses().size(), 1u);
  EXPECT_EQ(r->message.tool_uses()[0]->input, (Json{{"pattern", "E"}}));
}

TEST(Cassette, BadFilesGiveOneErrorNamingTheLine) {
  struct Case {
    std::string text;
    std::string error;
  };
  std::vector<Case> cases = {
      {"", "c.jsonl: empty cassette (no header line)"},
      {"{\"mecha_cassette\": 2}\n",
       "c.jsonl:1: cassette version 2 is not supported (this mecha reads version 1)"},
      {"{\"response\": {}}\n",
       "c.jsonl:1: the first line must be the header {\"mecha_cassette\": 1} (c.jsonl:1: missing "
       "field \"mecha_cassette\")"},
      {"{\"mecha_cassette\": 1}\nnot json\n", "c.jsonl:2: invalid JSON at byte 2: "},
      {"{\"mecha_cassette\": 1}\n{\"response\": {\"content\": []}, \"extra\": 1}\n",
       "c.jsonl:2: unknown field \"extra\""},
      {"{\"mecha_cassette\": 1}\n{\"response\": {\"content\": [{\"type\": \"text\", \"txt\": "
       "\"x\"}]}}\n",
       "c.jsonl:2: response.content[0]: missing field \"text\""},
      {"{\"mecha_cassette\": 1}\n{\"agent\": \"main\"}\n", "c.jsonl:2: missing field \"response\""},
      {"{\"mecha_cassette\": 1}\n{\"response\": {\"content\": []}, \"expect\": {\"tools\": []}}\n",
       "c.jsonl:2: expect: unknown field \"tools\""},
  };
  for (const auto& c : cases) {
    auto r = load(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.message().substr(0, c.error.size()), c.error) << r.message();
  }
}

TEST(Cassette, ExpectationsAreCheckedBeforeTheResponseIsGiven) {
  auto c = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "a"}]}, "expect": {"tools_include": ["Grep"], "tools_exclude": ["Bash"]}}
{"response": {"content": [{"type": "text", "text": "b"}]}, "expect": {"last_tool_result_contains": "2 errors"}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  CompletionRequest req = request();
  req.tools = {{"Grep", "", Json::object()}, {"Bash", "", Json::object()}};
  auto r1 = (*c)->complete(req, nullptr);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.message(),
            "c.jsonl:2: expectation failed: tools_exclude \"Bash\", but the request offered it");

  auto c2 = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "b"}]}, "expect": {"last_tool_result_contains": "2 errors"}}
{"response": {"content": [{"type": "text", "text": "c"}]}, "expect": {"last_tool_result_contains": "2 errors"}}
)");
  ASSERT_TRUE(c2.ok());
  CompletionRequest with_result = request();
  with_result.messages.push_back(
      Message{Role::kAssistant, {ToolUseBlock{"t", "Grep", {}, "", ""}}});
  with_result.messages.push_back(
      Message{Role::kUser, {ToolResultBlock{"t", "found 2 errors", false}}});
  auto ok = (*c2)->complete(with_result, nullptr);
  ASSERT_TRUE(ok.ok()) << ok.message();
  auto bad = (*c2)->complete(request(), nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "c.jsonl:3: expectation failed: last_tool_result_contains \"2 errors\", but the "
            "request has no tool result");
}

TEST(Cassette, FirstMessageContainsChecksWhatTheRequestStartsFrom) {
  auto c = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "a"}]}, "expect": {"first_message_contains": "SUMMARY"}}
{"response": {"content": [{"type": "text", "text": "b"}]}, "expect": {"first_message_contains": "SUMMARY"}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  CompletionRequest summarised = request();
  summarised.messages = {Message::user_text("SUMMARY of the start")};
  auto ok = (*c)->complete(summarised, nullptr);
  ASSERT_TRUE(ok.ok()) << ok.message();
  CompletionRequest whole = request();
  whole.messages = {Message::user_text("the task")};
  auto bad = (*c)->complete(whole, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "c.jsonl:3: expectation failed: first_message_contains \"SUMMARY\", but the first "
            "message was: the task");
}

TEST(Cassette, RecordedLinesReplay) {
  CompletionResponse r;
  r.message =
      Message{Role::kAssistant,
              {TextBlock{"hi"}, ToolUseBlock{"t1", "Read", Json{{"file_path", "a"}}, "", ""}}};
  r.stop_reason = "tool_use";
  r.usage = Usage{1, 2, 0, 0};
  r.model = "m";
  std::string text = "{\"mecha_cassette\": 1}\n" + cassette_line_json("sub", r).dump() + "\n";
  auto c = load(text);
  ASSERT_TRUE(c.ok()) << c.message();
  auto back = (*c)->complete(request("sub"), nullptr);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->message, r.message);
  EXPECT_EQ(back->usage, r.usage);
  EXPECT_EQ(back->model, "m");
}

// A recording names the top-level agent "main", so it replays whatever --agent ran it.
TEST(Cassette, ARecordingNamesTheTopLevelAgentMain) {
  auto inner = load("{\"mecha_cassette\": 1}\n" + text_line("", "top") + text_line("Plan", "sub"));
  ASSERT_TRUE(inner.ok()) << inner.message();
  char dir_template[] = "/tmp/mecha-cassette-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::filesystem::path path = std::filesystem::path(dir_template) / "rec.jsonl";
  {
    auto rec = RecordingProvider::create(std::shared_ptr<Provider>(std::move(*inner)), path);
    ASSERT_TRUE(rec.ok()) << rec.message();
    EXPECT_EQ(draw_texts(**rec, {top_level_request("Explore"), request("Plan")}),
              (std::vector<std::string>{"top", "sub"}));
  }
  auto replay = CassetteProvider::open(path.string());
  std::filesystem::remove_all(dir_template);
  ASSERT_TRUE(replay.ok()) << replay.message();
  EXPECT_EQ(draw_texts(**replay, {top_level_request("General"), request("Plan")}),
            (std::vector<std::string>{"top", "sub"}));
}

TEST(Cassette, MessageCountAndFirstMessageContainsCheckWhatTheRequestHolds) {
  auto c = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "a"}]}, "expect": {"message_count": 1, "first_message_contains": ["The task:", "fix it"]}}
{"response": {"content": [{"type": "text", "text": "b"}]}, "expect": {"message_count": 1}}
{"response": {"content": [{"type": "text", "text": "c"}]}, "expect": {"first_message_contains": "summary"}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  CompletionRequest req = request();
  req.messages = {Message::user_text("The task:\nfix it")};
  auto r1 = (*c)->complete(req, nullptr);
  ASSERT_TRUE(r1.ok()) << r1.message();
  req.messages.push_back(Message::assistant_text("x"));
  req.messages.push_back(Message::user_text("y"));
  auto r2 = (*c)->complete(req, nullptr);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.message(), "c.jsonl:3: expectation failed: message_count 1, but the request held 3");
  auto r3 = (*c)->complete(req, nullptr);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.message(),
            "c.jsonl:4: expectation failed: first_message_contains \"summary\", but the first "
            "message was: The task:\nfix it");

  auto wrong = load(R"({"mecha_cassette": 1}
{"response": {"content": []}, "expect": {"message_count": "one"}}
)");
  ASSERT_FALSE(wrong.ok());
}

TEST(Cassette, SystemContainsTakesOneStringOrAListAndChecksEach) {
  auto c = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "a"}]}, "expect": {"system_contains": "coding agent"}}
{"response": {"content": [{"type": "text", "text": "b"}]}, "expect": {"system_contains": ["coding agent", "Work tree: /w"]}}
)");
  ASSERT_TRUE(c.ok()) << c.message();
  CompletionRequest req = request();
  req.system = "You are a coding agent.\n- Work tree: /w\n";
  auto r1 = (*c)->complete(req, nullptr);
  ASSERT_TRUE(r1.ok()) << r1.message();
  req.system = "You are a coding agent.";
  auto r2 = (*c)->complete(req, nullptr);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.message(),
            "c.jsonl:3: expectation failed: system_contains \"Work tree: /w\", but the system "
            "prompt was: You are a coding agent.");

  auto none = load(R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "a"}]}, "expect": {"system_contains": ["x"]}}
)");
  ASSERT_TRUE(none.ok());
  auto r3 = (*none)->complete(request(), nullptr);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.message(),
            "c.jsonl:2: expectation failed: system_contains \"x\", but the system prompt was: "
            "(none)");

  auto wrong = load(R"({"mecha_cassette": 1}
{"response": {"content": []}, "expect": {"system_contains": 3}}
)");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(),
            "c.jsonl:2: expect.system_contains: expected a string or an array of strings, got "
            "integer");
}

}  // namespace
}  // namespace mecha::providers
