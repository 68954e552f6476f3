// `mecha permissions` through the built binary: the merged rules with their sources, the
// mode and where it came from, the notes on an untrusted project, and errors naming file
// and line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::BinaryResult;
using testing::TempDir;

class PermissionsCommand : public ::testing::Test {
 protected:
  PermissionsCommand() { fs::create_directories(tree()); }
  fs::path tree() const { return dir_.path() / "tree"; }
  BinaryResult mecha(std::vector<std::string> args) {
    return testing::run_mecha(args, tree(), "", testing::mecha_binary(),
                              {"XDG_STATE_HOME=" + (dir_.path() / "state").string()});
  }
  TempDir dir_;
};

TEST_F(PermissionsCommand, PrintsTheMergedRulesTheModeAndTheNotes) {
  auto none = mecha({"permissions"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out,
            "mode: default (the default; no settings file sets defaultMode)\nrules: none\n"
            "hooks: none\n");

  dir_.write("tree/.home/.claude/settings.json",
             "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\"Bash(git "
             "status)\"],\n    \"defaultMode\": \"acceptEdits\"\n  }\n}\n");
  dir_.write("tree/.home/.config/mecha/config.toml",
             "[permissions]\ndeny = [\"Read(~/.aws/**)\"]\n");
  dir_.write("tree/.claude/settings.json",
             "{\"permissions\": {\"deny\": [\"Read(./secret.txt)\"], \"allow\": [\"Bash\"]}}\n");
  const std::string user_json = (tree() / ".home/.claude/settings.json").string();
  const std::string user_toml = (tree() / ".home/.config/mecha/config.toml").string();
  const std::string project = (tree() / ".claude/settings.json").string();
  auto r = mecha({"permissions"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            fmt::format("mode: acceptEdits (from {0}:5)\n"
                        "rules (deny beats ask beats allow):\n"
                        "  allow  Bash(git status)    {0}:4\n"
                        "  deny   Read(~/.aws/**)     {1}:2\n"
                        "  deny   Read(./secret.txt)  {2}:1\n"
                        "hooks: none\n"
                        "notes:\n"
                        "  {2} is not trusted, so what it widens is left out: allow rule Bash. A "
                        "project's settings may only tighten permissions until you trust them; "
                        "read it, and if you accept what it allows, run: mecha trust {2}\n",
                        user_json, user_toml, project));

  // Trusting the file, as the note says, takes its allow rule.
  auto trusted = mecha({"trust", project});
  ASSERT_EQ(trusted.exit_code, 0) << trusted.err;
  r = mecha({"permissions"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("  allow  Bash                {}:1\n", project)),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("notes:"), std::string::npos) << r.out;

  // --config replaces mecha's files only; Claude Code's are still read.
  dir_.write("only.toml", "[permissions]\nask = [\"Edit\"]\n");
  r = mecha(
      {"permissions", "--config", (dir_.path() / "only.toml").string(), "-C", tree().string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  ask    Edit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Bash(git status)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Read(~/.aws/**)"), std::string::npos) << r.out;
}

TEST_F(PermissionsCommand, ListsTheHooksAndWhichWereLeftOut) {
  dir_.write("tree/.home/.claude/settings.json",
             "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": "
             "\"command\", \"command\": \"check.sh\", \"timeout\": 5}]}]}}\n");
  dir_.write("tree/.claude/settings.json",
             "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": "
             "\"touch pwned\"}]}]}}\n");
  const std::string user = (tree() / ".home/.claude/settings.json").string();
  const std::string project = (tree() / ".claude/settings.json").string();
  auto r = mecha({"permissions"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("hooks (run in this order, outside the sandbox):\n"
                                   "  PreToolUse[Bash]  check.sh  (timeout 5s)  {}:1\n",
                                   user)),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("touch pwned"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("{}:1: hooks left out: {} is not trusted", project, project)),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(tree() / "pwned"));
}

TEST_F(PermissionsCommand, AMalformedRuleIsAnErrorNamingFileLineAndRule) {
  dir_.write("tree/.claude/settings.local.json",
             "{\n  \"permissions\": {\n    \"ask\": [\n      \"Bash(git push:*\"\n    ]\n  }\n}\n");
  auto r = mecha({"permissions"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, fmt::format("mecha: {}:4: permissions.ask: rule \"Bash(git push:*\": has no "
                               "closing \")\" at its end\n",
                               (tree() / ".claude/settings.local.json").string()));

  // The same error stops a run before any model is asked.
  dir_.write("tree/c.jsonl", "{\"mecha_cassette\": 1}\n");
  auto run = mecha({"run", "--model", "cassette:c.jsonl", "go"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("permissions.ask: rule \"Bash(git push:*\""), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace mecha::cli
