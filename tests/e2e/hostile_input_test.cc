// Hostile JSON through the built binary: a number past a double, invalid UTF-8 and nesting
// 80,000 levels deep in a cassette, in `guard check --batch`, and from a model server over
// loopback; a reply past its size limit; usage that is negative or absurd. Each must end in
// a clear error (or an unpriced call), never in a crash: the exit code is checked to be
// the program's, not a signal's.
#include <gtest/gtest.h>

#include <string>

#include "base/strict_json.h"
#include "base/subprocess.h"
#include "cli/testing/run_binary.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/scripted_streams.h"

namespace mecha::cli {
namespace {

using providers::testing::FakeModelServer;
using providers::testing::openai_stream;
using providers::testing::ScriptedResponse;
using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

constexpr int kDeep = 80'000;

std::string nested_array(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// One cassette line (after the header) that answers with text, plus `extra`.
std::string cassette_with(const std::string& line) {
  return "{\"mecha_cassette\": 1}\n" + line + "\n";
}

const char kUtf8Replacement[] = "\xEF\xBF\xBD";

struct CassetteCase {
  const char* name;
  std::string line;
  std::string err;  // the whole of stderr
};

TEST(HostileInput, CassetteLineThatCannotBeReadIsOneLineNamingItNeverACrash) {
  const std::vector<CassetteCase> cases = {
      {"number past a double", R"({"response": {"content": [], "usage": {"input_tokens": 1e400}}})",
       "mecha: c.jsonl:2: invalid JSON: number overflow parsing '1e400'\n"},
      {"invalid UTF-8 in a string",
       "{\"response\": {\"content\": [{\"type\": \"text\", \"text\": \"a\xff\"}]}}",
       std::string("mecha: c.jsonl:2: invalid JSON at byte 54: syntax error while parsing value - "
                   "invalid string: ill-formed UTF-8 byte; last read: '\"a") +
           kUtf8Replacement + "'\n"},
      {"tool input 80,000 levels deep",
       R"({"response": {"content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"a": )" +
           nested_array(kDeep) + "}}]}}",
       "mecha: c.jsonl:2: JSON nested deeper than the limit of 128 levels\n"},
      {"negative usage", R"({"response": {"content": [], "usage": {"output_tokens": -5}}})",
       "mecha: c.jsonl:2: response.usage.output_tokens: -5 is not a token count (an integer from "
       "0 to 1000000000000)\n"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    dir.write("c.jsonl", cassette_with(c.line));
    auto r = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "x"}, dir.path());
    EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.err;
    EXPECT_EQ(r.err, c.err) << c.name;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
  }
}

SubprocessResult guard_batch(const std::string& lines) {
  return testing::run_guard_check({"--batch"}, lines);
}

TEST(HostileInput, GuardBatchJudgesTheOtherLinesAfterABadOne) {
  auto r = guard_batch(
      "{\"command\": \"echo one\"}\n"
      "{\"command\": \"ls\", \"id\": 1e400}\n"
      "{\"command\": \"echo \xff\xfe\"}\n"
      "{\"command\": \"ls\", \"note\": " +
      nested_array(kDeep) +
      "}\n"
      "{\"command\": \"sudo ls\"}\n");
  EXPECT_EQ(r.exit_code, 1) << r.err.text();  // three lines were not commands
  auto lines = json_lines(r.out.text());
  ASSERT_EQ(lines.size(), 5u) << r.out.text();
  EXPECT_EQ(lines[0]["verdict"], "allow");
  EXPECT_EQ(lines[1], (Json{{"verdict", "error"},
                            {"rule", nullptr},
                            {"message", "line 2: invalid JSON: number overflow parsing '1e400'"}}));
  EXPECT_EQ(lines[2]["verdict"], "error");
  EXPECT_EQ(lines[2]["message"],
            std::string("line 3: invalid JSON at byte 19: syntax error while parsing value - "
                        "invalid string: ill-formed UTF-8 byte; last read: '\"echo ") +
                kUtf8Replacement + "'");
  EXPECT_EQ(lines[3],
            (Json{{"verdict", "error"},
                  {"rule", nullptr},
                  {"message", "line 4: JSON nested deeper than the limit of 128 levels"}}));
  EXPECT_EQ(lines[4]["verdict"], "refuse");
  EXPECT_EQ(lines[4]["rule"], "privilege-escalation");
}

// A config for one OpenAI-style provider at `url`, with small reply limits; the model the
// scripted streams name is priced.
std::string hostile_config(const std::string& url, int reply_bytes = 8192,
                           int tool_input_bytes = 1024) {
  return "[providers.local]\nkind = \"openai\"\nbase_url = \"" + url +
         "\"\nmodel = \"m\"\nmax_retries = 0\nmax_reply_bytes = " + std::to_string(reply_bytes) +
         "\nmax_tool_input_bytes = " + std::to_string(tool_input_bytes) +
         "\n\n[pricing.\"scripted\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n";
}

Message text_reply(const std::string& text) { return Message::assistant_text(text); }

Message tool_call(const std::string& raw_arguments) {
  ToolUseBlock u;
  u.id = "call_1";
  u.name = "Read";
  u.raw_input = raw_arguments;
  return Message{Role::kAssistant, {u}};
}

const Json* find_event(const std::vector<Json>& events, const std::string& type) {
  for (const auto& e : events) {
    if (e.value("type", "") == type) return &e;
  }
  return nullptr;
}

struct LiveRun {
  testing::BinaryResult result;
  std::vector<Json> events;
  const Json& done() const { return events.back(); }
};

LiveRun run_against(FakeModelServer& server, int reply_bytes = 8192, int tool_input_bytes = 1024) {
  TempDir dir;
  dir.write("c.toml", hostile_config(server.base_url("/v1"), reply_bytes, tool_input_bytes));
  dir.write("a.txt", "hello\n");
  LiveRun run;
  run.result =
      run_mecha({"run", "--json", "--config", "c.toml", "--max-cost", "5", "read a"}, dir.path());
  run.events = json_lines(run.result.out);
  return run;
}

TEST(HostileInput, DeeplyNestedToolInputIsRefusedToTheModelNotRun) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse(openai_stream(
      tool_call("{\"file_path\": " + nested_array(kDeep) + "}"), "tool_use", Usage{10, 5}, 4096)));
  server.enqueue(
      ScriptedResponse::sse(openai_stream(text_reply("gave up"), "end_turn", Usage{20, 5})));
  // Room for the 160,000 bytes of arguments: only their depth is past a limit.
  LiveRun run = run_against(server, 1 << 20, 1 << 20);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const Json* result = find_event(run.events, "tool_result");
  ASSERT_NE(result, nullptr) << run.result.out;
  EXPECT_EQ((*result)["is_error"], true);
  EXPECT_NE((*result)["content"].get<std::string>().find(
                "tool arguments: nested deeper than the limit max_json_depth = 128 of "
                "[providers.local] (raise it there to accept more)"),
            std::string::npos)
      << (*result)["content"];
  EXPECT_EQ(run.done()["status"], "completed");
  EXPECT_EQ(run.done()["text"], "gave up");
}

TEST(HostileInput, OversizeToolInputIsRefusedToTheModelNotRun) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse(
      openai_stream(tool_call("{\"file_path\": \"" + std::string(1100, 'a') + "\"}"), "tool_use",
                    Usage{10, 5}, 512)));
  server.enqueue(ScriptedResponse::sse(openai_stream(text_reply("ok"), "end_turn", Usage{1, 1})));
  LiveRun run = run_against(server);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const Json* result = find_event(run.events, "tool_result");
  ASSERT_NE(result, nullptr) << run.result.out;
  EXPECT_EQ((*result)["is_error"], true);
  EXPECT_NE((*result)["content"].get<std::string>().find(
                "tool arguments: 1117 bytes, past the limit max_tool_input_bytes = 1024 of "
                "[providers.local] (raise it there to accept more)"),
            std::string::npos)
      << (*result)["content"];
}

TEST(HostileInput, EventNestedPastTheLimitEndsTheCallWithAClearError) {
  FakeModelServer server;
  server.enqueue(ScriptedResponse::sse("data: {\"choices\": [{\"index\": 0, \"delta\": {\"x\": " +
                                       nested_array(kDeep) + "}}]}\n\ndata: [DONE]\n\n"));
  TempDir dir;
  // The reply limit is the default here: only the depth stops this reply.
  dir.write("c.toml", "[providers.local]\nkind = \"openai\"\nbase_url = \"" +
                          server.base_url("/v1") + "\"\nmodel = \"m\"\nmax_retries = 0\n");
  auto r = run_mecha({"run", "--json", "--config", "c.toml", "x"}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto events = json_lines(r.out);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["status"], "error");
  EXPECT_EQ(events.back()["error"].get<std::string>().find(
                "POST " + server.base_url("/v1") +
                "/chat/completions: the stream sent an event nested deeper than the limit "
                "max_json_depth = 128 of [providers.local] (raise it there to accept more): "),
            0u)
      << events.back()["error"];
}

TEST(HostileInput, ReplyPastMaxReplyBytesIsCutOffWithAClearError) {
  FakeModelServer server;
  // A bit more than the 8192-byte limit, in small pieces as a server streams it.
  server.enqueue(ScriptedResponse::sse(
      openai_stream(text_reply(std::string(12'000, 'x')), "end_turn", Usage{1, 1}, 100), 512));
  LiveRun run = run_against(server);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.err;
  ASSERT_FALSE(run.events.empty());
  EXPECT_EQ(run.done()["status"], "error");
  const std::string error = run.done()["error"];
  EXPECT_NE(error.find("/chat/completions: the reply grew past 8192 bytes, the limit "
                       "max_reply_bytes = 8192 of [providers.local] (raise it there to accept "
                       "more); it was cut off there after "),
            std::string::npos)
      << error;
}

TEST(HostileInput, UsageThatCannotBeBelievedMakesTheCallUnpricedNeverFreeOrNegative) {
  const std::string chunk_head =
      "data: {\"model\": \"scripted\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": "
      "\"fine\"}, "
      "\"finish_reason\": \"stop\"}], ";
  struct Case {
    const char* name;
    std::string usage_json;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"negative", "{\"prompt_tokens\": -100000000, \"completion_tokens\": 3}",
       "usage.prompt_tokens is -100000000, not a token count (an integer from 0 to "
       "1000000000000)"},
      {"1e308", "{\"prompt_tokens\": 1e308, \"completion_tokens\": 3}",
       "usage.prompt_tokens is 1e+308, not a token count (an integer from 0 to 1000000000000)"},
      {"past the range", "{\"prompt_tokens\": 10, \"completion_tokens\": 2000000000000}",
       "usage.completion_tokens is 2000000000000, not a token count (an integer from 0 to "
       "1000000000000)"},
  };
  for (const auto& c : cases) {
    FakeModelServer server;
    // One good call first, priced at 1000 * $1 + 500 * $2 per million tokens.
    server.enqueue(ScriptedResponse::sse(
        openai_stream(tool_call("{\"file_path\": \"a.txt\"}"), "tool_use", Usage{1000, 500})));
    server.enqueue(
        ScriptedResponse::sse(chunk_head + "\"usage\": " + c.usage_json + "}\n\ndata: [DONE]\n\n"));
    LiveRun run = run_against(server);
    ASSERT_EQ(run.result.exit_code, 0) << c.name << "\n" << run.result.err;
    const Json& done = run.done();
    EXPECT_EQ(done["status"], "completed") << c.name;
    EXPECT_EQ(done["unpriced_calls"], 1) << c.name;
    ASSERT_TRUE(done["cost_usd"].is_number()) << c.name << ": " << done;
    EXPECT_DOUBLE_EQ(done["cost_usd"].get<double>(), 0.002) << c.name;
    for (const char* key : {"input_tokens", "output_tokens"}) {
      EXPECT_GE(done["usage"][key].get<int64_t>(), 0) << c.name << ": " << done;
    }
    int notes = 0;
    for (const auto& e : run.events) {
      if (e.value("type", "") != "note") continue;
      ++notes;
      EXPECT_EQ(e["text"], "model 'scripted' reported a usage mecha cannot believe (" + c.why +
                               "): the call is counted as unpriced")
          << c.name;
    }
    EXPECT_EQ(notes, 1) << c.name << ": " << run.result.out;
  }
}

}  // namespace
}  // namespace mecha::cli
