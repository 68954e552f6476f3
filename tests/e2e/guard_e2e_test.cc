// The command guard through the binary, with the sandbox off so that the guard is the only
// line: a refused command must leave the host as it was, while an allowed one in the same
// run really runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/testing/cassette_run.h"
#include "tools/testing/outside_dir.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::of_type;
using testing::text_line;
using testing::tool_line;

class GuardE2E : public testing::CassetteRunTest {
 protected:
  GuardE2E() : CassetteRunTest("clean up") {}
};

TEST_F(GuardE2E, RefusedCommandsLeaveTheHostAsItWasAndAllowedOnesRun) {
  tools::testing::OutsideDir victim;
  std::ofstream(victim.path() / "keep.txt") << "mine\n";
  dir_.write("user.toml", "[sandbox]\nmode = \"off\"\n");
  const std::string lines =
      tool_line("main", "t1", "Bash", {{"command", "rm -rf " + victim.path().string()}}) +
      tool_line("main", "t2", "Bash",
                {{"command", "D=" + victim.path().string() + "; echo x > \"$D\"/planted"}}) +
      tool_line("main", "t3", "Bash", {{"command", "cp -r /etc/ssh ./keys"}}) +
      tool_line("main", "t4", "Bash", {{"command", "touch made.txt"}}) + text_line("main", "done");
  auto events = run(lines, {"--config", (dir_.path() / "user.toml").string()});

  std::vector<std::string> refused;
  for (const Json& r : of_type(events, "refusal")) refused.push_back(r.at("id"));
  EXPECT_EQ(refused, (std::vector<std::string>{"t1", "t2", "t3"}));
  // On the host: nothing outside the tree was deleted or written, no secret was copied in,
  // and the allowed command ran.
  EXPECT_TRUE(fs::exists(victim.path() / "keep.txt"));
  EXPECT_FALSE(fs::exists(victim.path() / "planted"));
  EXPECT_FALSE(fs::exists(dir_.path() / "keys"));
  EXPECT_TRUE(fs::exists(dir_.path() / "made.txt"));
}

// Commands that have bash build `rm -rf VICTIM` at run time from words the guard allows:
// split on an IFS set first, an alias joined to its words, a name reference. Each is refused
// and the victim stays; the common `IFS= read` idiom in the same run still runs.
TEST_F(GuardE2E, CommandsBuiltAtRunTimeAreRefusedAndTheHostKeepsItsFiles) {
  tools::testing::OutsideDir victim;
  std::ofstream(victim.path() / "keep.txt") << "mine\n";
  dir_.write("user.toml", "[sandbox]\nmode = \"off\"\n");
  const std::string v = victim.path().string();
  const std::string lines =
      tool_line("main", "t1", "Bash", {{"command", "IFS=,; x=rm,-rf," + v + "; $x"}}) +
      tool_line("main", "t2", "Bash",
                {{"command", "shopt -s expand_aliases\nalias r='rm -rf'\nr " + v}}) +
      tool_line("main", "t3", "Bash", {{"command", "x=rm; declare -n r=x; $r -rf " + v}}) +
      tool_line("main", "t4", "Bash",
                {{"command", "echo hi > in.txt; IFS= read -r l < in.txt; echo \"$l\" > ok.txt"}}) +
      text_line("main", "done");
  auto events = run(lines, {"--config", (dir_.path() / "user.toml").string()});

  std::vector<std::string> refused;
  for (const Json& r : of_type(events, "refusal")) refused.push_back(r.at("id"));
  EXPECT_EQ(refused, (std::vector<std::string>{"t1", "t2", "t3"}));
  EXPECT_TRUE(fs::exists(victim.path() / "keep.txt"));
  EXPECT_TRUE(fs::exists(dir_.path() / "ok.txt"));
}

}  // namespace
}  // namespace mecha::cli
