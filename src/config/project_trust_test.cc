#include "config/project_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/sha256.h"
#include "config/config.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

// A fresh directory, removed afterwards (config's tests cannot use store/testing).
class TrustDir {
 public:
  TrustDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-trust-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? std::filesystem::canonical(tmpl) : std::filesystem::path();
  }
  ~TrustDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name) << text;
  }

 private:
  std::filesystem::path path_;
};

std::string keys_of(const std::string& project, const std::string& user) {
  auto p = toml::parse(project, std::string("project.toml"));
  auto u = toml::parse(user, std::string("user.toml"));
  std::string out;
  for (const auto& k : security_keys(p, u)) {
    if (!out.empty()) out += ", ";
    out += k.key + ":" + std::to_string(k.line);
  }
  return out;
}

// What an untrusted project file may set: "" when it only tightens, else its security keys.
TEST(ProjectTrust, SecurityKeys) {
  struct Case {
    const char* what;
    const char* project;
    const char* user;
    const char* keys;
  };
  const Case cases[] = {
      {"sandbox off", "[sandbox]\nmode = \"off\"\n", "", "sandbox.mode:2"},
      {"sandbox on", "[sandbox]\nmode = \"bwrap\"\n", "[sandbox]\nmode = \"off\"\n", ""},
      {"network on", "[sandbox]\nnetwork = true\n", "", "sandbox.network:2"},
      {"network off", "[sandbox]\nnetwork = false\n", "[sandbox]\nnetwork = true\n", ""},
      {"pass_env", "[sandbox]\npass_env = [\"HOME\"]\n", "", "sandbox.pass_env:2"},
      {"set_env", "[sandbox.set_env]\nLD_PRELOAD = \"x\"\n", "", "sandbox.set_env:1"},
      {"a sandbox key not known yet", "[sandbox]\nmax_processes = 100000\n", "",
       "sandbox.max_processes:2"},
      {"base_url", "[providers.local]\nbase_url = \"http://evil\"\n",
       "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1\"\n",
       "providers.local.base_url:2"},
      {"api_key_env", "[providers.claude]\napi_key_env = \"X\"\n", "",
       "providers.claude.api_key_env:2"},
      {"a new provider, whole", "[providers.evil]\nkind = \"openai\"\nbase_url = \"http://e\"\n",
       "", "providers.evil.kind:2, providers.evil.base_url:3"},
      {"the same provider value as the user's", "[providers.local]\nmodel = \"m\"\n",
       "[providers.local]\nkind = \"openai\"\nmodel = \"m\"\n", ""},
      {"provider selection", "provider = \"evil\"\n", "provider = \"local\"\n", "provider:1"},
      {"the user's own selection", "provider = \"local\"\n", "provider = \"local\"\n", ""},
      {"writable widened", "[guard]\nwritable = [\"/\"]\n", "", "guard.writable:2"},
      {"writable within the user's", "[guard]\nwritable = [\"/tmp\"]\n",
       "[guard]\nwritable = [\"/tmp\", \"/var/tmp\"]\n", ""},
      {"writable beyond the user's", "[guard]\nwritable = [\"/tmp\", \"/home\"]\n",
       "[guard]\nwritable = [\"/tmp\"]\n", "guard.writable:2"},
      {"disable_rules", "[guard]\ndisable_rules = [\"rm-root\"]\n", "", "guard.disable_rules:2"},
      {"more protected, secrets, rules",
       "[guard]\nprotected = [\"x\"]\nsecrets = [\"~/.k\"]\n[[guard.rules]]\nname = \"n\"\n", "",
       ""},
      {"lower limits", "[limits]\nmax_turns = 5\nmax_time = 60\nmax_cost = 0.5\n",
       "[limits]\nmax_cost = 1.0\n", ""},
      {"higher limits", "[limits]\nmax_turns = 500\nmax_cost = 2.0\n", "[limits]\nmax_cost = 1.0\n",
       "limits.max_turns:2, limits.max_cost:3"},
      {"a limit of zero is none", "[limits]\nmax_time = 0\n", "", "limits.max_time:2"},
      {"bash timeouts", "[bash]\ndefault_timeout_s = 10\nmax_timeout_s = 9000\n",
       "[bash]\nmax_timeout_s = 900\n", "bash.max_timeout_s:3"},
      {"cheaper model", "[pricing.\"claude-sonnet-4-5\"]\ninput_per_mtok = 0.0\n", "",
       "pricing.\"claude-sonnet-4-5\":1"},
      {"dearer model, and an unpriced one priced",
       "[pricing.\"claude-sonnet-4-5\"]\ninput_per_mtok = 30.0\noutput_per_mtok = 150.0\n"
       "[pricing.\"local\"]\ninput_per_mtok = 0.1\n",
       "", ""},
      {"subagents",
       "[[subagents]]\nname = \"a\"\ndescription = \"d\"\ntrusted_output = true\n"
       "provider = \"evil\"\n[[subagents]]\nname = \"b\"\ntrusted_output = false\n",
       "", "subagents[0].trusted_output:4, subagents[0].provider:5"},
      {"the world tables, tightened",
       "[web]\nallow_private = false\nallowed_domains = []\n[memory]\nenabled = false\n"
       "[messaging]\napprove = \"always\"\n[security]\nmode = \"rule_of_two\"\n",
       "[web]\nallow_private = true\nallowed_domains = [\"a.com\"]\n[messaging]\n"
       "approve = \"never\"\n",
       ""},
      {"the world tables, widened",
       "[web]\nallow_private = true\nallowed_domains = [\"a.com\"]\n[memory]\nenabled = true\n"
       "[messaging]\napprove = \"when_tainted\"\n[security]\nmode = \"trifecta\"\n",
       "[memory]\nenabled = false\n[security]\nmode = \"rule_of_two\"\n",
       "web.allow_private:2, web.allowed_domains:3, memory.enabled:5, messaging.approve:7, "
       "security.mode:9"},
      {"every other world key, even a lower one",
       "[web]\nmax_bytes = 1\ntimeout_s = 1\nmax_redirects = 0\n[web.search]\n"
       "backend = \"brave\"\nmax_results = 1\n[memory]\nfile = \"/n\"\n[mail]\n"
       "maildir = \"/m\"\n[messaging]\nbackend = \"maildir\"\nmaildir = \"/o\"\n",
       "",
       "web.max_bytes:2, web.timeout_s:3, web.max_redirects:4, web.search.backend:6, "
       "web.search.max_results:7, memory.file:9, mail.maildir:11, messaging.backend:13, "
       "messaging.maildir:14"},
      {"the user's own search backend", "[web.search]\nbackend = \"brave\"\nmax_results = 3\n",
       "[web.search]\nbackend = \"brave\"\n", "web.search.max_results:3"},
      {"world tables that are not tables", "mail = 1\n[web]\nsearch = 2\n", "",
       "mail:1, web.search:3"},
      // [mcp_servers] is not refused whole: each server is left out or narrows (mcp_sources.h).
      {"sections that run things",
       "[hooks]\nx = 1\n[mcp_servers.a]\ncommand = \"sh\"\n[tools]\n[permissions]\n[server]\n", "",
       "hooks:1, tools:5, server:7"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(keys_of(c.project, c.user), c.keys) << c.what;
  }
}

class ProjectTrustLoad : public ::testing::Test {
 protected:
  ProjectTrustLoad() {
    files_.user_file = dir_.path() / "user.toml";
    files_.project_file = dir_.path() / "tree" / ".mecha" / "config.toml";
    files_.trust_file = dir_.path() / "state" / "trusted-configs";
  }
  void project(const std::string& text) { dir_.write("tree/.mecha/config.toml", text); }
  std::string message(const char* state, const std::string& keys) const {
    std::string path = dir_.path() / "tree" / ".mecha" / "config.toml";
    return fmt::format(
        "{} {} and sets security keys: {}. A project's config may only tighten security until "
        "you trust it; read it, and if you accept what it does, run: mecha trust {}",
        path, state, keys, path);
  }
  TrustDir dir_;
  ConfigFiles files_;
};

TEST_F(ProjectTrustLoad, TrustingTheExactContentLetsItLoadAndAnEditRevokesIt) {
  const std::string text = "[sandbox]\nmode = \"off\"\npass_env = [\"HOME\"]\n";
  project(text);
  auto refused = load_config(files_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            message("is not trusted", "sandbox.mode (line 2), sandbox.pass_env (line 3)"));

  auto trust = TrustStore::load(*files_.trust_file);
  ASSERT_TRUE(trust.ok()) << trust.message();
  const std::string path = (dir_.path() / "tree" / ".mecha" / "config.toml").string();
  ASSERT_TRUE(trust->trust(path, sha256_hex(text)).ok());
  auto loaded = load_config(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(loaded->sandbox.mode, SandboxMode::kOff);

  project(text + "set_env = { A = \"1\" }\n");
  auto changed = load_config(files_);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.message(),
            message("changed since you trusted it",
                    "sandbox.mode (line 2), sandbox.pass_env (line 3), sandbox.set_env (line 4)"));
}

// A cloned tree whose .mecha links to another tree's trusted .mecha does not get its trust.
TEST_F(ProjectTrustLoad, ALinkToAFileTrustedForAnotherTreeIsNotTrusted) {
  const std::string text = "[sandbox]\nmode = \"off\"\n";
  dir_.write("mine/.mecha/config.toml", text);
  auto trust = TrustStore::load(*files_.trust_file);
  ASSERT_TRUE(trust.ok());
  ASSERT_TRUE(
      trust->trust((dir_.path() / "mine/.mecha/config.toml").string(), sha256_hex(text)).ok());
  std::filesystem::create_directories(dir_.path() / "tree");
  std::filesystem::create_directory_symlink(dir_.path() / "mine" / ".mecha",
                                            dir_.path() / "tree" / ".mecha");
  auto refused = load_config(files_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), message("is not trusted", "sandbox.mode (line 2)"));
  files_.project_file = dir_.path() / "mine" / ".mecha" / "config.toml";
  EXPECT_TRUE(load_config(files_).ok());
}

TEST_F(ProjectTrustLoad, AFileThatOnlyTightensLoadsUntrusted) {
  dir_.write("user.toml", "[limits]\nmax_turns = 20\n");
  project("[limits]\nmax_turns = 5\n[sandbox]\nnetwork = false\n");
  auto loaded = load_config(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(loaded->limits.max_turns, 5);
}

TEST_F(ProjectTrustLoad, NoTrustFileMeansNothingIsTrusted) {
  files_.trust_file.reset();
  project("provider = \"x\"\n[providers.x]\nkind = \"openai\"\n");
  auto refused = load_config(files_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            message("is not trusted", "provider (line 1), providers.x.kind (line 3)"));
}

TEST_F(ProjectTrustLoad, TrustRecordsOthersCanWriteAreRefused) {
  dir_.write("state/trusted-configs", "");
  ::chmod(files_.trust_file->c_str(), 0666);
  project("[limits]\nmax_turns = 5\n");
  auto refused = load_config(files_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(),
            fmt::format("the trust records {0} are not a regular file of yours closed to others' "
                        "writes; nothing is trusted until it is (chmod 600 {0})",
                        files_.trust_file->string()));
}

TEST(TrustStore, RecordsAreSha256sumLinesAndRevokeDropsThem) {
  TrustDir dir;
  const auto file = dir.path() / "state" / "trusted-configs";
  auto t = TrustStore::load(file);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->trust("/a/.mecha/config.toml", sha256_hex("a")).ok());
  ASSERT_TRUE(t->trust("/b/.mecha/config.toml", sha256_hex("b")).ok());
  ASSERT_TRUE(t->trust("/a/.mecha/config.toml", sha256_hex("a2")).ok());
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, sha256_hex("b") + "  /b/.mecha/config.toml\n" + sha256_hex("a2") +
                      "  /a/.mecha/config.toml\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto again = TrustStore::load(file);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->check("/a/.mecha/config.toml", sha256_hex("a2")), TrustVerdict::kTrusted);
  EXPECT_EQ(again->check("/a/.mecha/config.toml", sha256_hex("a")), TrustVerdict::kChanged);
  EXPECT_EQ(again->check("/c/.mecha/config.toml", sha256_hex("a")), TrustVerdict::kUntrusted);
  EXPECT_EQ(*again->revoke("/b/.mecha/config.toml"), true);
  EXPECT_EQ(*again->revoke("/b/.mecha/config.toml"), false);
  EXPECT_EQ(TrustStore::load(file)->records(),
            (std::vector<TrustRecord>{{sha256_hex("a2"), "/a/.mecha/config.toml"}}));
  dir.write("state/bad", "not a record\n");
  EXPECT_EQ(TrustStore::load(dir.path() / "state" / "bad").message(),
            (dir.path() / "state" / "bad").string() +
                ":1: a trust record is \"<sha256>  <absolute path>\"; run mecha trust --list, or "
                "remove the line");
  EXPECT_EQ(shell_quoted("/a b/it's"), "'/a b/it'\\''s'");
  EXPECT_EQ(shell_quoted("/plain/path-1.toml"), "/plain/path-1.toml");
}

}  // namespace
}  // namespace mecha::config
