// tool_mode = "text" through the binary, against a loopback OpenAI-style server whose replies
// are plain text with fenced blocks: a guarded command is refused as a native call is, a
// reply with two blocks gets the format-error template, an allowed command runs, its
// observation reaches the next request, and the submit marker ends the run with its output.
// The sandbox is off so that the guard is the only line, as in guard_e2e_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/testing/cassette_run.h"
#include "cli/testing/run_binary.h"
#include "providers/testing/fake_model_server.h"
#include "providers/testing/scripted_streams.h"
#include "tools/testing/outside_dir.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using providers::testing::FakeModelServer;
using providers::testing::openai_stream;
using providers::testing::ScriptedResponse;
using testing::json_lines;
using testing::of_type;
using testing::run_mecha;
using testing::TempDir;

void reply(FakeModelServer& server, const std::string& text,
           const std::string& stop_reason = "end_turn") {
  server.enqueue(ScriptedResponse::sse(
      openai_stream(Message::assistant_text(text), stop_reason, Usage{50, 10, 0, 0})));
}

// The text of the last message of a chat-completions request body.
std::string last_message_text(const Json& body) {
  const Json& m = body.at("messages").back();
  if (m.at("content").is_string()) return m.at("content").get<std::string>();
  std::string out;
  for (const auto& part : m.at("content")) out += part.value("text", "");
  return out;
}

TEST(TextToolModeE2E, FencedActionsRunGuardedAndTheMarkerSubmits) {
  tools::testing::OutsideDir victim;
  std::ofstream(victim.path() / "keep.txt") << "mine\n";
  FakeModelServer server;
  reply(server, "Cleaning up first.\n```bash\nrm -rf " + victim.path().string() + "\n```");
  reply(server, "```bash\nls\n```\nand then\n```bash\npwd\n```");
  reply(server, "Writing the file.\n```bash\necho hi > made.txt && echo made it\n```");
  reply(server,
        "Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo 'all done' && "
        "seq 1 100000\n```");

  TempDir dir;
  dir.write("c.toml", "[providers.local]\nkind = \"openai\"\nbase_url = \"" +
                          server.base_url("/v1") +
                          "\"\nmodel = \"m\"\nmax_retries = 0\ntool_mode = \"text\"\n\n"
                          "[sandbox]\nmode = \"off\"\n");
  auto r = run_mecha({"run", "--json", "--permission-mode", "bypassPermissions", "--config",
                      "c.toml", "clean up and write made.txt"},
                     dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<Json> events = json_lines(r.out);

  // On the host: the refused command deleted nothing, the allowed one ran.
  EXPECT_TRUE(fs::exists(victim.path() / "keep.txt"));
  EXPECT_TRUE(fs::exists(dir.path() / "made.txt"));

  std::vector<Json> refusals = of_type(events, "refusal");
  ASSERT_EQ(refusals.size(), 1u) << r.out;
  EXPECT_EQ(refusals[0].at("id"), "text_call_1");
  std::vector<Json> results = of_type(events, "tool_result");
  ASSERT_EQ(results.size(), 4u) << r.out;

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);  // the submission needs no model call
  for (const auto& req : requests) {
    Json body = req.json();
    EXPECT_FALSE(body.contains("tools")) << body.dump();
    // The assistant's turns are its text, as written.
    for (const auto& m : body.at("messages")) EXPECT_FALSE(m.contains("tool_calls"));
  }
  EXPECT_NE(requests[0].json().dump().find("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
            std::string::npos);
  EXPECT_EQ(last_message_text(requests[1].json()),
            "Result of Bash (is_error: true, return code: 1):\n<output>\n" +
                results[0].at("content").get<std::string>() + "\n</output>");
  EXPECT_EQ(last_message_text(requests[2].json()),
            "Your reply was not in the required format: the reply has 2 actions (```bash or "
            "```json blocks); exactly one is allowed per reply (finish_reason: end_turn).\n\n"
            "Reply with exactly one action: one ```bash block holding one command, or one "
            "```json block {\"tool\": \"NAME\", \"input\": {...}}. When the task is done, run a "
            "command whose output starts with the line COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT, "
            "followed by your final answer.");
  EXPECT_EQ(last_message_text(requests[3].json()),
            "Result of Bash (is_error: false, return code: 0):\n<output>\nmade it\nExit code: "
            "0\n</output>");
  // [0] is the system prompt, [1] the task.
  const Json second_assistant = requests[2].json().at("messages")[4];
  EXPECT_EQ(second_assistant.at("role"), "assistant");
  EXPECT_EQ(second_assistant.at("content"), "```bash\nls\n```\nand then\n```bash\npwd\n```");

  // The marker survived 100,000 lines of output after it; the answer is the rest.
  const Json& done = events.back();
  EXPECT_EQ(done.at("type"), "done");
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("turns"), 5);
  const std::string answer = done.at("text");
  EXPECT_EQ(answer.rfind("all done\n1\n2\n3\n", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("bytes of output cut here"), std::string::npos);
  EXPECT_EQ(answer.substr(answer.size() - 7), "\n100000");
}

// The README's example of tool_mode = "text", pointed at the loopback server: its templates
// are the ones the model gets.
TEST(TextToolModeE2E, TheReadmeExampleRunsWithItsTemplates) {
  std::ifstream in(fs::path(MECHA_SOURCE_DIR) / "README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  const std::string text = readme.str();
  size_t at = text.find("#### Models without tool calling");
  ASSERT_NE(at, std::string::npos);
  size_t open = text.find("```toml\n", at);
  ASSERT_NE(open, std::string::npos);
  open += 8;
  std::string toml = text.substr(open, text.find("\n```", open) - open + 1);
  const std::string url = "http://127.0.0.1:8080/v1";
  ASSERT_NE(toml.find(url), std::string::npos) << toml;

  FakeModelServer server;
  toml.replace(toml.find(url), url.size(), server.base_url("/v1"));
  reply(server, "```bash\necho hi\n```");
  reply(server, "I am done.");
  reply(server, "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo 42\n```");
  TempDir dir;
  dir.write("c.toml", toml + "\n[sandbox]\nmode = \"off\"\n");
  auto r =
      run_mecha({"run", "--permission-mode", "bypassPermissions", "--config", "c.toml", "answer"},
                dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "42\n");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  // The README's tools prompt follows the system prompt mecha builds.
  EXPECT_NE(requests[0].json().at("messages")[0].at("content").get<std::string>().find(
                "\n\nAct with one ```bash block per reply.\n\n## Read\n"),
            std::string::npos);
  EXPECT_EQ(last_message_text(requests[1].json()),
            "<returncode>0</returncode>\n<output>\nhi\nExit code: 0\n</output>");
  EXPECT_EQ(last_message_text(requests[2].json()),
            "Format error: the reply has no action (no ```bash or ```json block) "
            "(finish_reason: end_turn)");
}

// A model that never writes an action is bounded by the turn budget: each format error is a
// model call and a turn.
TEST(TextToolModeE2E, AModelThatNeverActsStopsAtMaxTurns) {
  FakeModelServer server;
  for (int i = 0; i < 5; ++i) reply(server, "Let me think some more.");
  TempDir dir;
  dir.write("c.toml", "[providers.local]\nkind = \"openai\"\nbase_url = \"" +
                          server.base_url("/v1") +
                          "\"\nmodel = \"m\"\nmax_retries = 0\ntool_mode = \"text\"\n");
  auto r = run_mecha({"run", "--json", "--config", "c.toml", "--max-turns", "3", "x"}, dir.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  std::vector<Json> events = json_lines(r.out);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().at("status"), "limits_exceeded");
  EXPECT_EQ(events.back().at("turns"), 3);
  EXPECT_EQ(events.back().at("usage").at("input_tokens"), 150);
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(of_type(events, "tool_call").size(), 3u);
  EXPECT_EQ(of_type(events, "tool_result").size(), 3u);  // every call paired
}

TEST(TextToolModeE2E, ATemplateWithAnUnknownPlaceholderIsAConfigErrorNamingTheLine) {
  TempDir dir;
  dir.write("c.toml",
            "[providers.local]\nkind = \"openai\"\nmodel = \"m\"\ntool_mode = \"text\"\n"
            "format_error_template = \"bad: {{eror}}\"\n");
  auto r = run_mecha({"run", "--config", "c.toml", "x"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "mecha: c.toml:5: key 'format_error_template' in [providers.local] uses {{eror}}, "
            "which it does not know (it knows {{error}}, {{finish_reason}}, {{submit_marker}})\n");
}

TEST(TextToolModeE2E, AnUnknownToolModeIsAConfigError) {
  TempDir dir;
  dir.write("c.toml", "[providers.local]\nkind = \"openai\"\nmodel = \"m\"\ntool_mode = \"xml\"\n");
  auto r = run_mecha({"run", "--config", "c.toml", "x"}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("c.toml:4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tool_mode"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mecha::cli
