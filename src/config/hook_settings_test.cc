#include "config/hook_settings.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "config/config.h"

namespace mecha::config {
namespace {

using std::chrono::milliseconds;

// The settings as text, so that a difference reads as one.
std::string dump(const std::map<HookEvent, std::vector<HookGroup>>& events) {
  std::string out;
  for (const auto& [event, groups] : events) {
    for (const auto& g : groups) {
      out += fmt::format("{} \"{}\":\n", hook_event_name(event), g.matcher);
      for (const auto& c : g.hooks) {
        out += fmt::format("  {} {}ms {}:{}\n", c.command, c.timeout.count(), c.origin.file,
                           c.origin.line);
      }
    }
  }
  return out;
}

HookCommand command(std::string text, int line, milliseconds timeout = milliseconds(60000),
                    std::string file = ".claude/settings.json") {
  return HookCommand{std::move(text), timeout, SettingOrigin{std::move(file), line}};
}

Result<HookSettings> read_json(const std::string& text,
                               const std::string& file = ".claude/settings.json") {
  auto doc = parse_json(text, file);
  if (!doc) return doc.status();
  HookSettings s;
  MECHA_RETURN_IF_ERROR(add_json_hooks(doc->at("hooks"), file, text, &s));
  return s;
}

TEST(HookEvent, NamesAreClaudeCodesAndAnUnknownOneListsThem) {
  for (const char* name : {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
                           "SessionStart", "SessionEnd", "PreCompact", "Notification"}) {
    auto event = parse_hook_event(name);
    ASSERT_TRUE(event.ok()) << name;
    EXPECT_EQ(hook_event_name(*event), name);
  }
  auto bad = parse_hook_event("pretooluse");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "unknown hook event \"pretooluse\" (events: PreToolUse, PostToolUse, UserPromptSubmit, "
            "Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification)");
}

// The shapes of Claude Code's hooks reference and guide, as a user's settings.json has them.
TEST(JsonHooks, ReadsTheShapesClaudeCodesDocumentationShows) {
  const std::string text = R"json({
  "permissions": {"allow": ["Bash(npm run lint)"]},
  "hooks": {
  "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq -r '\"\\(.tool_input.command) - \\(.tool_input.description // \"No description\")\"' >> ~/.claude/bash-command-log.txt"
          }
        ]
      },
      {
        "matcher": "Edit|MultiEdit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check-style.sh",
            "timeout": 30
          },
          {
            "type": "command",
            "command": "python3 -c 'import sys; sys.exit(0)'",
            "timeout": 0.5
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "mcp__memory__.*",
        "hooks": [{"type": "command", "command": "echo mcp"}]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/path/to/prompt-validator.py"
          }
        ]
      }
    ],
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "echo stop"}]}],
    "SessionStart": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo hi"}]}]
}
})json";
  auto s = read_json(text);
  ASSERT_TRUE(s.ok()) << s.message();
  std::map<HookEvent, std::vector<HookGroup>> expected = {
      {HookEvent::kPreToolUse,
       {HookGroup{"Bash",
                  {command("jq -r '\"\\(.tool_input.command) - \\(.tool_input.description // "
                           "\"No description\")\"' >> ~/.claude/bash-command-log.txt",
                           10)}},
        HookGroup{"Edit|MultiEdit|Write",
                  {command("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check-style.sh", 19,
                           milliseconds(30000)),
                   command("python3 -c 'import sys; sys.exit(0)'", 24, milliseconds(500))}}}},
      {HookEvent::kPostToolUse, {HookGroup{"mcp__memory__.*", {command("echo mcp", 33)}}}},
      {HookEvent::kUserPromptSubmit,
       {HookGroup{"", {command("/path/to/prompt-validator.py", 41)}}}},
      {HookEvent::kStop, {HookGroup{"", {command("echo stop", 46)}}}},
      {HookEvent::kSessionStart, {HookGroup{"*", {command("echo hi", 47)}}}},
  };
  EXPECT_EQ(dump(s->events), dump(expected));
  EXPECT_TRUE(s->notes.empty());
}

TEST(JsonHooks, AddsToWhatIsThereInMergeOrder) {
  HookSettings s;
  const std::string user =
      R"({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}})";
  const std::string project =
      "{\n\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"b\"}]}]}}";
  ASSERT_TRUE(add_json_hooks(parse_json(user, "u")->at("hooks"), "user.json", user, &s).ok());
  ASSERT_TRUE(
      add_json_hooks(parse_json(project, "p")->at("hooks"), "project.json", project, &s).ok());
  std::vector<HookGroup> expected = {
      HookGroup{"", {command("a", 1, milliseconds(60000), "user.json")}},
      HookGroup{"", {command("b", 2, milliseconds(60000), "project.json")}}};
  EXPECT_EQ(s.events.at(HookEvent::kStop), expected);
}

TEST(JsonHooks, AMistakeIsAnErrorNamingFileLineAndWhatIsWrong) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"{\n\"hooks\": [1]\n}",
       ".claude/settings.json:2: \"hooks\" must be an object of events, not array"},
      {"{\n\"hooks\": {\n  \"Stop\": {\"hooks\": []}\n}}",
       ".claude/settings.json:3: hooks.Stop must be an array of matcher groups, not object"},
      {"{\"hooks\": {\n\"Stop\": [\n{\"hooks\": [\n{\"command\": \"x\"}]}]}}",
       ".claude/settings.json:3: hooks.Stop[0].hooks[0] needs \"type\": \"command\""},
      {"{\"hooks\": {\n\"Stop\": [\n{\"hooks\": [\n{\"type\": \"command\"}]}]}}",
       ".claude/settings.json:4: hooks.Stop[0].hooks[0] needs \"command\", a string that is not "
       "empty"},
      {"{\"hooks\": {\n\"Stop\": [\n{\"hooks\": [{\"type\": \"command\", \"command\": \"x\",\n"
       "\"timeout\": -1}]}]}}",
       ".claude/settings.json:4: hooks.Stop[0].hooks[0]: timeout must be a positive number of "
       "seconds up to 86400, not -1"},
      {"{\"hooks\": {\n\"Stop\": [\n{\"hooks\": [{\"type\": \"command\", \"command\": \"x\",\n"
       "\"timeout\": \"30\"}]}]}}",
       ".claude/settings.json:4: hooks.Stop[0].hooks[0]: timeout must be a number of seconds, "
       "not string"},
      {"{\"hooks\": {\n\"Stop\": [\n{\"hooks\": [{\"type\": \"command\", \"command\": \"x\",\n"
       "\"timeout\": 0}]}]}}",
       ".claude/settings.json:4: hooks.Stop[0].hooks[0]: timeout must be a positive number of "
       "seconds up to 86400, not 0"},
      {"{\"hooks\": {\n\"PreToolUse\": [\n{\"matcher\": \"Bash\",\n\"hook\": []}]}}",
       ".claude/settings.json:4: unknown key \"hook\" in hooks.PreToolUse[0] (keys: matcher, "
       "hooks)"},
      {"{\"hooks\": {\n\"PreToolUse\": [\n{\"matcher\": \"Bash\"}]}}",
       ".claude/settings.json:3: hooks.PreToolUse[0] needs \"hooks\", an array of commands"},
      {"{\"hooks\": {\n\"PreToolUse\": [\n{\n\"matcher\": \"Edit(\", \"hooks\": []}]}}",
       ".claude/settings.json:4: hooks.PreToolUse[0]: matcher \"Edit(\" is not a valid regular "
       "expression: missing ): Edit("},
      {"{\"hooks\": {\n\"PreToolUse\": [\n{\n\"matcher\": [\"Bash\"], \"hooks\": []}]}}",
       ".claude/settings.json:4: hooks.PreToolUse[0].matcher must be a string, not array"},
  };
  for (const Case& c : cases) {
    auto s = read_json(c.text);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.message(), c.error) << c.text;
  }
}

// The file is Claude Code's too: an event mecha does not run, a hook of another type and a
// key mecha does not read are notes, and the rest of the file still counts.
TEST(JsonHooks, WhatClaudeCodeKnowsAndMechaDoesNotIsANote) {
  const std::string text =
      "{\"hooks\": {\n"
      "\"PermissionRequest\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"a\"}]}],\n"
      "\"Stop\": [{\"hooks\": [\n"
      "{\"type\": \"prompt\", \"prompt\": \"done?\"},\n"
      "{\"type\": \"command\", \"command\": \"b\", \"statusMessage\": \"checking\"}]}]}}";
  HookSettings s;
  Status st = add_json_hooks(parse_json(text, "t")->at("hooks"), ".claude/settings.json", text, &s);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(s.events.size(), 1u);
  ASSERT_EQ(s.events.at(HookEvent::kStop).size(), 1u);
  ASSERT_EQ(s.events.at(HookEvent::kStop)[0].hooks.size(), 1u);
  EXPECT_EQ(s.events.at(HookEvent::kStop)[0].hooks[0].command, "b");
  EXPECT_EQ(s.notes,
            (std::vector<std::string>{
                ".claude/settings.json:2: unknown hook event \"PermissionRequest\" (events: "
                "PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, "
                "SessionEnd, PreCompact, Notification); its hooks are left out",
                ".claude/settings.json:4: hooks.Stop[0].hooks[0] has type \"prompt\"; mecha runs "
                "only hooks of type \"command\", so it is left out",
                ".claude/settings.json:5: hooks.Stop[0].hooks[1]: key \"statusMessage\" is not one "
                "mecha reads; ignored"}));
}

TEST(TomlHooks, ReadsTheSameShapeFromMechasConfig) {
  auto c = parse_config(R"([[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./check.sh"
timeout = 5

[[hooks.PreToolUse.hooks]]
type = "command"
command = "./log.sh"

[[hooks.Stop]]
hooks = [{ type = "command", command = "echo done", timeout = 1.5 }]
)",
                        "config.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  std::map<HookEvent, std::vector<HookGroup>> expected = {
      {HookEvent::kPreToolUse,
       {HookGroup{"Bash",
                  {command("./check.sh", 5, milliseconds(5000), "config.toml"),
                   command("./log.sh", 10, milliseconds(60000), "config.toml")}}}},
      {HookEvent::kStop,
       {HookGroup{"", {command("echo done", 13, milliseconds(1500), "config.toml")}}}},
  };
  EXPECT_EQ(dump(c->hooks.events), dump(expected));
}

TEST(TomlHooks, AMistakeIsAnErrorNamingFileLineAndWhatIsWrong) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"[hooks]\nPreToolUse = \"./check.sh\"\n",
       "config.toml:2: hooks.PreToolUse must be an array of tables: [[hooks.PreToolUse]] with "
       "matcher and [[hooks.PreToolUse.hooks]]"},
      {"[[hooks.BeforeTool]]\nhooks = []\n",
       "config.toml:1: unknown hook event \"BeforeTool\" (events: PreToolUse, PostToolUse, "
       "UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, "
       "Notification)"},
      {"[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n",
       "config.toml:1: [[hooks.PreToolUse]] needs 'hooks'"},
      {"[[hooks.PreToolUse]]\nmatcher = \"(\"\nhooks = []\n",
       "config.toml:2: key 'matcher' in [[hooks.PreToolUse]]: matcher \"(\" is not a valid "
       "regular expression: missing ): ("},
      {"[[hooks.PreToolUse]]\nmatchers = \"Bash\"\nhooks = []\n",
       "config.toml:2: unknown key 'matchers' in [[hooks.PreToolUse]] (keys: hooks, matcher)"},
      {"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"prompt\"\ncommand = \"x\"\n",
       "config.toml:3: key 'type' in [[hooks.Stop.hooks]] must be \"command\""},
      {"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\n",
       "config.toml:2: [[hooks.Stop.hooks]] needs 'command'"},
      {"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"x\"\ntimeout = -2\n",
       "config.toml:5: key 'timeout' in [[hooks.Stop.hooks]]: timeout must be a positive number "
       "of seconds up to 86400, not -2"},
      {"[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"x\"\nasync = true\n",
       "config.toml:5: unknown key 'async' in [[hooks.Stop.hooks]] (keys: command, timeout, "
       "type)"},
  };
  for (const Case& c : cases) {
    auto config = parse_config(c.text, "config.toml");
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.message(), c.error) << c.text;
  }
}

}  // namespace
}  // namespace mecha::config
