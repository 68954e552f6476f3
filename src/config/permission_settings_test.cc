// Permissions merged over every source by load_config: the order of
// permission_settings.h, the trust of project files, and errors naming file and line.
#include "config/permission_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <fstream>

#include "base/sha256.h"
#include "config/config.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

TEST(PermissionMode, NamesParseAndRank) {
  for (auto m : {PermissionMode::kDefault, PermissionMode::kAcceptEdits, PermissionMode::kPlan,
                 PermissionMode::kBypassPermissions}) {
    EXPECT_EQ(*parse_permission_mode(permission_mode_name(m)), m);
  }
  EXPECT_EQ(parse_permission_mode("yolo").message(),
            "unknown permission mode \"yolo\" (modes: default, acceptEdits, plan, "
            "bypassPermissions)");
  EXPECT_LT(permission_mode_rank(PermissionMode::kPlan),
            permission_mode_rank(PermissionMode::kDefault));
  EXPECT_LT(permission_mode_rank(PermissionMode::kDefault),
            permission_mode_rank(PermissionMode::kAcceptEdits));
  EXPECT_LT(permission_mode_rank(PermissionMode::kAcceptEdits),
            permission_mode_rank(PermissionMode::kBypassPermissions));
  EXPECT_EQ((SettingOrigin{"/a/b.json", 4}).where(), "/a/b.json:4");
  EXPECT_EQ((SettingOrigin{"/a/b.json", 0}).where(), "/a/b.json");
  EXPECT_EQ(rule_action_name(RuleAction::kDeny), "deny");
}

class PermissionMerge : public ::testing::Test {
 protected:
  PermissionMerge() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-perms-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data()) ? std::filesystem::canonical(tmpl) : std::filesystem::path();
    files_.user_file = dir_ / "config/mecha/config.toml";
    files_.project_file = dir_ / "tree/.mecha/config.toml";
    files_.trust_file = dir_ / "state/trusted-configs";
    files_.claude_user_file = dir_ / "home/.claude/settings.json";
    files_.claude_project_file = dir_ / "tree/.claude/settings.json";
    files_.claude_project_local = dir_ / "tree/.claude/settings.local.json";
  }
  ~PermissionMerge() override { std::filesystem::remove_all(dir_); }
  static void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void trust(const std::filesystem::path& p, const std::string& text) {
    auto store = TrustStore::load(*files_.trust_file);
    ASSERT_TRUE(store.ok()) << store.message();
    ASSERT_TRUE(store->trust(p.string(), sha256_hex(text)).ok());
  }
  // "action text @file:line" for each rule, files shown relative to the temp dir.
  std::vector<std::string> rules(const PermissionSettings& p) const {
    std::vector<std::string> out;
    for (const auto& r : p.rules) {
      out.push_back(
          fmt::format("{} {} @{}", rule_action_name(r.action), r.text,
                      std::filesystem::path(r.origin.where()).lexically_relative(dir_).string()));
    }
    return out;
  }
  std::filesystem::path dir_;
  ConfigFiles files_;
};

const std::string kUserJson = R"j({
  "model": "opus",
  "env": {"A": "1"},
  "hooks": {"PreToolUse": []},
  "permissions": {
    "allow": ["Bash(git status)"],
    "deny": ["Read(~/.aws/**)"],
    "defaultMode": "acceptEdits"
  }
})j";
const std::string kProjectJson = R"j({
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Edit(src/**)"],
    "ask": ["Bash(git push:*)"],
    "deny": ["Read(./secret.txt)"],
    "defaultMode": "bypassPermissions"
  }
})j";
const std::string kLocalJson =
    R"j({"permissions": {"defaultMode": "plan", "deny": ["WebFetch"]}})j";
const std::string kUserToml = "[permissions]\nallow = [\"mcp__github\"]\n";
const std::string kProjectToml =
    "[permissions]\ndeny = [\"Bash(rm:*)\"]\nallow = [\"Write\"]\ndefaultMode = \"default\"\n";

TEST_F(PermissionMerge, SourcesMergeInClaudeCodesOrderAndTrustedProjectsMayWiden) {
  write(*files_.claude_user_file, kUserJson);
  write(*files_.user_file, kUserToml);
  write(*files_.claude_project_file, kProjectJson);
  write(*files_.project_file, kProjectToml);
  trust(*files_.claude_project_file, kProjectJson);
  trust(*files_.project_file, kProjectToml);
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(rules(c->permissions), (std::vector<std::string>{
                                       "allow Bash(git status) @home/.claude/settings.json:6",
                                       "deny Read(~/.aws/**) @home/.claude/settings.json:7",
                                       "allow mcp__github @config/mecha/config.toml:2",
                                       "allow Bash(npm run test:*) @tree/.claude/settings.json:3",
                                       "allow Edit(src/**) @tree/.claude/settings.json:3",
                                       "ask Bash(git push:*) @tree/.claude/settings.json:4",
                                       "deny Read(./secret.txt) @tree/.claude/settings.json:5",
                                       "deny Bash(rm:*) @tree/.mecha/config.toml:2",
                                       "allow Write @tree/.mecha/config.toml:3",
                                   }));
  // The last source that sets a mode wins: the project's .mecha/config.toml.
  EXPECT_EQ(c->permissions.default_mode, PermissionMode::kDefault);
  EXPECT_EQ(c->permissions.mode_origin, (SettingOrigin{files_.project_file->string(), 4}));
  EXPECT_TRUE(c->permissions.notes.empty());

  // A trusted local file after them: its mode wins over the shared file's.
  write(*files_.claude_project_local, kLocalJson);
  std::filesystem::remove(*files_.project_file);
  trust(*files_.claude_project_local, kLocalJson);
  c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->permissions.default_mode, PermissionMode::kPlan);
  EXPECT_EQ(c->permissions.mode_origin, (SettingOrigin{files_.claude_project_local->string(), 1}));
}

// A cloned repository's settings may only tighten until the user trusts them.
TEST_F(PermissionMerge, UntrustedProjectFilesGiveOnlyDenyAskAndPlanWithANote) {
  write(*files_.claude_user_file, kUserJson);
  write(*files_.claude_project_file, kProjectJson);
  write(*files_.project_file, kProjectToml);
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(rules(c->permissions), (std::vector<std::string>{
                                       "allow Bash(git status) @home/.claude/settings.json:6",
                                       "deny Read(~/.aws/**) @home/.claude/settings.json:7",
                                       "ask Bash(git push:*) @tree/.claude/settings.json:4",
                                       "deny Read(./secret.txt) @tree/.claude/settings.json:5",
                                       "deny Bash(rm:*) @tree/.mecha/config.toml:2",
                                   }));
  EXPECT_EQ(c->permissions.default_mode, PermissionMode::kAcceptEdits) << "the user's mode holds";
  const std::string pj = files_.claude_project_file->string();
  const std::string pt = files_.project_file->string();
  EXPECT_EQ(c->permissions.notes,
            (std::vector<std::string>{
                pj +
                    " is not trusted, so what it widens is left out: allow rule Bash(npm run "
                    "test:*), allow rule Edit(src/**), defaultMode \"bypassPermissions\". A "
                    "project's settings may only tighten permissions until you trust them; read "
                    "it, and if you accept what it allows, run: mecha trust " +
                    pj,
                pt +
                    " is not trusted, so what it widens is left out: allow rule Write, "
                    "defaultMode \"default\". A project's settings may only tighten permissions "
                    "until you trust them; read it, and if you accept what it allows, run: mecha "
                    "trust " +
                    pt,
            }));

  // plan tightens, so it is taken untrusted.
  write(*files_.claude_project_local, kLocalJson);
  c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->permissions.default_mode, PermissionMode::kPlan);
  EXPECT_EQ(rules(c->permissions)[4], "deny WebFetch @tree/.claude/settings.local.json:1");

  // Trust follows the content: a trusted file edited afterwards is untrusted again.
  trust(*files_.project_file, kProjectToml);
  write(*files_.project_file, kProjectToml + "ask = [\"Bash(make)\"]\n");
  c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->permissions.notes.back(),
            pt +
                " changed since you trusted it, so what it widens is left out: allow rule "
                "Write, defaultMode \"default\". A project's settings may only tighten "
                "permissions until you trust them; read it, and if you accept what it allows, "
                "run: mecha trust " +
                pt);
}

TEST_F(PermissionMerge, ExplicitConfigStillReadsClaudeCodesFiles) {
  write(*files_.claude_user_file, kUserJson);
  write(*files_.project_file, kProjectToml);
  const auto explicit_file = dir_ / "only.toml";
  write(explicit_file, "[permissions]\nask = [\"Edit\"]\n");
  files_.explicit_file = explicit_file;
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(rules(c->permissions),
            (std::vector<std::string>{"allow Bash(git status) @home/.claude/settings.json:6",
                                      "deny Read(~/.aws/**) @home/.claude/settings.json:7",
                                      "ask Edit @only.toml:2"}));
}

TEST_F(PermissionMerge, MalformedRulesAndUnknownKeysAreErrorsNamingFileAndLine) {
  const std::string pj = files_.claude_project_file->string();
  const std::pair<std::string, std::string> json_cases[] = {
      {"{\n\"permissions\": {\n \"deny\": [\n  \"Read(./a)\",\n  \"Bash(git status\"\n]}}",
       pj + ":5: permissions.deny: rule \"Bash(git status\": has no closing \")\" at its end"},
      {"{\"permissions\": {\"allow\": \"Bash\"}}",
       pj + ":1: permissions.allow must be a list of rules, not string"},
      {"{\"permissions\": {\"allow\": [3]}}",
       pj + ":1: permissions.allow holds integer, where a rule (a string) belongs"},
      {"{\n\"permissions\": {\n\"defaultMode\": \"yolo\"}}",
       pj + ":3: permissions.defaultMode: unknown permission mode \"yolo\" (modes: default, "
            "acceptEdits, plan, bypassPermissions)"},
      {"{\"permissions\": {\n\"alow\": []}}",
       pj + ":2: unknown key \"alow\" in permissions (keys: allow, ask, deny, defaultMode, "
            "additionalDirectories, disableBypassPermissionsMode)"},
      {"{\"permissions\": []}", pj + ":1: permissions must be an object, not array"},
  };
  for (const auto& [text, error] : json_cases) {
    write(*files_.claude_project_file, text);
    auto c = load_config(files_);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.message(), error);
  }
  std::filesystem::remove(*files_.claude_project_file);

  const std::string pt = files_.project_file->string();
  const std::pair<std::string, std::string> toml_cases[] = {
      {"[permissions]\nask = [\n  \"Bash(ok)\",\n  \"WebFetch(x)\",\n]\n",
       pt + ":4: permissions.ask: rule \"WebFetch(x)\": WebFetch takes domain:HOST "
            "(WebFetch(domain:example.com))"},
      {"[permissions]\ndeny = \"Read\"\n",
       pt + ":2: key 'deny' in [permissions] must be a list of rules (strings)"},
      {"[permissions]\ndefaultMode = \"auto\"\n",
       pt + ":2: permissions.defaultMode: unknown permission mode \"auto\" (modes: default, "
            "acceptEdits, plan, bypassPermissions)"},
  };
  for (const auto& [text, error] : toml_cases) {
    write(*files_.project_file, text);
    auto c = load_config(files_);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.message(), error);
  }
  write(*files_.project_file, "[permissions]\ndeny = []\nmode = \"plan\"\n");
  auto c = load_config(files_);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.message().starts_with(pt + ":3: unknown key 'mode' in [permissions]"))
      << c.message();
}

TEST_F(PermissionMerge, ClaudeKeysMechaDoesNotImplementGiveANoteAndOtherKeysAreLeftAlone) {
  write(*files_.claude_user_file, R"j({
  "statusLine": {"type": "command"},
  "permissions": {
    "additionalDirectories": ["../docs"],
    "disableBypassPermissionsMode": "disable"
  }
})j");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  const std::string u = files_.claude_user_file->string();
  EXPECT_EQ(
      c->permissions.notes,
      (std::vector<std::string>{
          u + ":4: permissions.additionalDirectories is not supported by mecha and is ignored",
          u + ":5: permissions.disableBypassPermissionsMode is not supported by mecha and is "
              "ignored"}));
}

}  // namespace
}  // namespace mecha::config
