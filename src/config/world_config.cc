#include "config/world_config.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {
namespace {

// A path key: absolute, or "~/..." under $HOME. A relative one would depend on the directory
// mecha is started in, so it is refused rather than guessed at.
Status get_path(TableReader& r, const char* key, std::optional<std::filesystem::path>* out) {
  std::string text;
  MECHA_RETURN_IF_ERROR(r.get(key, &text));
  if (r.node(key) == nullptr) return ok_status();
  if (text.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home != '/')
      return r.error_at(key, "starts with ~/, but $HOME is not an absolute path");
    *out = std::filesystem::path(home) / text.substr(2);
    return ok_status();
  }
  if (text.empty() || text[0] != '/') {
    return r.error_at(key, fmt::format("must be an absolute path or start with ~/, not \"{}\" (a "
                                       "relative path would depend on where mecha is started)",
                                       text));
  }
  *out = std::filesystem::path(text);
  return ok_status();
}

// A URL key whose scheme must be one of `schemes`, with something after it.
Status check_url(TableReader& r, const char* key, const std::string& url,
                 const std::vector<std::string>& schemes) {
  if (r.node(key) == nullptr) return ok_status();
  for (const auto& s : schemes) {
    std::string prefix = s + "://";
    if (url.starts_with(prefix) && url.size() > prefix.size()) return ok_status();
  }
  std::string listed;
  for (size_t i = 0; i < schemes.size(); ++i)
    listed += fmt::format("{}{}://",
                          i == 0                    ? ""
                          : i + 1 == schemes.size() ? " or "
                                                    : ", ",
                          schemes[i]);
  return r.error_at(key, fmt::format("must be a URL starting with {}, not \"{}\"", listed, url));
}

// The name of an environment variable: letters, digits and '_', not starting with a digit.
Status check_env_name(TableReader& r, const char* key, const std::string& name) {
  if (r.node(key) == nullptr) return ok_status();
  bool good = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) good &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (good) return ok_status();
  return r.error_at(key, fmt::format("must name an environment variable, not \"{}\"", name));
}

// A domain of allowed_domains: a bare host name ("docs.python.org"), kept in lower case.
Status check_domains(TableReader& r, std::vector<std::string>* domains) {
  for (std::string& d : *domains) {
    bool good = !d.empty() && d.front() != '.' && d.back() != '.' && d.front() != '-';
    for (char& c : d) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      good &= std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    }
    good &= d.find("..") == std::string::npos;
    if (!good) {
      return r.error_at("allowed_domains",
                        fmt::format("must hold host names such as \"docs.python.org\" (no scheme, "
                                    "port, path or wildcard), not \"{}\"",
                                    d));
    }
  }
  return ok_status();
}

Status read_search(const toml::node& value, const Reading& reading, SearchConfig* s) {
  auto t = table_of(value, reading.file, "[web.search]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[web.search]");
  MECHA_RETURN_IF_ERROR(r.get_one_of("backend", &s->backend, {"searxng", "brave"}));
  MECHA_RETURN_IF_ERROR(r.get("url", &s->url));
  MECHA_RETURN_IF_ERROR(check_url(r, "url", s->url, {"http", "https"}));
  MECHA_RETURN_IF_ERROR(r.get("api_key_env", &s->api_key_env));
  MECHA_RETURN_IF_ERROR(check_env_name(r, "api_key_env", s->api_key_env));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_results", &s->max_results, 1, 50));
  MECHA_RETURN_IF_ERROR(r.finish());
  if (!reading.whole) return ok_status();
  if (s->backend == "searxng" && s->url.empty())
    return r.error("has backend = \"searxng\" and needs 'url', the SearXNG server's base URL");
  if (s->backend == "brave" && s->url.empty()) s->url = kBraveSearchUrl;
  return ok_status();
}

}  // namespace

Status read_web(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[web]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[web]");
  WebConfig& w = config->web;
  MECHA_RETURN_IF_ERROR(r.get("allow_private", &w.allow_private));
  MECHA_RETURN_IF_ERROR(r.get("allowed_domains", &w.allowed_domains));
  MECHA_RETURN_IF_ERROR(check_domains(r, &w.allowed_domains));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_bytes", &w.max_bytes, 1, INT64_MAX));
  MECHA_RETURN_IF_ERROR(r.get("timeout_s", &w.timeout_s));
  if (r.node("timeout_s") != nullptr && !(w.timeout_s > 0 && std::isfinite(w.timeout_s)))
    return r.error_at("timeout_s",
                      fmt::format("must be a number of seconds above 0, not {}", w.timeout_s));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_redirects", &w.max_redirects, 0, 20));
  if (const toml::node* search = r.node("search"))
    MECHA_RETURN_IF_ERROR(read_search(*search, reading, &w.search));
  return r.finish();
}

Status read_memory(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[memory]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[memory]");
  MECHA_RETURN_IF_ERROR(r.get("enabled", &config->memory.enabled));
  MECHA_RETURN_IF_ERROR(get_path(r, "file", &config->memory.file));
  return r.finish();
}

Status read_mail(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[mail]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[mail]");
  MECHA_RETURN_IF_ERROR(get_path(r, "maildir", &config->mail.maildir));
  return r.finish();
}

Status read_messaging(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[messaging]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[messaging]");
  MessagingConfig& m = config->messaging;
  std::string approve = m.approve == SendApproval::kAlways        ? "always"
                        : m.approve == SendApproval::kWhenTainted ? "when_tainted"
                                                                  : "never";
  MECHA_RETURN_IF_ERROR(r.get_one_of("approve", &approve, {"always", "when_tainted", "never"}));
  m.approve = approve == "always"         ? SendApproval::kAlways
              : approve == "when_tainted" ? SendApproval::kWhenTainted
                                          : SendApproval::kNever;
  MECHA_RETURN_IF_ERROR(r.get_one_of("backend", &m.backend, {"maildir", "webhook", "smtp"}));
  MECHA_RETURN_IF_ERROR(get_path(r, "maildir", &m.maildir));
  MECHA_RETURN_IF_ERROR(r.get("webhook_url", &m.webhook_url));
  MECHA_RETURN_IF_ERROR(check_url(r, "webhook_url", m.webhook_url, {"http", "https"}));
  MECHA_RETURN_IF_ERROR(r.get("smtp_url", &m.smtp_url));
  MECHA_RETURN_IF_ERROR(check_url(r, "smtp_url", m.smtp_url, {"smtp", "smtps"}));
  MECHA_RETURN_IF_ERROR(r.get("from", &m.from));
  if (r.node("from") != nullptr && m.from.find('@') == std::string::npos)
    return r.error_at("from", fmt::format("must be a mail address, not \"{}\"", m.from));
  MECHA_RETURN_IF_ERROR(r.get("smtp_user_env", &m.smtp_user_env));
  MECHA_RETURN_IF_ERROR(check_env_name(r, "smtp_user_env", m.smtp_user_env));
  MECHA_RETURN_IF_ERROR(r.get("smtp_password_env", &m.smtp_password_env));
  MECHA_RETURN_IF_ERROR(check_env_name(r, "smtp_password_env", m.smtp_password_env));
  MECHA_RETURN_IF_ERROR(get_path(r, "outbox", &m.outbox));
  MECHA_RETURN_IF_ERROR(r.finish());
  // Another file may complete the backend's keys; only the whole config must have them.
  if (!reading.whole) return ok_status();
  auto needs = [&](const char* key) {
    return r.error(fmt::format("has backend = \"{}\" and needs '{}'", m.backend, key));
  };
  if (m.backend == "maildir" && !m.maildir) return needs("maildir");
  if (m.backend == "webhook" && m.webhook_url.empty()) return needs("webhook_url");
  if (m.backend == "smtp" && m.smtp_url.empty()) return needs("smtp_url");
  if (m.backend == "smtp" && m.from.empty()) return needs("from");
  return ok_status();
}

Status read_security(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[security]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[security]");
  SecurityConfig& s = config->security;
  std::string mode = s.mode == SecurityMode::kTrifecta ? "trifecta" : "rule_of_two";
  MECHA_RETURN_IF_ERROR(r.get_one_of("mode", &mode, {"trifecta", "rule_of_two"}));
  s.mode = mode == "trifecta" ? SecurityMode::kTrifecta : SecurityMode::kRuleOfTwo;
  return r.finish();
}

}  // namespace mecha::config
