#include "guard/policy.h"

#include <fmt/format.h>

#include <set>

#include "config/config.h"

namespace mecha::guard {
namespace {

using config::located;

Status read_strings(const toml::node& n, const std::string& key, std::vector<std::string>& out) {
  const toml::array* a = n.as_array();
  if (a == nullptr)
    return Status::error(
        located(n, fmt::format("key '{}' in [guard] must be an array of strings", key)));
  for (const auto& e : *a) {
    auto v = e.value<std::string>();
    if (!v)
      return Status::error(
          located(e, fmt::format("key '{}' in [guard] must be an array of strings", key)));
    out.push_back(*v);
  }
  return ok_status();
}

Result<std::vector<Rule>> rules_from(const toml::array& rules, const std::string& what) {
  std::vector<Rule> out;
  size_t i = 0;
  for (const auto& n : rules) {
    const toml::table* t = n.as_table();
    if (t == nullptr)
      return Status::error(located(n, fmt::format("{}[{}] must be a table", what, i)));
    auto r = rule_from_toml(*t, fmt::format("{}[{}]", what, i));
    if (!r) return r.status();
    out.push_back(std::move(*r));
    ++i;
  }
  return out;
}

}  // namespace

std::vector<std::string> default_writable() {
  return {"/tmp",        "/var/tmp", "/dev/null", "/dev/stdout",
          "/dev/stderr", "/dev/tty", "/dev/fd",   "/proc/self/fd"};
}

std::vector<std::string> default_protected() {
  return {".mecha", ".claude", ".git/hooks", ".git/config"};
}

std::vector<std::string> default_secrets() {
  return {"~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc", "~/.git-credentials", "~/.docker/config.json",
          "~/.kube", "~/.config/gh", "~/.config/gcloud", "~/.azure", "~/.npmrc", "~/.pypirc",
          "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.cargo/credentials*", "~/.pgpass",
          "~/.my.cnf", "~/.vault-token", "~/.config/git/credentials", "~/.claude/.credentials.json",
          "~/.codex/auth.json", "~/.config/hub", "~/.terraform.d/credentials.tfrc.json",
          "~/.gem/credentials", "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
          "~/.config/BraveSoftware", "~/.config/microsoft-edge", "~/.config/vivaldi",
          "~/.config/opera", "~/snap/firefox", "~/.password-store", "~/.local/share/keyrings",
          "~/.config/mecha", "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout",
          "~/.profile", "~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin", "~/.bash_history",
          "~/.zsh_history", "~/.python_history", "~/.psql_history", "~/.mysql_history",
          "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
          "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_dsa_key",
          "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
          "/etc/ssh/ssh_host_rsa_key",
          // Raw disks and memory hold every secret at once. As patterns, so that the sandbox
          // (which masks the plain paths of this list) leaves its own fresh /dev alone.
          "/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*",
          "/dev/mapper/*", "/dev/*mem", "/dev/por[t]", "/root", "/proc/*/environ", "/proc/*/mem",
          "/run/secrets", "/var/run/secrets"};
}

Policy default_policy(const std::string& work_tree, const std::string& home) {
  Policy p;
  p.places.work_tree = normalise(work_tree);
  p.places.home = normalise(home);
  p.places.writable = default_writable();
  p.places.protected_ = default_protected();
  p.places.secrets = default_secrets();
  auto table = toml::parse(default_rules_toml(), std::string("the default guard rules"));
  const toml::array* rules = table["rules"].as_array();
  auto built = rules_from(*rules, "[[rules]]");
  if (built) p.rules = std::move(*built);  // the defaults are tested; they always build
  return p;
}

Result<Policy> load_policy(const toml::table& config, const std::string& work_tree,
                           const std::string& home) {
  Policy p = default_policy(work_tree, home);
  const toml::node* g = config.get("guard");
  if (g == nullptr) return p;
  const toml::table* guard = g->as_table();
  if (guard == nullptr) return Status::error(located(*g, "[guard] must be a table"));
  std::vector<std::string> disabled;
  for (const auto& [key, value] : *guard) {
    std::string k(key.str());
    if (k == "writable") {
      std::vector<std::string> w;
      MECHA_RETURN_IF_ERROR(read_strings(value, k, w));
      p.places.writable.clear();
      for (const auto& s : w) p.places.writable.push_back(normalise(s));
    } else if (k == "protected") {
      MECHA_RETURN_IF_ERROR(read_strings(value, k, p.places.protected_));
    } else if (k == "secrets") {
      MECHA_RETURN_IF_ERROR(read_strings(value, k, p.places.secrets));
    } else if (k == "disable_rules") {
      MECHA_RETURN_IF_ERROR(read_strings(value, k, disabled));
    } else if (k == "rules") {
      const toml::array* a = value.as_array();
      if (a == nullptr)
        return Status::error(
            located(value, "key 'rules' in [guard] must be an array of tables ([[guard.rules]])"));
      auto more = rules_from(*a, "[[guard.rules]]");
      if (!more) return more.status();
      for (auto& r : *more) p.rules.push_back(std::move(r));
    } else {
      return Status::error(
          located(value, fmt::format("unknown key '{}' in [guard] (keys: disable_rules, "
                                     "protected, rules, secrets, writable)",
                                     k)));
    }
  }
  for (const auto& name : disabled) {
    size_t before = p.rules.size();
    std::erase_if(p.rules, [&](const Rule& r) { return r.name == name; });
    if (p.rules.size() == before)
      return Status::error(
          fmt::format("[guard] disable_rules names '{}', which is not a rule", name));
  }
  return p;
}

}  // namespace mecha::guard
