// The stuck-loop ladder end to end (issue 18): build/mecha-e2e replays a model that repeats
// the same failing call. It climbs every rung in order (a note, the tool withheld for a turn,
// a fresh context of the task and what was tried, stuck), the cassette checks what each
// request offered and held, the run exits 3 with status "stuck", and the session keeps each
// rung as a note and the fresh context as a compaction record.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/strict_json.h"
#include "cli/testing/cassette_run.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::json_lines;
using testing::of_type;
using testing::text_line;
using testing::tool_line;

constexpr const char* kTask = "make the build pass";
const Json kMissing = {{"file_path", "missing.txt"}};

// A line calling `name` with `input`, after the request passed `expect`.
std::string expecting_line(const std::string& id, const std::string& name, const Json& input,
                           const Json& expect) {
  Json content = Json::array();
  content.push_back({{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", input}});
  return dump_json(Json{{"expect", expect}, {"response", {{"content", content}}}}) + "\n";
}

class LoopLadderE2E : public testing::CassetteRunTest {
 protected:
  LoopLadderE2E() : CassetteRunTest(kTask) {}

  BinaryResult run_stuck(const std::string& lines) {
    dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + lines);
    return mecha({"run", "--json", "--model", "cassette:c.jsonl", kTask});
  }
};

TEST_F(LoopLadderE2E, ARepeatedFailingCallClimbsEveryRungAndEndsStuckWithExitThree) {
  std::string lines;
  for (const char* id : {"r1", "r2", "r3", "r4"}) lines += tool_line("main", id, "Read", kMissing);
  // The withhold turn: Read is not offered (the cassette fails the run if it is).
  lines += expecting_line("g5", "Glob", {{"pattern", "*.txt"}},
                          {{"tools_exclude", {"Read"}}, {"tools_include", {"Glob"}}});
  // Offered again on the turn after.
  lines += expecting_line("r6", "Read", kMissing, {{"tools_include", {"Read"}}});
  // The fresh context: one message, the task and what was tried.
  lines += expecting_line("r7", "Read", kMissing,
                          {{"message_count", 1},
                           {"first_message_contains",
                            {"This is a fresh start", std::string("The task:\n") + kTask,
                             "- Glob {\"pattern\":\"*.txt\"} ×1: ok: No files match",
                             "- Read {\"file_path\":\"missing.txt\"} ×5: error:"}}});
  lines += text_line("main", "never asked for");

  BinaryResult r = run_stuck(lines);
  ASSERT_EQ(r.exit_code, 3) << r.err << r.out;
  std::vector<Json> events = json_lines(r.out);

  std::vector<Json> loops = of_type(events, "loop");
  ASSERT_EQ(loops.size(), 4u) << r.out;
  const std::vector<std::string> actions = {"note", "withhold", "fresh_context", "stuck"};
  for (size_t i = 0; i < loops.size(); ++i) {
    EXPECT_EQ(loops[i].at("rung"), static_cast<int>(i) + 1);
    EXPECT_EQ(loops[i].at("action"), actions[i]);
    EXPECT_EQ(loops[i].at("tool"), "Read");
    EXPECT_EQ(loops[i].at("repeats"), static_cast<int>(i) + 3);
  }
  EXPECT_EQ(loops[1].at("message"),
            "Read {\"file_path\":\"missing.txt\"} was called 4 times with the same result: Read "
            "is withheld for the next turn");

  // Each rung comes right after the result of the call that reached it.
  auto index_of = [&](const std::string& type, const std::string& key, const Json& value) {
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].value("type", "") == type && events[i].value(key, Json()) == value) return i;
    }
    ADD_FAILURE() << "no " << type << " with " << key << " " << value;
    return events.size();
  };
  EXPECT_EQ(index_of("loop", "rung", 1), index_of("tool_result", "id", "r3") + 1);
  EXPECT_EQ(index_of("loop", "rung", 2), index_of("tool_result", "id", "r4") + 1);
  EXPECT_EQ(index_of("loop", "rung", 3), index_of("tool_result", "id", "r6") + 1);
  EXPECT_EQ(index_of("loop", "rung", 4), index_of("tool_result", "id", "r7") + 1);

  std::vector<Json> compactions = of_type(events, "compaction");
  ASSERT_EQ(compactions.size(), 1u);
  EXPECT_EQ(compactions[0].at("trigger"), "ladder");
  EXPECT_EQ(compactions[0].at("replaced_messages"), 13);

  const Json& done = events.back();
  EXPECT_EQ(done.at("type"), "done");
  EXPECT_EQ(done.at("status"), "stuck");
  EXPECT_EQ(done.at("turns"), 7);
  const std::string stuck = done.at("stuck");
  EXPECT_TRUE(
      stuck.starts_with("Read {\"file_path\":\"missing.txt\"} was called 6 times with the "
                        "same result.\nWhat was tried (most recent last):\n"))
      << stuck;
  EXPECT_NE(stuck.find("- Read {\"file_path\":\"missing.txt\"} ×6: error: "), std::string::npos)
      << stuck;

  // The session keeps every rung, the fresh context and how the run ended.
  BinaryResult exported = mecha({"sessions", "export", "last"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::vector<std::string> kept;
  for (const Json& rec : json_lines(exported.out)) {
    const std::string kind = rec.at("kind");
    const Json& body = rec.at("body");
    if (kind == "note" && body.at("text").get<std::string>().starts_with("stuck-loop ladder")) {
      kept.push_back(body.at("text").get<std::string>().substr(0, 36));
    } else if (kind == "compaction") {
      kept.push_back(fmt::format("compaction {} {}", body.at("trigger").get<std::string>(),
                                 body.at("replaced").get<int>()));
      EXPECT_EQ(body.at("summary"), compactions[0].at("summary"));
    } else if (kind == "run_end") {
      kept.push_back("run_end " + body.at("status").get<std::string>());
    }
  }
  EXPECT_EQ(kept, (std::vector<std::string>{
                      "stuck-loop ladder, rung 1 (note): Re",
                      "stuck-loop ladder, rung 2 (withhold)",
                      "stuck-loop ladder, rung 3 (fresh_con",
                      "compaction ladder 13",
                      "stuck-loop ladder, rung 4 (stuck): R",
                      "run_end stuck",
                  }));
  BinaryResult shown = mecha({"sessions", "show", "last"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("── compacted (ladder): 13 messages replaced by this summary:\n"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("── run ended: stuck: Read {\"file_path\":\"missing.txt\"} was called "
                           "6 times with the same result. · 7 turns"),
            std::string::npos)
      << shown.out;
}

TEST_F(LoopLadderE2E, AModelThatChangesApproachAfterTheNoteFinishes) {
  std::string lines;
  for (const char* id : {"r1", "r2", "r3"}) lines += tool_line("main", id, "Read", kMissing);
  lines += expecting_line(
      "g4", "Glob", {{"pattern", "*.txt"}},
      {{"last_tool_result_contains", "does not exist"}, {"tools_include", {"Read"}}});
  lines += text_line("main", "There is no missing.txt; nothing to build.");
  std::vector<Json> events = run(lines);
  std::vector<Json> loops = of_type(events, "loop");
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].at("action"), "note");
  EXPECT_EQ(events.back().at("status"), "completed");
  EXPECT_EQ(events.back().at("text"), "There is no missing.txt; nothing to build.");
}

}  // namespace
}  // namespace mecha::cli
