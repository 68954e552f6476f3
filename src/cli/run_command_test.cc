// `mecha run` end to end: the built binary as a child process.
#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

const char* kTwoTurns = R"({"mecha_cassette": 1, "note": "test"}
{"agent": "main", "response": {"content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "Nope", "input": {"pattern": "ERROR"}}], "stop_reason": "tool_use", "usage": {"input_tokens": 120, "output_tokens": 30}}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "found 2 errors"}], "stop_reason": "end_turn", "usage": {"input_tokens": 180, "output_tokens": 6}}}
)";

TEST(RunCommand, HumanModePrintsTheAnswerOnStdoutAndProgressOnStderr) {
  TempDir dir;
  dir.write("c.jsonl", kTwoTurns);
  auto r = run_mecha({"run", "--model", "cassette:c.jsonl", "find errors"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "found 2 errors\n");
  EXPECT_NE(r.err.find("Looking.\n● Nope(pattern=\"ERROR\")\n  ⎿ error: unknown tool 'Nope'"),
            std::string::npos)
      << r.err;
}

TEST(RunCommand, JsonModePrintsOneEventPerLineEndingWithDone) {
  TempDir dir;
  dir.write("c.jsonl", kTwoTurns);
  auto r = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "find errors"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = json_lines(r.out);
  ASSERT_EQ(events.size(), 7u) << r.out;
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"text", "usage", "tool_call", "tool_result", "text",
                                             "usage", "done"}));
  // Each model call's usage, as it happens, for a program that watches the spend.
  EXPECT_EQ(events[1], (Json{{"type", "usage"},
                             {"agent", "main"},
                             {"model", "cassette"},
                             {"usage", {{"input_tokens", 120}, {"output_tokens", 30}}},
                             {"cost_usd", nullptr}}));
  EXPECT_EQ(events[3]["private"], false);
  EXPECT_EQ(events[6]["status"], "completed");
  EXPECT_EQ(events[6]["text"], "found 2 errors");
  EXPECT_EQ(events[6]["turns"], 2);
  EXPECT_EQ(events[6]["usage"], (Json{{"input_tokens", 300}, {"output_tokens", 36}}));
  EXPECT_TRUE(events[6]["cost_usd"].is_null());
  EXPECT_EQ(events[6]["unpriced_calls"], 2);
}

TEST(RunCommand, TurnLimitExitsWithThree) {
  TempDir dir;
  dir.write("c.jsonl", kTwoTurns);
  auto r = run_mecha({"run", "--json", "--max-turns", "1", "--model", "cassette:c.jsonl", "x"},
                     dir.path());
  EXPECT_EQ(r.exit_code, 3);
  auto events = json_lines(r.out);
  EXPECT_EQ(events.back()["status"], "limits_exceeded");
  EXPECT_EQ(events.back()["limit"], "max_turns (1)");
}

TEST(RunCommand, RecordWritesACassetteThatReplaysTheSameRun) {
  TempDir dir;
  dir.write("c.jsonl", kTwoTurns);
  auto first = run_mecha(
      {"run", "--json", "--model", "cassette:c.jsonl", "--record", "rec.jsonl", "x"}, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto again = run_mecha({"run", "--json", "--model", "cassette:rec.jsonl", "x"}, dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  // The same events, but for the session each run recorded into.
  auto replayed = json_lines(again.out), original = json_lines(first.out);
  replayed.back().erase("session");
  original.back().erase("session");
  EXPECT_EQ(replayed, original);
}

struct BadInput {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> files;
  int exit_code;
  std::string err;  // the whole of stderr
};

TEST(RunCommand, BadInputGivesOneClearLineAndTheRightExitCode) {
  const std::vector<BadInput> cases = {
      {"cassette not JSON Lines",
       {"run", "--model", "cassette:c.jsonl", "x"},
       {{"c.jsonl", "{\"mecha_cassette\": 1}\nhello\n"}},
       1,
       "mecha: c.jsonl:2: invalid JSON at byte 1: syntax error while parsing value - invalid "
       "literal; last read: 'h'\n"},
      {"cassette unknown field",
       {"run", "--model", "cassette:c.jsonl", "x"},
       {{"c.jsonl",
         "{\"mecha_cassette\": 1}\n{\"response\": {\"content\": []}, \"agnt\": \"x\"}\n"}},
       1,
       "mecha: c.jsonl:2: unknown field \"agnt\"\n"},
      {"missing cassette",
       {"run", "--model", "cassette:nope.jsonl", "x"},
       {},
       1,
       "mecha: cannot open cassette nope.jsonl: No such file or directory\n"},
      {"config syntax error",
       {"run", "--config", "bad.toml", "x"},
       {{"bad.toml", "[providers\n"}},
       1,
       ""},
      {"unknown provider kind",
       {"run", "--config", "k.toml", "x"},
       {{"k.toml", "[providers.p]\nkind = \"gemini\"\n"}},
       1,
       "mecha: k.toml:2: unknown provider kind \"gemini\" in [providers.p] (expected \"openai\" or "
       "\"anthropic\")\n"},
      {"no provider at all",
       {"run", "x"},
       {},
       2,
       "mecha: no model to run: pass --model cassette:PATH, or add a [providers.NAME] table to "
       "~/.config/mecha/config.toml or .mecha/config.toml and pass --provider NAME\n"},
      {"unknown provider name",
       {"run", "--config", "p.toml", "--provider", "cloud", "x"},
       {{"p.toml", "[providers.local]\nkind = \"openai\"\nmodel = \"m\"\n"}},
       2,
       "mecha: no provider named 'cloud' in the config (p.toml); providers: local\n"},
      {"missing API key",
       {"run", "--config", "a.toml", "x"},
       {{"a.toml",
         "[providers.c]\nkind = \"anthropic\"\nmodel = \"m\"\napi_key_env = "
         "\"MECHA_TEST_NO_SUCH_KEY\"\n"}},
       1,
       "mecha: provider 'c' needs an API key: set the environment variable MECHA_TEST_NO_SUCH_KEY "
       "(named by api_key_env in [providers.c])\n"},
      {"unknown option", {"run", "--frobnicate", "x"}, {}, 2, ""},
      {"cassette exhausted",
       {"run", "--model", "cassette:c.jsonl", "x"},
       {{"c.jsonl", "{\"mecha_cassette\": 1}\n"}},
       1,
       ""},
  };
  for (const auto& c : cases) {
    TempDir dir;
    for (const auto& [name, content] : c.files) dir.write(name, content);
    auto r = run_mecha(c.args, dir.path());
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err) << c.name;
    }
    EXPECT_FALSE(r.err.empty()) << c.name;
  }
}

TEST(RunCommand, ExhaustedCassetteNamesTheAgentAndResponse) {
  TempDir dir;
  dir.write("c.jsonl", "{\"mecha_cassette\": 1}\n");
  auto r = run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "x"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  auto events = json_lines(r.out);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["status"], "error");
  EXPECT_EQ(events[0]["error"], "cassette exhausted: agent main asked for response 1");
}

TEST(RunCommand, VersionPrintsAndExitsZero) {
  TempDir dir;
  auto r = run_mecha({"--version"}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "mecha 0.1.0\n");
}

TEST(RunCommand, NoSubcommandIsAUsageError) {
  TempDir dir;
  auto r = run_mecha({}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "A subcommand is required\nRun with --help for more information.\n");
}

}  // namespace
}  // namespace mecha::cli
