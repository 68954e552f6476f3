// `mecha permissions [-C DIR] [--config FILE]`: the permission mode, rules and hooks a run in
// the work tree gets, each with where it was written, and the notes on what was left out
// (config/permission_settings.h, agent/permissions.h, config/hook_settings.h).
#include <memory>

#include <fmt/format.h>

#include "agent/permissions.h"
#include "agent/run_pipeline.h"
#include "cli/command.h"
#include "cli/printable.h"
#include "cli/workspace.h"

namespace mecha::cli {
namespace {

struct PermissionsOptions {
  std::string config_file;
  std::string work_tree;
};

int permissions_main(const PermissionsOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return report_failure(ws.status());
  const config::PermissionSettings& settings = ws->config().permissions;
  const config::PermissionMode mode =
      settings.default_mode.value_or(config::PermissionMode::kDefault);
  // Built as a run builds it, so a rule the policy cannot read fails here too.
  auto policy = agent::PermissionPolicy::build(settings, mode, agent::home_directory());
  if (!policy) return report_failure(policy.status());
  std::string out = fmt::format(
      "mode: {} ({})\n", config::permission_mode_name(mode),
      settings.default_mode ? "from " + settings.mode_origin.where()
                            : std::string("the default; no settings file sets defaultMode"));
  if (policy->rules().empty()) {
    out += "rules: none\n";
  } else {
    out += "rules (deny beats ask beats allow):\n";
    size_t width = 0;
    for (const auto& r : policy->rules()) width = std::max(width, r.text.size());
    for (const auto& r : policy->rules()) {
      out += fmt::format("  {:<5}  {:<{}}  {}\n", config::rule_action_name(r.action), r.text, width,
                         r.origin.where());
    }
  }
  const config::HookSettings& hooks = ws->config().hooks;
  if (hooks.empty()) {
    out += "hooks: none\n";
  } else {
    out += "hooks (run in this order, outside the sandbox):\n";
    for (const auto& [event, groups] : hooks.events) {
      for (const auto& group : groups) {
        for (const auto& hook : group.hooks) {
          out += fmt::format("  {}{}  {}  (timeout {}s)  {}\n", config::hook_event_name(event),
                             group.matcher.empty() ? "" : fmt::format("[{}]", group.matcher),
                             hook.command, hook.timeout.count() / 1000.0, hook.origin.where());
        }
      }
    }
  }
  if (!settings.notes.empty() || !hooks.notes.empty()) {
    out += "notes:\n";
    for (const auto& n : settings.notes) out += fmt::format("  {}\n", n);
    for (const auto& n : hooks.notes) out += fmt::format("  {}\n", n);
  }
  write_printable(stdout, out);  // rules and hook commands come from settings files
  return kExitOk;
}

}  // namespace

void define_permissions_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<PermissionsOptions>();
  sub.add_option("--config", opt->config_file,
                 "Read only this mecha config file (Claude Code's settings files are still read)");
  sub.add_option("-C,--work-tree", opt->work_tree,
                 "The work tree whose settings count (default: here)");
  sub.callback([opt, chosen] { *chosen = [opt] { return permissions_main(*opt); }; });
}

}  // namespace mecha::cli
