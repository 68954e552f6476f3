#include "providers/text_tools.h"

#include <gtest/gtest.h>

#include <deque>

namespace mecha::providers {
namespace {

// Answers with scripted texts in order and keeps every request it got.
class ScriptedText final : public Provider {
 public:
  explicit ScriptedText(std::deque<std::pair<std::string, std::string>> replies)
      : replies_(std::move(replies)) {}
  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink*) override {
    requests.push_back(request);
    if (replies_.empty()) return Status::error("script exhausted");
    CompletionResponse r;
    r.message = Message::assistant_text(replies_.front().first);
    r.stop_reason = replies_.front().second;
    r.usage = Usage{100, 20, 0, 0};
    r.model = "m";
    replies_.pop_front();
    return r;
  }
  std::string model() const override { return "m"; }
  std::vector<CompletionRequest> requests;

 private:
  std::deque<std::pair<std::string, std::string>> replies_;
};

CompletionRequest task(std::string text) {
  CompletionRequest r;
  r.system = "You are a coding agent.";
  r.messages.push_back(Message::user_text(std::move(text)));
  r.tools = {{"Read", "Reads a file.",
              Json::parse(R"({"type":"object","properties":{"file_path":{"type":"string"}}})")},
             {"Bash", "Runs a command.",
              Json::parse(R"({"type":"object","properties":{"command":{"type":"string"}}})")}};
  return r;
}

TEST(ParseTextReply, OneBashBlockIsABashCall) {
  ParsedReply p =
      parse_text_reply("Let me look.\n```bash\nls -la\ncat x | wc -l\n```\n", "end_turn");
  ASSERT_TRUE(p.action) << p.error;
  EXPECT_EQ(p.action->tool, "Bash");
  EXPECT_EQ(p.action->input, (Json{{"command", "ls -la\ncat x | wc -l"}}));
}

TEST(ParseTextReply, OneJsonBlockNamesATool) {
  ParsedReply p = parse_text_reply(
      "```json\n{\"tool\": \"Read\", \"input\": {\"file_path\": \"a.txt\"}}\n```", "end_turn");
  ASSERT_TRUE(p.action) << p.error;
  EXPECT_EQ(p.action->tool, "Read");
  EXPECT_EQ(p.action->input, (Json{{"file_path", "a.txt"}}));
}

TEST(ParseTextReply, OtherFencesAreNotActions) {
  ParsedReply p =
      parse_text_reply("Here is the fix:\n```python\nprint(1)\n```\n```bash\npytest\n```", "stop");
  ASSERT_TRUE(p.action) << p.error;
  EXPECT_EQ(p.action->input, (Json{{"command", "pytest"}}));
}

TEST(ParseTextReply, WhatIsNotOneActionIsAnErrorThatSaysWhy) {
  struct Case {
    std::string text, stop, error;
  };
  const std::vector<Case> cases = {
      {"I think we are done.", "end_turn", "the reply has no action (no ```bash or ```json block)"},
      {"", "end_turn", "the reply is empty: it has no action"},
      {"Let me think about this at length and", "max_tokens",
       "the reply has no action (no ```bash or ```json block); the reply was cut off at the "
       "output token limit, so write less before the block"},
      {"```bash\nls\n```\n```bash\npwd\n```", "end_turn",
       "the reply has 2 actions (```bash or ```json blocks); exactly one is allowed per reply"},
      {"```bash\ncat <<EOF > a\n", "max_tokens",
       "the ```bash block is not closed with ```; the reply was cut off at the output token "
       "limit, so write less before the block"},
      {"```bash\n\n```", "end_turn", "the ```bash block is empty: it needs a command"},
      {"```json\n[1]\n```", "end_turn",
       "the ```json block must be an object {\"tool\": \"NAME\", \"input\": {...}}, not array"},
      {"```json\n{\"tool\": \"Read\", \"args\": {}}\n```", "end_turn",
       "the ```json block has the key 'args'; it takes only \"tool\" and \"input\""},
      {"```json\n{\"input\": {}}\n```", "end_turn",
       "the ```json block needs \"tool\": the name of a tool, as a string"},
      {"```json\n{\"tool\": \"Read\", \"input\": \"a.txt\"}\n```", "end_turn",
       "the ```json block's \"input\" must be an object, not string"},
  };
  for (const auto& c : cases) {
    ParsedReply p = parse_text_reply(c.text, c.stop);
    EXPECT_FALSE(p.action) << c.text;
    EXPECT_EQ(p.error, c.error) << c.text;
  }
}

TEST(RenderTextTemplate, ValuesAreNotExpandedAgain) {
  EXPECT_EQ(render_text_template(
                "{{error}} / {{finish_reason}} / {{other}}",
                {{"error", "output says {{finish_reason}}"}, {"finish_reason", "max_tokens"}}),
            "output says {{finish_reason}} / max_tokens / {{other}}");
}

TEST(TextToolsProvider, ToolsGoToThePromptAndTheActionBecomesAToolCall) {
  auto inner = std::make_shared<ScriptedText>(
      std::deque<std::pair<std::string, std::string>>{{"Listing.\n```bash\nls\n```", "end_turn"}});
  TextToolsProvider p(inner, TextProtocol::defaults());
  auto r = p.complete(task("list files"), nullptr);
  ASSERT_TRUE(r.ok()) << r.message();
  const CompletionRequest& sent = inner->requests.at(0);
  EXPECT_TRUE(sent.tools.empty());
  EXPECT_EQ(sent.system.rfind("You are a coding agent.\n\n# How you act", 0), 0u) << sent.system;
  EXPECT_NE(sent.system.find("## Read\nReads a file.\nInput schema: "
                             "{\"properties\":{\"file_path\":{\"type\":\"string\"}},"
                             "\"type\":\"object\"}"),
            std::string::npos)
      << sent.system;
  EXPECT_NE(sent.system.find("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), std::string::npos);
  Message expected{Role::kAssistant,
                   {TextBlock{"Listing.\n```bash\nls\n```"},
                    ToolUseBlock{"text_call_1", "Bash", Json{{"command", "ls"}}, "", ""}}};
  EXPECT_EQ(r->message, expected);
  EXPECT_EQ(r->stop_reason, "tool_use");
  EXPECT_EQ(r->usage, (Usage{100, 20, 0, 0}));
  EXPECT_EQ(r->malformed_tool_args, 0);
}

// The whole exchange as the inner model sees it: its own turn as written, no tool blocks,
// the result through the observation template, a format error through its template.
TEST(TextToolsProvider, TheWireHoldsTextOnly) {
  TextProtocol protocol;
  protocol.tools_prompt_template = "TOOLS: {{tools}}";
  protocol.observation_template = "[{{tool}} rc={{returncode}} err={{is_error}}]\n{{output}}";
  protocol.format_error_template = "FORMAT ERROR: {{error}} ({{finish_reason}})";
  auto inner = std::make_shared<ScriptedText>(std::deque<std::pair<std::string, std::string>>{
      {"```bash\nls\n```\n```bash\npwd\n```", "end_turn"}, {"```bash\nls\n```", "stop"}});
  TextToolsProvider p(inner, protocol);

  CompletionRequest req = task("list");
  auto first = p.complete(req, nullptr);
  ASSERT_TRUE(first.ok());
  const auto uses = first->message.tool_uses();
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0]->id, "text_format_error_1");
  EXPECT_EQ(uses[0]->name, "Bash");
  EXPECT_EQ(uses[0]->raw_input, "end_turn");
  EXPECT_EQ(first->malformed_tool_args, 1);
  // The loop answers it with an error result without running anything.
  req.messages.push_back(first->message);
  req.messages.push_back(Message{Role::kUser, {ToolResultBlock{uses[0]->id, "not run", true}}});
  auto second = p.complete(req, nullptr);
  ASSERT_TRUE(second.ok());
  req.messages.push_back(second->message);
  req.messages.push_back(
      Message{Role::kUser, {ToolResultBlock{"text_call_2", "a.txt\nExit code: 3", false}}});
  // A turn from a native-mode session: folded into the text as a block.
  req.messages.push_back(Message{
      Role::kAssistant, {ToolUseBlock{"toolu_9", "Read", Json{{"file_path", "a.txt"}}, "", ""}}});
  req.messages.push_back(Message{Role::kUser, {ToolResultBlock{"toolu_9", "hello", false}}});

  CompletionRequest wire = p.wire_request(req);
  std::vector<Message> expected = {
      Message::user_text("list"),
      Message::assistant_text("```bash\nls\n```\n```bash\npwd\n```"),
      Message::user_text("FORMAT ERROR: the reply has 2 actions (```bash or ```json blocks); "
                         "exactly one is allowed per reply (end_turn)"),
      Message::assistant_text("```bash\nls\n```"),
      Message::user_text("[Bash rc=3 err=false]\na.txt\nExit code: 3"),
      Message::assistant_text(
          "```json\n{\"input\":{\"file_path\":\"a.txt\"},\"tool\":\"Read\"}\n```"),
      Message::user_text("[Read rc=0 err=false]\nhello"),
  };
  EXPECT_EQ(wire.messages, expected);
  EXPECT_EQ(wire.system,
            "You are a coding agent.\n\nTOOLS: ## Read\nReads a file.\nInput schema: "
            "{\"properties\":{\"file_path\":{\"type\":\"string\"}},\"type\":\"object\"}"
            "\n\n## Bash\nRuns a command.\nInput schema: "
            "{\"properties\":{\"command\":{\"type\":\"string\"}},\"type\":\"object\"}");
}

TEST(TextToolsProvider, ACutOffReplyIsToldApartFromAFormatMistake) {
  auto inner = std::make_shared<ScriptedText>(
      std::deque<std::pair<std::string, std::string>>{{"I will now write a long", "max_tokens"}});
  TextToolsProvider p(inner, TextProtocol::defaults());
  CompletionRequest req = task("x");
  auto r = p.complete(req, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, "max_tokens");
  req.messages.push_back(r->message);
  req.messages.push_back(
      Message{Role::kUser, {ToolResultBlock{"text_format_error_1", "not run", true}}});
  EXPECT_EQ(p.wire_request(req).messages.back().text(),
            "Your reply was not in the required format: the reply has no action (no ```bash or "
            "```json block); the reply was cut off at the output token limit, so write less "
            "before the block (finish_reason: max_tokens).\n\nReply with exactly one action: one "
            "```bash block holding one command, or one ```json block {\"tool\": \"NAME\", "
            "\"input\": {...}}. When the task is done, run a command whose output starts with "
            "the line COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT, followed by your final answer.");
}

TEST(TextToolsProvider, TheSubmitMarkerEndsTheRunWithTheRestOfTheOutput) {
  auto inner = std::make_shared<ScriptedText>(std::deque<std::pair<std::string, std::string>>{});
  TextToolsProvider p(inner, TextProtocol::defaults());
  CompletionRequest req = task("x");
  req.messages.push_back(
      Message{Role::kAssistant,
              {TextBlock{"```bash\necho ...\n```"},
               ToolUseBlock{"text_call_1", "Bash", Json{{"command", "echo ..."}}, "", ""}}});
  req.messages.push_back(Message{
      Role::kUser,
      {ToolResultBlock{"text_call_1",
                       "\n  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT  \ndiff --git a/x b/x\n+fixed\n"
                       "Exit code: 0",
                       false}}});
  auto r = p.complete(req, nullptr);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(inner->requests.empty());  // no model call
  EXPECT_EQ(r->message, Message::assistant_text("diff --git a/x b/x\n+fixed"));
  EXPECT_EQ(r->stop_reason, "end_turn");
  EXPECT_EQ(r->usage, Usage{});
}

TEST(TextToolsProvider, TheMarkerCountsOnlyAsTheFirstLineOfASuccessfulBashResult) {
  const std::vector<std::pair<std::string, ToolResultBlock>> cases = {
      {"Bash",
       {"text_call_1", "building\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\nExit code: 0", false}},
      {"Bash",
       {"text_call_1", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\nExit code: 124\ntimed out", true}},
      {"Read", {"text_call_1", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\nsecret plan", false}},
  };
  for (const auto& [tool, result] : cases) {
    auto inner = std::make_shared<ScriptedText>(
        std::deque<std::pair<std::string, std::string>>{{"```bash\nls\n```", "end_turn"}});
    TextToolsProvider p(inner, TextProtocol::defaults());
    CompletionRequest req = task("x");
    req.messages.push_back(
        Message{Role::kAssistant, {ToolUseBlock{"text_call_1", tool, Json::object(), "", ""}}});
    req.messages.push_back(Message{Role::kUser, {result}});
    auto r = p.complete(req, nullptr);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(inner->requests.size(), 1u) << result.content;  // the model was asked
    EXPECT_EQ(r->message.tool_uses().size(), 1u);
  }
}

TEST(TextToolsProvider, AnEmptyReplyStaysATurnOnTheWire) {
  auto inner = std::make_shared<ScriptedText>(
      std::deque<std::pair<std::string, std::string>>{{"", "end_turn"}});
  TextToolsProvider p(inner, TextProtocol::defaults());
  CompletionRequest req = task("x");
  auto r = p.complete(req, nullptr);
  ASSERT_TRUE(r.ok());
  req.messages.push_back(r->message);
  req.messages.push_back(
      Message{Role::kUser, {ToolResultBlock{"text_format_error_1", "not run", true}}});
  const auto wire = p.wire_request(req).messages;
  ASSERT_EQ(wire.size(), 3u);
  EXPECT_EQ(wire[1], Message::assistant_text("(an empty reply)"));
  EXPECT_EQ(wire[2].text().rfind("Your reply was not in the required format: the reply is empty: "
                                 "it has no action (finish_reason: end_turn).",
                                 0),
            0u)
      << wire[2].text();
}

TEST(TextToolsProvider, ARequestWithoutToolsPassesThrough) {
  auto inner = std::make_shared<ScriptedText>(
      std::deque<std::pair<std::string, std::string>>{{"The answer is 4.", "end_turn"}});
  TextToolsProvider p(inner, TextProtocol::defaults());
  CompletionRequest req = task("2+2?");
  req.tools.clear();
  auto r = p.complete(req, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->message, Message::assistant_text("The answer is 4."));
  EXPECT_EQ(inner->requests.at(0).system, "You are a coding agent.");
}

}  // namespace
}  // namespace mecha::providers
