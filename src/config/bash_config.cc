#include "config/bash_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {
namespace {

constexpr double kMaxBashTimeoutS = 86400;

bool looks_like_credential(const std::string& name) {
  std::string up = name;
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* w : {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"})
    if (up.find(w) != std::string::npos) return true;
  return false;
}

Status read_seconds(TableReader& r, const char* key, double* out) {
  MECHA_RETURN_IF_ERROR(r.get(key, out));
  if (!(*out > 0 && *out <= kMaxBashTimeoutS))
    return r.error_at(
        key, fmt::format("must be a number of seconds above 0 and at most {}", kMaxBashTimeoutS));
  return ok_status();
}

}  // namespace

Status read_bash(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[bash]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[bash]");
  BashConfig& b = config->bash;
  MECHA_RETURN_IF_ERROR(read_seconds(r, "default_timeout_s", &b.default_timeout_s));
  MECHA_RETURN_IF_ERROR(read_seconds(r, "max_timeout_s", &b.max_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_output_chars", &b.max_output_chars, 100, INT32_MAX));
  MECHA_RETURN_IF_ERROR(r.finish());
  if (reading.whole && b.default_timeout_s > b.max_timeout_s)
    return r.error(fmt::format("has default_timeout_s = {} above max_timeout_s = {}",
                               b.default_timeout_s, b.max_timeout_s));
  return ok_status();
}

Status read_sandbox(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[sandbox]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[sandbox]");
  SandboxConfig& s = config->sandbox;
  std::string mode = s.mode == SandboxMode::kBwrap ? "bwrap" : "off";
  MECHA_RETURN_IF_ERROR(r.get_one_of("mode", &mode, {"bwrap", "off"}));
  s.mode = mode == "bwrap" ? SandboxMode::kBwrap : SandboxMode::kOff;
  MECHA_RETURN_IF_ERROR(r.get("network", &s.network));
  MECHA_RETURN_IF_ERROR(r.get("pass_env", &s.pass_env));
  MECHA_RETURN_IF_ERROR(r.get("set_env", &s.set_env));
  for (const char* key : {"max_processes", "max_memory_mb", "max_file_size_mb"}) {
    int64_t* limit = std::string_view(key) == "max_processes"   ? &s.max_processes
                     : std::string_view(key) == "max_memory_mb" ? &s.max_memory_mb
                                                                : &s.max_file_size_mb;
    MECHA_RETURN_IF_ERROR(r.get_in_range(key, limit, 0, kMaxSandboxLimit));
  }
  MECHA_RETURN_IF_ERROR(r.finish());

  // Commands never get mecha's keys: not by name, and not by a name that looks like one.
  std::vector<std::string> key_envs = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  for (const auto& [name, p] : config->providers)
    if (!p.api_key_env.empty()) key_envs.push_back(p.api_key_env);
  for (const auto& name : s.pass_env) {
    bool api_key = std::find(key_envs.begin(), key_envs.end(), name) != key_envs.end();
    if (api_key || looks_like_credential(name))
      return r.error_at("pass_env", fmt::format("names {}, which holds a credential; commands "
                                                "never get mecha's keys",
                                                name));
  }
  return ok_status();
}

}  // namespace mecha::config
