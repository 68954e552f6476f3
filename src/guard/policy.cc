#include "guard/policy.h"

#include <fmt/format.h>

#include "config/config.h"

namespace mecha::guard {
namespace {

Result<std::vector<Rule>> rules_from(const std::vector<config::GuardRule>& rules) {
  std::vector<Rule> out;
  for (const auto& c : rules) {
    auto r = rule_from_config(c);
    if (!r) return r.status();
    out.push_back(std::move(*r));
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
          "~/.config/mecha", "~/.local/state/mecha", "~/.bashrc", "~/.bash_profile",
          "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.zshrc", "~/.zshenv", "~/.zprofile",
          "~/.zlogin", "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.psql_history",
          "~/.mysql_history", "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
          "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_dsa_key",
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
  // The defaults are tested; they always read and build.
  auto defaults = config::parse_config(default_rules_toml(), "the default guard rules");
  if (defaults) {
    auto built = rules_from(defaults->guard.rules);
    if (built) p.rules = std::move(*built);
    for (Rule& r : p.rules) r.builtin = true;
  }
  return p;
}

Result<Policy> policy_from_config(const config::GuardConfig& config, const std::string& work_tree,
                                  const std::string& home) {
  Policy p = default_policy(work_tree, home);
  if (config.writable) {
    p.places.writable.clear();
    for (const auto& s : *config.writable) p.places.writable.push_back(normalise(s));
  }
  p.places.protected_.insert(p.places.protected_.end(), config.protected_paths.begin(),
                             config.protected_paths.end());
  p.places.secrets.insert(p.places.secrets.end(), config.secrets.begin(), config.secrets.end());
  auto more = rules_from(config.rules);
  if (!more) return more.status();
  for (auto& r : *more) p.rules.push_back(std::move(r));
  for (const auto& name : config.disable_rules) {
    size_t before = p.rules.size();
    std::erase_if(p.rules, [&](const Rule& r) { return r.name == name; });
    if (p.rules.size() == before)
      return Status::error(
          fmt::format("[guard] disable_rules names '{}', which is not a rule", name));
  }
  return p;
}

}  // namespace mecha::guard
