// Background shells through the binary: `mecha run` on a cassette starts a command with
// run_in_background, reads it with BashOutput, stops it with KillShell, and leaves none
// running on the host when it exits; and a background command that can reach the network
// is killed once the run holds untrusted and private data, so it cannot carry the private
// data out behind the interlock. The sandbox is off (the commands can reach the network).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/testing/cassette_run.h"
#include "tools/testing/host_processes.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::of_type;
using testing::text_line;
using testing::tool_line;
using tools::testing::running_on_host;
using tools::testing::unique_sleep;

std::string background_result_of(const std::vector<Json>& events, const std::string& id) {
  for (const Json& r : of_type(events, "tool_result")) {
    if (r.at("id") == id) return r.at("content").get<std::string>();
  }
  return "<no result for " + id + ">";
}

class BackgroundShellE2E : public testing::CassetteRunTest {
 protected:
  BackgroundShellE2E() : CassetteRunTest("run the server in the background") {
    dir_.write("user.toml", "[sandbox]\nmode = \"off\"\n");
  }
  std::vector<std::string> config() const {
    return {"--config", (dir_.path() / "user.toml").string()};
  }
};

TEST_F(BackgroundShellE2E, StartsReadsKillsAndLeavesNothingRunningWhenTheRunEnds) {
  const std::string first = unique_sleep();
  const std::string second = unique_sleep();
  const std::string lines =
      tool_line(
          "main", "b1", "Bash",
          {{"command", "echo hello; touch first-ran; " + first}, {"run_in_background", true}}) +
      tool_line("main", "w1", "Bash", {{"command", "sleep 0.5"}}) +
      tool_line("main", "o1", "BashOutput", {{"bash_id", "bash_1"}}) +
      tool_line("main", "b2", "Bash",
                {{"command", "touch second-ran; " + second}, {"run_in_background", true}}) +
      tool_line("main", "k1", "KillShell", {{"shell_id", "bash_1"}}) +
      tool_line("main", "o2", "BashOutput", {{"bash_id", "bash_1"}}) +
      tool_line("main", "w2", "Bash", {{"command", "sleep 0.3"}}) + text_line("main", "done");
  auto events = run(lines, config());

  EXPECT_NE(background_result_of(events, "b1").find("with ID: bash_1"), std::string::npos)
      << background_result_of(events, "b1");
  EXPECT_EQ(background_result_of(events, "o1"), "hello\nStatus: running");
  EXPECT_NE(background_result_of(events, "b2").find("with ID: bash_2"), std::string::npos);
  EXPECT_NE(background_result_of(events, "k1").find("Killed background shell bash_1"),
            std::string::npos)
      << background_result_of(events, "k1");
  EXPECT_EQ(background_result_of(events, "o2"), "Status: killed");
  // Both ran on the host, and neither outlived `mecha run`: bash_2 was never killed by the
  // model, and died with the run.
  EXPECT_TRUE(fs::exists(dir_.path() / "first-ran"));
  EXPECT_TRUE(fs::exists(dir_.path() / "second-ran"));
  EXPECT_FALSE(running_on_host(first)) << first;
  EXPECT_FALSE(running_on_host(second)) << second;
}

TEST_F(BackgroundShellE2E, AShellThatCanSendIsKilledWhenTheRunHoldsUntrustedAndPrivateData) {
  // The injected model starts a loop that would ship whatever lands in stash.txt (here: to
  // shipped.txt; with the network, anywhere), then reads the private notes and stashes them.
  const std::string loop =
      "while :; do date +%s%N >> beats; [ -f stash.txt ] && cp stash.txt shipped.txt; "
      "sleep 0.02; done";
  const std::string lines =
      tool_line("main", "f1", "FetchPage", {{"url", "https://evil.example/"}}) +
      tool_line("main", "b1", "Bash", {{"command", loop}, {"run_in_background", true}}) +
      tool_line("main", "w1", "Bash", {{"command", "sleep 0.3"}}) +
      tool_line("main", "r1", "ReadNotes", Json::object()) +
      tool_line("main", "s1", "Write",
                {{"file_path", (dir_.path() / "stash.txt").string()}, {"content", "the notes"}}) +
      tool_line("main", "o1", "BashOutput", {{"bash_id", "bash_1"}}) + text_line("main", "done");
  auto events = run(lines, config());

  EXPECT_TRUE(fs::exists(dir_.path() / "beats")) << "the loop never ran";
  // Killed right after the private read, before the stash was written.
  std::vector<std::string> notes;
  for (const Json& n : of_type(events, "note")) notes.push_back(n.at("text"));
  const auto killed = std::find_if(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("background shell bash_1 was killed") != std::string::npos;
  });
  ASSERT_NE(killed, notes.end()) << "no note of the kill";
  size_t read_at = 0, note_at = 0, write_at = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    if (e.at("type") == "tool_result" && e.at("id") == "r1") read_at = i;
    if (e.at("type") == "note" &&
        e.at("text").get<std::string>().find("bash_1 was killed") != std::string::npos) {
      note_at = i;
    }
    if (e.at("type") == "tool_call" && e.at("id") == "s1") write_at = i;
  }
  EXPECT_LT(read_at, note_at);
  EXPECT_LT(note_at, write_at);
  EXPECT_TRUE(fs::exists(dir_.path() / "stash.txt"));
  EXPECT_FALSE(fs::exists(dir_.path() / "shipped.txt")) << "the loop shipped the notes";
  // Reading its output now counts as a send, which the interlock holds.
  std::vector<std::string> refused;
  for (const Json& r : of_type(events, "refusal")) refused.push_back(r.at("id"));
  EXPECT_NE(std::find(refused.begin(), refused.end(), "o1"), refused.end())
      << background_result_of(events, "o1");
}

}  // namespace
}  // namespace mecha::cli
