// `mecha run` end to end: the built binary as a child process.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/strict_json.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

const char* kRunTwoTurns = R"({"mecha_cassette": 1, "note": "test"}
{"agent": "main", "response": {"content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "Nope", "input": {"pattern": "ERROR"}}], "stop_reason": "tool_use", "usage": {"input_tokens": 120, "output_tokens": 30}}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "found 2 errors"}], "stop_reason": "end_turn", "usage": {"input_tokens": 180, "output_tokens": 6}}}
)";

TEST(RunCommand, HumanModePrintsTheAnswerOnStdoutAndProgressOnStderr) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
  auto r = run_mecha({"run", "--model", "cassette:c.jsonl", "find errors"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "found 2 errors\n");
  EXPECT_NE(r.err.find("Looking.\n● Nope(pattern=\"ERROR\")\n  ⎿ error: unknown tool 'Nope'"),
            std::string::npos)
      << r.err;
}

// mecha ignores SIGPIPE so that a shell or server that goes away cannot kill it, but a
// reader of its own output that goes away (`| head -1`) still ends the run, as the signal
// did: the second call never runs.
TEST(RunCommand, AReaderOfTheOutputThatGoesAwayEndsTheRun) {
  TempDir dir;
  dir.write(".home/.config/mecha/config.toml", "[sandbox]\nmode = \"off\"\n");
  dir.write("c.jsonl", std::string(R"({"mecha_cassette": 1}
{"agent": "main", "response": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 0.5; echo one"}}], "stop_reason": "tool_use"}}
{"agent": "main", "response": {"content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "touch ran-t2"}}], "stop_reason": "tool_use"}}
{"agent": "main", "response": {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}}
)"));
  const std::string line = testing::mecha_binary() +
                           " run --json --permission-mode bypassPermissions --model "
                           "cassette:c.jsonl go | head -1 >/dev/null; echo ${PIPESTATUS[0]}";
  auto r = run_mecha({"-c", line}, dir.path(), "", "/bin/bash");
  EXPECT_EQ(r.out, "141\n") << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "ran-t2"));
}

TEST(RunCommand, JsonModePrintsOneEventPerLineEndingWithDone) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
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
  dir.write("c.jsonl", kRunTwoTurns);
  auto r = run_mecha({"run", "--json", "--max-turns", "1", "--model", "cassette:c.jsonl", "x"},
                     dir.path());
  EXPECT_EQ(r.exit_code, 3);
  auto events = json_lines(r.out);
  EXPECT_EQ(events.back()["status"], "limits_exceeded");
  EXPECT_EQ(events.back()["limit"], "max_turns (1)");
}

TEST(RunCommand, RecordWritesACassetteThatReplaysTheSameRun) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
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

// As cargo and docker do: help on stdout, exit 0 (a newcomer's first command is no error).
TEST(RunCommand, PlainMechaPrintsHelpAndExitsZero) {
  TempDir dir;
  auto r = run_mecha({}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("mecha: run language-model agents with tools, safely\nUsage: mecha", 0), 0u)
      << r.out;
  for (const char* sub : {"\n  run ", "\n  chat ", "\n  sessions ", "\n  agents "}) {
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub << " missing from\n" << r.out;
  }
}

TEST(RunCommand, UsageErrorsAreOneLineNamingWhatWasWrong) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"--max-turns", "0"},
       "mecha: --max-turns: expected a whole number of at least 1, got '0' (see mecha run "
       "--help)\n"},
      {{"--max-turns", "abc"},
       "mecha: --max-turns: expected a whole number of at least 1, got 'abc' (see mecha run "
       "--help)\n"},
      {{"--max-turns", "2.5"},
       "mecha: --max-turns: expected a whole number of at least 1, got '2.5' (see mecha run "
       "--help)\n"},
      {{"--max-time", "-1"},
       "mecha: --max-time: expected a number greater than 0, got '-1' (see mecha run --help)\n"},
      {{"--max-time", "0"},
       "mecha: --max-time: expected a number greater than 0, got '0' (see mecha run --help)\n"},
      {{"--max-cost", "x"},
       "mecha: --max-cost: expected a number greater than 0, got 'x' (see mecha run --help)\n"},
      {{"--bogus"},
       "mecha: The following argument was not expected: --bogus (see mecha run --help)\n"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"run", "--model", "cassette:c.jsonl"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.push_back("find errors");
    auto r = run_mecha(args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << c.args[0];
    EXPECT_EQ(r.out, "") << c.args[0];
    EXPECT_EQ(r.err, c.err);
  }
  // The same values in range run.
  auto ok = run_mecha({"run", "--model", "cassette:c.jsonl", "--max-turns", "3", "--max-time",
                       "0.5e2", "--max-cost", "0.25", "find errors"},
                      dir.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "found 2 errors\n");
  auto nested = run_mecha({"sessions", "show"}, dir.path());
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_EQ(nested.err, "mecha: id is required (see mecha sessions show --help)\n");
}

// The prompt the session recorded for the last run in `dir`.
std::string recorded_prompt(const std::filesystem::path& dir) {
  auto r = run_mecha({"sessions", "export", "last"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const Json& rec : json_lines(r.out)) {
    if (rec.at("kind") == "user_message") {
      return rec.at("body").at("message").at("content").at(0).at("text");
    }
  }
  return "(no user_message in the session)";
}

TEST(RunCommand, TheTaskMayBeSeveralWordsWithoutQuotes) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
  auto r = run_mecha({"run", "--model", "cassette:c.jsonl", "find", "the", "errors", "--json"},
                     dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_lines(r.out).back().at("text"), "found 2 errors") << "--json after the words";
  EXPECT_EQ(recorded_prompt(dir.path()), "find the errors");
}

TEST(RunCommand, DashReadsTheTaskFromStdin) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
  auto r = run_mecha({"run", "--model", "cassette:c.jsonl", "-"}, dir.path(),
                     "find the errors\nin log.txt, all of them\n\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "found 2 errors\n");
  EXPECT_EQ(recorded_prompt(dir.path()), "find the errors\nin log.txt, all of them");
}

TEST(RunCommand, AMissingOrEmptyTaskIsAUsageError) {
  TempDir dir;
  dir.write("c.jsonl", kRunTwoTurns);
  struct Case {
    std::vector<std::string> words;
    std::string stdin_text;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{},
       "",
       "mecha: no task given: mecha run WHAT TO DO, or mecha run - to read it from stdin\n"},
      {{"-"}, " \n\n", "mecha: the task on stdin is empty\n"},
      {{"fix", "-"},
       "",
       "mecha: '-' reads the task from stdin and takes no other words: give the words or '-'\n"},
      {{"  "},
       "",
       "mecha: the task is empty: mecha run WHAT TO DO, or mecha run - to read it from stdin\n"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"run", "--model", "cassette:c.jsonl"};
    args.insert(args.end(), c.words.begin(), c.words.end());
    auto r = run_mecha(args, dir.path(), c.stdin_text);
    EXPECT_EQ(r.exit_code, 2) << c.err;
    EXPECT_EQ(r.err, c.err);
  }
}

}  // namespace
}  // namespace mecha::cli
