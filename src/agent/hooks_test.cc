#include "agent/hooks.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "base/process_state.h"
#include "base/testing/wait_until.h"
#include "store/testing/temp_dir.h"

namespace mecha::agent {
namespace {

using config::HookEvent;
using std::chrono::milliseconds;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

config::HookCommand hook(std::string command, int line,
                         milliseconds timeout = milliseconds(60000)) {
  return config::HookCommand{std::move(command), timeout,
                             config::SettingOrigin{"settings.json", line}};
}

// One event's groups, each (matcher, commands).
config::HookSettings settings_of(HookEvent event, std::vector<config::HookGroup> groups) {
  config::HookSettings s;
  s.events[event] = std::move(groups);
  return s;
}

class HookRunnerTest : public ::testing::Test {
 protected:
  HookInput tool_call(std::string tool = "Bash") const {
    HookInput in;
    in.event = HookEvent::kPreToolUse;
    in.session_id = "s-1";
    in.transcript_path = "/tmp/t.jsonl";
    in.cwd = dir_.path().string();
    in.tool_name = std::move(tool);
    in.tool_input = Json{{"command", "rm -rf build"}};
    in.tool_use_id = "toolu_1";
    return in;
  }
  HookResult run_one(HookEvent event, const std::string& command, HookInput in) const {
    HookRunner runner(settings_of(event, {config::HookGroup{"", {hook(command, 7)}}}));
    in.event = event;
    return runner.run(in, nullptr);
  }
  std::string label(const std::string& command, int line = 7) const {
    return "settings.json:" + std::to_string(line) + ": " + command;
  }
  store::testing::TempDir dir_;
};

TEST_F(HookRunnerTest, ExitZeroStdoutIsANoteForTheUser) {
  const std::string cmd = "echo checked";
  HookResult r = run_one(HookEvent::kPreToolUse, cmd, tool_call());
  EXPECT_EQ(r.decision, HookDecision::kNone);
  EXPECT_EQ(r.notes, std::vector<std::string>{"PreToolUse hook " + label(cmd) + ": checked"});
  EXPECT_EQ(r.additional_context, "");
  EXPECT_EQ(r.hooks_run, 1);
}

TEST_F(HookRunnerTest, ExitZeroStdoutOfAPromptOrSessionStartIsContextForTheModel) {
  HookInput in = tool_call();
  in.prompt = "fix it";
  HookResult r = run_one(HookEvent::kUserPromptSubmit, "echo 'branch: main'", in);
  EXPECT_EQ(r.additional_context, "branch: main");
  EXPECT_TRUE(r.notes.empty());
  in.source = "startup";
  r = run_one(HookEvent::kSessionStart, "echo 'tests: 3 failing'", in);
  EXPECT_EQ(r.additional_context, "tests: 3 failing");
}

TEST_F(HookRunnerTest, ExitTwoBlocksWithStderrAsTheReason) {
  const std::string cmd = "echo 'rm is not allowed here' >&2; echo ignored; exit 2";
  HookResult r = run_one(HookEvent::kPreToolUse, cmd, tool_call());
  EXPECT_EQ(r.decision, HookDecision::kBlock);
  EXPECT_EQ(r.reason, "rm is not allowed here");
  EXPECT_EQ(r.hook, label(cmd));
  EXPECT_TRUE(r.notes.empty());
}

TEST_F(HookRunnerTest, ExitTwoOfAnEventThatCannotBeBlockedIsANote) {
  HookInput in = tool_call();
  in.reason = "exit";
  const std::string cmd = "echo 'cannot stop this' >&2; exit 2";
  HookResult r = run_one(HookEvent::kSessionEnd, cmd, in);
  EXPECT_EQ(r.decision, HookDecision::kNone);
  EXPECT_EQ(r.notes, std::vector<std::string>{"SessionEnd hook " + label(cmd) +
                                              " (exit 2): cannot stop this"});
}

TEST_F(HookRunnerTest, AnotherExitCodeIsAWarningAndTheRunGoesOn) {
  const std::string cmd = "echo 'jq: not found' >&2; exit 1";
  HookResult r = run_one(HookEvent::kPreToolUse, cmd, tool_call());
  EXPECT_EQ(r.decision, HookDecision::kNone);
  EXPECT_EQ(r.notes, std::vector<std::string>{"PreToolUse hook " + label(cmd) +
                                              " failed with exit code 1: jq: not found"});
}

TEST_F(HookRunnerTest, JsonPermissionDecisions) {
  struct Case {
    std::string json;
    HookDecision decision;
    std::string reason;
  };
  const Case cases[] = {
      {R"({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
          "permissionDecisionReason": "rm -rf is refused by policy"}})",
       HookDecision::kBlock, "rm -rf is refused by policy"},
      {R"({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
          "permissionDecisionReason": "build dir is scratch"}})",
       HookDecision::kAllow, "build dir is scratch"},
      {R"({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
          "permissionDecisionReason": "deletes files"}})",
       HookDecision::kAsk, "deletes files"},
      // The older spelling Claude Code still reads.
      {R"({"decision": "block", "reason": "old style"})", HookDecision::kBlock, "old style"},
      {R"({"decision": "approve", "reason": "fine"})", HookDecision::kAllow, "fine"},
  };
  for (const Case& c : cases) {
    dir_.write("answer.json", c.json);
    const std::string cmd = "cat answer.json";
    HookResult r = run_one(HookEvent::kPreToolUse, cmd, tool_call());
    EXPECT_EQ(r.decision, c.decision) << c.json;
    EXPECT_EQ(r.reason, c.reason) << c.json;
    EXPECT_EQ(r.hook, label(cmd)) << c.json;
    EXPECT_TRUE(r.notes.empty()) << c.json;
  }
}

// A JSON answer mecha cannot read is a warning, not half taken; stdout that is not JSON at
// all is plain text.
TEST_F(HookRunnerTest, AnAnswerOfTheWrongShapeIsAWarning) {
  dir_.write("answer.json", R"({"hookSpecificOutput": {"permissionDecision": "maybe"}})");
  HookResult r = run_one(HookEvent::kPreToolUse, "cat answer.json", tool_call());
  EXPECT_EQ(r.decision, HookDecision::kNone);
  EXPECT_EQ(r.notes, std::vector<std::string>{
                         "PreToolUse hook " + label("cat answer.json") +
                         " answered JSON that mecha cannot use (\"permissionDecision\" is "
                         "\"maybe\", not \"allow\", \"deny\" or \"ask\"); its answer is ignored"});
  r = run_one(HookEvent::kPreToolUse, "echo '{not json'", tool_call());
  EXPECT_EQ(r.notes, std::vector<std::string>{"PreToolUse hook " + label("echo '{not json'") +
                                              ": {not json"});
}

TEST_F(HookRunnerTest, UpdatedInputChangesTheCallAndTheLaterHooksSeeIt) {
  dir_.write("answer.json", R"({"hookSpecificOutput": {"hookEventName": "PreToolUse",
      "permissionDecision": "allow", "updatedInput": {"command": "rm -rf build/tmp"}}})");
  HookRunner runner(settings_of(
      HookEvent::kPreToolUse,
      {config::HookGroup{"Bash", {hook("cat answer.json", 3), hook("cat > seen.json", 4)}}}));
  HookResult r = runner.run(tool_call(), nullptr);
  ASSERT_TRUE(r.updated_input.has_value());
  EXPECT_EQ(*r.updated_input, (Json{{"command", "rm -rf build/tmp"}}));
  EXPECT_EQ(r.decision, HookDecision::kAllow);
  EXPECT_EQ(r.hooks_run, 2);
  auto seen = parse_json(slurp(dir_.path() / "seen.json"), "seen");
  ASSERT_TRUE(seen.ok()) << seen.message();
  EXPECT_EQ((*seen)["tool_input"], (Json{{"command", "rm -rf build/tmp"}}));
}

TEST_F(HookRunnerTest, AdditionalContextAndSystemMessage) {
  dir_.write("answer.json", R"({"systemMessage": "lint ran",
      "hookSpecificOutput": {"hookEventName": "PostToolUse",
                             "additionalContext": "2 lint warnings in src/a.cc"}})");
  HookInput in = tool_call();
  in.tool_response = Json{{"content", "ok"}, {"is_error", false}};
  HookResult r = run_one(HookEvent::kPostToolUse, "cat answer.json", in);
  EXPECT_EQ(r.additional_context, "2 lint warnings in src/a.cc");
  EXPECT_EQ(r.notes, std::vector<std::string>{"PostToolUse hook " + label("cat answer.json") +
                                              ": lint ran"});
  EXPECT_EQ(r.decision, HookDecision::kNone);
}

TEST_F(HookRunnerTest, ContinueFalseEndsTheRunAndTheRestDoNotRun) {
  dir_.write("answer.json", R"({"continue": false, "stopReason": "budget spent"})");
  HookRunner runner(
      settings_of(HookEvent::kPreToolUse,
                  {config::HookGroup{"", {hook("cat answer.json", 3), hook("touch after", 4)}}}));
  HookResult r = runner.run(tool_call(), nullptr);
  EXPECT_TRUE(r.stop);
  EXPECT_EQ(r.stop_reason, "budget spent");
  EXPECT_EQ(r.hook, label("cat answer.json", 3));
  EXPECT_EQ(r.hooks_run, 1);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "after"));
}

// Reparented to an init that does not reap, it is a zombie: dead, holding nothing.
bool process_gone(pid_t pid) { return !process_alive(pid); }

TEST_F(HookRunnerTest, AHookThatHangsIsKilledWithItsChildrenAndTheRunGoesOn) {
  const std::string hang = "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait";
  HookRunner runner(settings_of(
      HookEvent::kPreToolUse,
      {config::HookGroup{"", {hook(hang, 3, milliseconds(1000)), hook("echo next", 4)}}}));
  auto start = std::chrono::steady_clock::now();
  HookResult r = runner.run(tool_call(), nullptr);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_GE(took, milliseconds(900));
  EXPECT_EQ(r.decision, HookDecision::kNone);
  EXPECT_EQ(r.hooks_run, 2);
  EXPECT_EQ(r.notes,
            (std::vector<std::string>{"PreToolUse hook " + label(hang, 3) +
                                          " timed out after 1 s and was killed with its "
                                          "processes; the run goes on",
                                      "PreToolUse hook " + label("echo next", 4) + ": next"}));
  ASSERT_FALSE(process_gone(::getpid()));  // the check tells a live process from a dead one
  for (const char* file : {"child.pid", "shell.pid"}) {
    std::string text = slurp(dir_.path() / file);
    ASSERT_FALSE(text.empty()) << file;
    pid_t pid = std::stoi(text);
    EXPECT_TRUE(mecha::testing::wait_until([&] { return process_gone(pid); }, milliseconds(10000)))
        << file << " " << pid << " is still alive";
  }
}

TEST_F(HookRunnerTest, MatchersAreFullRegularExpressionsOverTheToolName) {
  HookRunner runner(
      settings_of(HookEvent::kPreToolUse,
                  {config::HookGroup{"Edit|Write", {hook("echo edit-or-write >> ran", 1)}},
                   config::HookGroup{"mcp__.*", {hook("echo mcp >> ran", 2)}},
                   config::HookGroup{"Edit", {hook("echo edit >> ran", 3)}},
                   config::HookGroup{"*", {hook("echo star >> ran", 4)}},
                   config::HookGroup{"", {hook("echo all >> ran", 5)}}}));
  struct Case {
    std::string tool;
    std::string ran;
  };
  const Case cases[] = {
      {"Edit", "edit-or-write\nedit\nstar\nall\n"},
      {"Write", "edit-or-write\nstar\nall\n"},
      {"MultiEdit", "star\nall\n"},  // "Edit" is the whole name, not a part of it
      {"mcp__github__create_issue", "mcp\nstar\nall\n"},
      {"Bash", "star\nall\n"},
  };
  for (const Case& c : cases) {
    std::filesystem::remove(dir_.path() / "ran");
    HookResult r = runner.run(tool_call(c.tool), nullptr);
    EXPECT_EQ(slurp(dir_.path() / "ran"), c.ran) << c.tool;
    EXPECT_TRUE(runner.wants(HookEvent::kPreToolUse, c.tool));
  }
  HookRunner narrow(
      settings_of(HookEvent::kPreToolUse, {config::HookGroup{"Edit|Write", {hook("true", 1)}}}));
  EXPECT_TRUE(narrow.wants(HookEvent::kPreToolUse, "Write"));
  EXPECT_FALSE(narrow.wants(HookEvent::kPreToolUse, "Bash"));
  EXPECT_FALSE(narrow.wants(HookEvent::kPostToolUse, "Write"));
  // Events without a matcher ignore it.
  HookRunner stop(settings_of(HookEvent::kStop, {config::HookGroup{"Bash", {hook("true", 1)}}}));
  EXPECT_TRUE(stop.wants(HookEvent::kStop));
}

TEST_F(HookRunnerTest, StdinCarriesClaudeCodesFields) {
  HookInput in = tool_call();
  in.permission_mode = config::PermissionMode::kAcceptEdits;
  run_one(HookEvent::kPreToolUse, "cat > stdin.json", in);
  auto pre = parse_json(slurp(dir_.path() / "stdin.json"), "stdin");
  ASSERT_TRUE(pre.ok()) << pre.message();
  EXPECT_EQ(*pre, (Json{{"session_id", "s-1"},
                        {"transcript_path", "/tmp/t.jsonl"},
                        {"cwd", dir_.path().string()},
                        {"permission_mode", "acceptEdits"},
                        {"hook_event_name", "PreToolUse"},
                        {"tool_name", "Bash"},
                        {"tool_input", {{"command", "rm -rf build"}}},
                        {"tool_use_id", "toolu_1"}}));

  in.tool_response = Json{{"content", "removed"}, {"is_error", false}};
  run_one(HookEvent::kPostToolUse, "cat > stdin.json", in);
  auto post = parse_json(slurp(dir_.path() / "stdin.json"), "stdin");
  ASSERT_TRUE(post.ok()) << post.message();
  EXPECT_EQ((*post)["hook_event_name"], "PostToolUse");
  EXPECT_EQ((*post)["tool_response"], (Json{{"content", "removed"}, {"is_error", false}}));

  struct Case {
    HookEvent event;
    Json fields;
  };
  HookInput other = tool_call();
  other.prompt = "the prompt";
  other.source = "resume";
  other.reason = "logout";
  other.message = "needs your permission";
  other.stop_hook_active = true;
  const Case cases[] = {
      {HookEvent::kUserPromptSubmit, {{"prompt", "the prompt"}}},
      {HookEvent::kStop, {{"stop_hook_active", true}}},
      {HookEvent::kSubagentStop, {{"stop_hook_active", true}}},
      {HookEvent::kSessionStart, {{"source", "resume"}}},
      {HookEvent::kSessionEnd, {{"reason", "logout"}}},
      {HookEvent::kPreCompact, {{"trigger", "resume"}, {"custom_instructions", "the prompt"}}},
      {HookEvent::kNotification, {{"message", "needs your permission"}}},
  };
  for (const Case& c : cases) {
    run_one(c.event, "cat > stdin.json", other);
    auto got = parse_json(slurp(dir_.path() / "stdin.json"), "stdin");
    ASSERT_TRUE(got.ok()) << got.message();
    Json expected = {{"session_id", "s-1"},
                     {"transcript_path", "/tmp/t.jsonl"},
                     {"cwd", dir_.path().string()},
                     {"permission_mode", "default"},
                     {"hook_event_name", config::hook_event_name(c.event)}};
    expected.update(c.fields);
    EXPECT_EQ(*got, expected) << config::hook_event_name(c.event);
  }
}

TEST_F(HookRunnerTest, HooksRunInOrderAndTheFirstBlockStopsTheRest) {
  HookRunner runner(settings_of(
      HookEvent::kPreToolUse,
      {config::HookGroup{"Bash", {hook("echo a >> order", 1), hook("echo b >> order", 2)}},
       config::HookGroup{
           "",
           {hook("echo c >> order; echo 'c says no' >&2; exit 2", 3), hook("echo d >> order", 4)}},
       config::HookGroup{"", {hook("echo e >> order", 5)}}}));
  HookResult r = runner.run(tool_call(), nullptr);
  EXPECT_EQ(slurp(dir_.path() / "order"), "a\nb\nc\n");
  EXPECT_EQ(r.decision, HookDecision::kBlock);
  EXPECT_EQ(r.reason, "c says no");
  EXPECT_EQ(r.hook, label("echo c >> order; echo 'c says no' >&2; exit 2", 3));
  EXPECT_EQ(r.hooks_run, 3);
}

// A deny after an allow wins; an ask after an allow wins over it.
TEST_F(HookRunnerTest, TheStrongestDecisionWins) {
  dir_.write("allow.json", R"({"hookSpecificOutput": {"permissionDecision": "allow"}})");
  dir_.write(
      "ask.json",
      R"({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "q"}})");
  HookRunner runner(settings_of(
      HookEvent::kPreToolUse,
      {config::HookGroup{
          "",
          {hook("cat allow.json", 1), hook("cat ask.json", 2), hook("cat allow.json; true", 3)}}}));
  HookResult r = runner.run(tool_call(), nullptr);
  EXPECT_EQ(r.decision, HookDecision::kAsk);
  EXPECT_EQ(r.reason, "q");
  EXPECT_EQ(r.hook, label("cat ask.json", 2));
}

TEST_F(HookRunnerTest, TheProjectDirectoryIsSetAndIsTheWorkingDirectory) {
  run_one(
      HookEvent::kPreToolUse,
      "printf '%s\\n%s\\n%s' \"$CLAUDE_PROJECT_DIR\" \"$MECHA_PROJECT_DIR\" \"$(pwd)\" > env.txt",
      tool_call());
  const std::string tree = dir_.path().string();
  EXPECT_EQ(slurp(dir_.path() / "env.txt"), tree + "\n" + tree + "\n" + tree);
}

TEST_F(HookRunnerTest, TheSameCommandListedTwiceRunsOnce) {
  HookRunner runner(
      settings_of(HookEvent::kStop, {config::HookGroup{"", {hook("echo x >> ran", 1)}},
                                     config::HookGroup{"", {hook("echo x >> ran", 9)}}}));
  HookInput in = tool_call();
  in.event = HookEvent::kStop;
  HookResult r = runner.run(in, nullptr);
  EXPECT_EQ(slurp(dir_.path() / "ran"), "x\n");
  EXPECT_EQ(r.hooks_run, 1);
}

}  // namespace
}  // namespace mecha::agent
