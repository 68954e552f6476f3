#include "config/bash_config.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace mecha::config {
namespace {

// The error reading `text`, or "ok".
std::string error_of(const std::string& text) {
  auto c = parse_config(text, "c.toml");
  return c.ok() ? std::string("ok") : c.message();
}

TEST(BashConfig, DefaultsWhenAbsent) {
  auto c = parse_config("", "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->bash, BashConfig{});
  EXPECT_EQ(c->bash.default_timeout_s, 120);
  EXPECT_EQ(c->bash.max_timeout_s, 600);
  EXPECT_EQ(c->bash.max_output_chars, 30000);
  EXPECT_EQ(c->sandbox, SandboxConfig{});
  EXPECT_EQ(c->sandbox.mode, SandboxMode::kBwrap);
  EXPECT_FALSE(c->sandbox.network);
  EXPECT_EQ(c->sandbox.pass_env,
            (std::vector<std::string>{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ",
                                      "USER", "LOGNAME"}));
  EXPECT_EQ(c->sandbox.max_processes, 512);
  EXPECT_EQ(c->sandbox.max_memory_mb, 8192);
  EXPECT_EQ(c->sandbox.max_file_size_mb, 4096);
}

TEST(BashConfig, ReadsEveryKey) {
  auto c = parse_config(R"(
[bash]
default_timeout_s = 30
max_timeout_s = 60.5
max_output_chars = 1000
[sandbox]
mode = "off"
network = true
pass_env = ["PATH", "CI"]
set_env = { CI = "1", LANG = "C.UTF-8" }
max_processes = 50
max_memory_mb = 0
max_file_size_mb = 10
)",
                        "c.toml");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->bash, (BashConfig{30, 60.5, 1000}));
  SandboxConfig want;
  want.mode = SandboxMode::kOff;
  want.network = true;
  want.pass_env = {"PATH", "CI"};
  want.set_env = {{"CI", "1"}, {"LANG", "C.UTF-8"}};
  want.max_processes = 50;
  want.max_memory_mb = 0;
  want.max_file_size_mb = 10;
  EXPECT_EQ(c->sandbox, want);
}

TEST(BashConfig, BadValuesNameFileLineAndKey) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"[sandbox]\nmode = \"none\"\n",
       "c.toml:2: key 'mode' in [sandbox] must be \"bwrap\" or \"off\""},
      {"[sandbox]\nmode = 1\n", "c.toml:2: key 'mode' in [sandbox] must be \"bwrap\" or \"off\""},
      {"[sandbox]\nnetwork = \"yes\"\n",
       "c.toml:2: key 'network' in [sandbox] must be true or false"},
      {"[sandbox]\nnet = true\n",
       "c.toml:2: unknown key 'net' in [sandbox] (keys: max_file_size_mb, max_memory_mb, "
       "max_processes, mode, network, pass_env, set_env)"},
      {"[sandbox]\npass_env = \"PATH\"\n",
       "c.toml:2: key 'pass_env' in [sandbox] must be an array of strings"},
      {"[sandbox]\npass_env = [\"PATH\",\n 3]\n",
       "c.toml:3: key 'pass_env' in [sandbox] must be an array of strings"},
      {"[sandbox.set_env]\nA = \"1\"\nB = 2\n",
       "c.toml:3: key 'set_env' in [sandbox] must be a table of strings"},
      {"[sandbox]\nmax_processes = -1\n",
       "c.toml:2: key 'max_processes' in [sandbox] must be an integer from 0 to 1000000, not -1"},
      {"[sandbox]\nmax_memory_mb = 1.5\n",
       "c.toml:2: key 'max_memory_mb' in [sandbox] must be an integer from 0 to 1000000"},
      {"[sandbox]\nmax_file_size_mb = \"big\"\n",
       "c.toml:2: key 'max_file_size_mb' in [sandbox] must be an integer from 0 to 1000000"},
      {"sandbox = 1\n", "c.toml:1: [sandbox] must be a table"},
      {"[bash]\ntimeout = 3\n",
       "c.toml:2: unknown key 'timeout' in [bash] (keys: default_timeout_s, max_output_chars, "
       "max_timeout_s)"},
      {"[bash]\ndefault_timeout_s = 0\n",
       "c.toml:2: key 'default_timeout_s' in [bash] must be a number of seconds above 0 and at "
       "most 86400"},
      {"[bash]\nmax_timeout_s = \"10\"\n",
       "c.toml:2: key 'max_timeout_s' in [bash] must be a number"},
      {"[bash]\nmax_output_chars = 99\n",
       "c.toml:2: key 'max_output_chars' in [bash] must be an integer from 100 to 2147483647, not "
       "99"},
      {"[bash]\ndefault_timeout_s = 700\n",
       "c.toml:1: [bash] has default_timeout_s = 700 above max_timeout_s = 600"},
  };
  for (const Case& c : cases) EXPECT_EQ(error_of(c.text), c.error) << c.text;
}

// Commands never get mecha's keys: a provider's key by name, or any name that looks like one.
TEST(BashConfig, PassEnvNamingACredentialIsRefused) {
  EXPECT_EQ(error_of("[sandbox]\npass_env = [\"PATH\", \"ANTHROPIC_API_KEY\"]\n"),
            "c.toml:2: key 'pass_env' in [sandbox] names ANTHROPIC_API_KEY, which holds a "
            "credential; commands never get mecha's keys");
  EXPECT_EQ(error_of("[sandbox]\npass_env = [\"GH_TOKEN\"]\n"),
            "c.toml:2: key 'pass_env' in [sandbox] names GH_TOKEN, which holds a credential; "
            "commands never get mecha's keys");
  EXPECT_EQ(error_of("[providers.local]\nkind = \"openai\"\napi_key_env = \"LLAMA_PASS\"\n"
                     "[sandbox]\npass_env = [\"PATH\", \"LLAMA_PASS\"]\n"),
            "c.toml:5: key 'pass_env' in [sandbox] names LLAMA_PASS, which holds a credential; "
            "commands never get mecha's keys");
  EXPECT_EQ(error_of("[sandbox]\npass_env = [\"PATH\", \"CI\"]\n"), "ok");
}

}  // namespace
}  // namespace mecha::config
