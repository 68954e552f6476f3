// [security] mode = "rule_of_two" end to end: build/mecha-e2e runs a cassette in which a
// fetched page's instructions and the user's notes are followed by a Write. Under
// rule_of_two the file is never written (checked on the host); in the default mode it is;
// a read-only call still runs; and a project's config may choose rule_of_two but not leave it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/strict_json.h"
#include "cli/testing/cassette_run.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::of_type;
using testing::text_line;
using testing::tool_line;

const char* const kRefusedWrite =
    "tool 'Write' was not run: it changes state, and this run has read both untrusted content "
    "and private data; under [security] mode = \"rule_of_two\" such a run may not change state "
    "without a person's approval. Nothing was changed; do not retry it in this run.";

const Json kWriteInput = {{"file_path", "exfil.txt"}, {"content", "bank PIN 4711"}};

class RuleOfTwoE2E : public testing::CassetteRunTest {
 protected:
  RuleOfTwoE2E() : CassetteRunTest("summarise the pizza page") {
    dir_.write("menu.txt", "margherita\n");
  }

  // The injected page, the notes, the Write the page asked for, then a read-only look.
  std::string attack() const {
    return tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
           tool_line("main", "t2", "ReadNotes", Json::object()) +
           tool_line("main", "t3", "Write", kWriteInput) +
           tool_line("main", "t4", "Read", {{"file_path", "menu.txt"}}) +
           text_line("main", "Done.");
  }
  bool written() const { return std::filesystem::exists(dir_.path() / "exfil.txt"); }
  std::string written_text() const {
    std::ifstream in(dir_.path() / "exfil.txt");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static Json result_of(const std::vector<Json>& ev, const std::string& id) {
    for (const auto& e : of_type(ev, "tool_result"))
      if (e.at("id") == id) return e;
    return Json();
  }
};

// The project's own file chooses rule_of_two: it only tightens, so it holds untrusted.
TEST_F(RuleOfTwoE2E, ATaintedRunsWriteIsRefusedAndNothingIsWritten) {
  dir_.write(".mecha/config.toml", "[security]\nmode = \"rule_of_two\"\n");
  auto ev = run(attack());

  EXPECT_FALSE(written()) << "Write ran under rule_of_two: " << written_text();
  auto refusals = of_type(ev, "refusal");
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0], (Json{{"type", "refusal"},
                               {"agent", "main"},
                               {"id", "t3"},
                               {"rule", "rule_of_two"},
                               {"message", kRefusedWrite}}));
  EXPECT_EQ(result_of(ev, "t3").at("is_error"), true);
  // The read-only call after it ran.
  const Json read = result_of(ev, "t4");
  EXPECT_EQ(read.at("is_error"), false);
  EXPECT_NE(read.at("content").get<std::string>().find("margherita"), std::string::npos)
      << read.dump();
  const Json done = ev.back();
  ASSERT_EQ(done.at("type"), "done");
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("blocked_tools"), Json::array({"Write"}));
  EXPECT_EQ(done.at("blocked_sends"), 0);
}

// The control: the same run in the default mode writes the file (only sends are held), so
// the test above cannot pass with a Write that never writes.
TEST_F(RuleOfTwoE2E, TheTrifectaModeWritesTheSameFile) {
  auto ev = run(attack());
  ASSERT_TRUE(written());
  EXPECT_EQ(written_text(), "bank PIN 4711");
  EXPECT_TRUE(of_type(ev, "refusal").empty());
  EXPECT_EQ(ev.back().at("blocked_tools"), Json::array());
}

// With one leg only, rule_of_two lets the Write run: it is the pair that is held.
TEST_F(RuleOfTwoE2E, OneLegAloneLetsTheWriteRun) {
  dir_.write(".mecha/config.toml", "[security]\nmode = \"rule_of_two\"\n");
  auto ev = run(tool_line("main", "t1", "FetchPage", {{"url", "https://pizza.example"}}) +
                tool_line("main", "t3", "Write", kWriteInput) + text_line("main", "Done."));
  EXPECT_TRUE(written());
  EXPECT_TRUE(of_type(ev, "refusal").empty());
}

// The attack on the config: the user chose rule_of_two, and a cloned tree's file asks for
// the default back. It is refused before anything runs, naming the key.
TEST_F(RuleOfTwoE2E, AnUntrustedProjectCannotLeaveRuleOfTwo) {
  dir_.write(".home/.config/mecha/config.toml", "[security]\nmode = \"rule_of_two\"\n");
  dir_.write(".mecha/config.toml", "[security]\nmode = \"trifecta\"\n");
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + attack());
  BinaryResult r = mecha({"run", "--json", "--model", "cassette:c.jsonl", "--permission-mode",
                          "bypassPermissions", "summarise the pizza page"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("sets security keys: security.mode (line 2)"), std::string::npos) << r.err;
  EXPECT_FALSE(written());
}

// `mecha tools` shows the leg rule_of_two counts when that is the mode, and --json always.
TEST_F(RuleOfTwoE2E, ToolsSaysWhichToolsChangeState) {
  auto line_of = [](const std::string& out, const std::string& tool) {
    size_t at = out.find("\n" + tool + " ");
    if (at == std::string::npos) return std::string();
    return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  BinaryResult plain = mecha({"tools"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("changes-state"), std::string::npos) << plain.out;

  dir_.write(".mecha/config.toml", "[security]\nmode = \"rule_of_two\"\n");
  BinaryResult r = mecha({"tools"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = "\n" + r.out;
  EXPECT_NE(line_of(out, "Write").find("changes-state"), std::string::npos) << r.out;
  EXPECT_NE(line_of(out, "SendMessage").find("external-send,changes-state"), std::string::npos)
      << r.out;
  EXPECT_FALSE(line_of(out, "Read").empty()) << r.out;
  EXPECT_EQ(line_of(out, "Read").find("changes-state"), std::string::npos) << r.out;

  BinaryResult json = mecha({"tools", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto all = parse_json(json.out, "tools");
  ASSERT_TRUE(all.ok()) << json.out;
  std::map<std::string, bool> changes;
  for (const auto& t : *all) changes[t.at("name")] = t.at("changes_state");
  EXPECT_TRUE(changes.at("Write"));
  EXPECT_TRUE(changes.at("Bash"));
  EXPECT_FALSE(changes.at("Read"));
  EXPECT_FALSE(changes.at("FetchPage"));
}

}  // namespace
}  // namespace mecha::cli
