// One run pipeline (agent/run_pipeline.h): `mecha chat`'s daemon (the same assembly as
// `mecha serve`) offers what `mecha run` and `mecha tools` offer (subagents and Task
// included), under the same limits, and a Task delegation streams its nested frames to the
// client between the call and its result.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

// A tree with one agent definition of its own, and a config (read with --config, so it is
// the user's) that turns the sandbox off: these tests are about the pipeline, not bwrap.
class PipelineE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write(".mecha/agents/scout.md",
               "---\nname: scout\ndescription: Looks around.\ntools: Glob, Read\n---\n"
               "You look around.\n");
    dir_.write("notes.txt", "hello\n");
    config_ = "[sandbox]\nmode = \"off\"\n";
  }

  // `mecha chat --json` with its own daemon, `input` on stdin: the frames it printed.
  std::vector<Json> chat(const std::string& cassette, const std::string& input,
                         const std::vector<std::string>& extra = {}) {
    dir_.write("c.jsonl", cassette);
    dir_.write("config.toml", config_);
    std::vector<std::string> args = {"chat",     "--json",      "--socket", "none.sock",
                                     "--config", "config.toml", "--model",  "cassette:c.jsonl"};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = run_mecha(args, dir_.path(), input);
    return json_lines(last_.out);
  }

  static std::vector<std::string> kinds(const std::vector<Json>& frames) {
    std::vector<std::string> out;
    for (const auto& f : frames) out.push_back(f.at("kind"));
    return out;
  }

  TempDir dir_;
  std::string config_;
  testing::BinaryResult last_;
};

TEST_F(PipelineE2E, TheDaemonOffersTheToolsMechaToolsLists) {
  dir_.write("config.toml", config_);
  auto listed = run_mecha({"tools", "--json", "--config", "config.toml"}, dir_.path());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto tools = parse_json(listed.out, "mecha tools --json");
  ASSERT_TRUE(tools.ok()) << tools.message();
  Json names = Json::array();
  for (const auto& t : *tools) names.push_back(t.at("name"));
  // The subagent's own tool and Task are listed, as a run gets them.
  EXPECT_NE(std::find(names.begin(), names.end(), "scout"), names.end()) << names;
  EXPECT_NE(std::find(names.begin(), names.end(), "Task"), names.end()) << names;

  // Each request must offer every one of them, or the cassette fails the turn.
  const std::string cassette =
      "{\"mecha_cassette\": 1}\n" +
      dump_json(Json{{"expect", {{"tools_include", names}}},
                     {"response", {{"content", {{{"type", "text"}, {"text", "all there"}}}}}}}) +
      "\n";
  auto frames = chat(cassette, "list\n");
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_EQ(kinds(frames), (std::vector<std::string>{"opened", "text_delta", "text", "turn_done"}))
      << last_.out;

  // And `mecha run` offers the same.
  auto run = run_mecha({"run", "--config", "config.toml", "--model", "cassette:c.jsonl", "list"},
                       dir_.path());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "all there\n");
}

TEST_F(PipelineE2E, ATaskDelegationStreamsNestedFramesBetweenTheCallAndItsResult) {
  const std::string cassette = R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "m1", "name": "Task", "input": {"description": "look", "prompt": "Find the notes", "subagent_type": "scout"}}]}}
{"agent": "scout", "response": {"content": [{"type": "tool_use", "id": "s1", "name": "Glob", "input": {"pattern": "*.txt"}}]}}
{"agent": "scout", "response": {"content": [{"type": "text", "text": "notes.txt is there"}]}}
{"response": {"content": [{"type": "text", "text": "found them"}]}}
)";
  auto frames = chat(cassette, "find the notes\n");
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  size_t call = frames.size(), result = frames.size();
  std::vector<std::string> nested;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Json& body = frames[i].at("body");
    if (frames[i].at("kind") == "tool_call" && body.at("id") == "m1") call = i;
    if (frames[i].at("kind") == "tool_result" && body.at("id") == "m1") result = i;
    if (frames[i].at("kind") == "nested") {
      EXPECT_GT(i, call) << last_.out;
      EXPECT_EQ(body.at("tool"), "Task");
      EXPECT_EQ(body.at("id"), "m1");
      nested.push_back(body.at("event").at("type"));
    }
  }
  ASSERT_LT(call, frames.size()) << last_.out;
  ASSERT_LT(result, frames.size()) << last_.out;
  EXPECT_EQ(nested, (std::vector<std::string>{"tool_call", "tool_result", "text"})) << last_.out;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].at("kind") == "nested") {
      EXPECT_LT(i, result);
    }
  }
  EXPECT_EQ(frames[result].at("body").at("content"), "notes.txt is there");
  EXPECT_EQ(frames.back().at("kind"), "turn_done");
  EXPECT_EQ(frames.back().at("body").at("content"), "found them");
}

TEST_F(PipelineE2E, TheDaemonStopsATurnAtMaxTime) {
  const std::string cassette = R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "sleep 20"}}]}}
{"response": {"content": [{"type": "text", "text": "slept"}]}}
{"response": {"content": [{"type": "text", "text": "second turn"}]}}
)";
  auto start = std::chrono::steady_clock::now();
  auto frames =
      chat(cassette, "sleep\n", {"--max-time", "1", "--permission-mode", "bypassPermissions"});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_LT(took, 15) << "the sleep ran to its end";
  bool limited = false;
  for (const auto& f : frames) {
    if (f.at("kind") == "error") {
      EXPECT_EQ(f.at("body").at("code"), "turn_limits") << last_.out;
      EXPECT_NE(f.at("body").at("message").get<std::string>().find("max_time (1s)"),
                std::string::npos)
          << last_.out;
      limited = true;
    }
  }
  EXPECT_TRUE(limited) << last_.out;
  EXPECT_EQ(frames.back().at("kind"), "turn_done");
}

TEST_F(PipelineE2E, TheDaemonStopsATurnAtMaxCostFromTheConfig) {
  // $1 per input token: the first call costs $10, past the turn's ceiling of $5.
  config_ +=
      "[limits]\nmax_cost = 5.0\n[pricing.\"priced-model\"]\ninput_per_mtok = 1000000.0\n"
      "output_per_mtok = 0.0\n";
  const std::string cassette = R"({"mecha_cassette": 1}
{"response": {"model": "priced-model", "content": [{"type": "tool_use", "id": "g1", "name": "Glob", "input": {"pattern": "*"}}], "usage": {"input_tokens": 10, "output_tokens": 0}}}
{"response": {"model": "priced-model", "content": [{"type": "text", "text": "spent more"}], "usage": {"input_tokens": 10, "output_tokens": 0}}}
)";
  auto frames = chat(cassette, "spend\n");
  ASSERT_EQ(last_.exit_code, 0) << last_.err;
  ASSERT_GE(frames.size(), 2u) << last_.out;
  const Json& error = frames[frames.size() - 2];
  EXPECT_EQ(error.at("kind"), "error") << last_.out;
  EXPECT_EQ(error.at("body").at("code"), "turn_limits");
  EXPECT_NE(error.at("body").at("message").get<std::string>().find("max_cost ($5.0000)"),
            std::string::npos)
      << last_.out;
  // The second (costly) call was never made.
  for (const auto& f : frames) {
    if (f.at("kind") == "text") {
      EXPECT_NE(f.at("body").at("text"), "spent more");
    }
  }
}

}  // namespace
}  // namespace mecha::cli
