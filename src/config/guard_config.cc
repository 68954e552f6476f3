#include "config/guard_config.h"

#include <fmt/format.h>

#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {
namespace {

constexpr const char* kRuleSection = "[[guard.rules]]";

Result<GuardRule> read_rule(const toml::node& node, const std::string& file) {
  auto t = table_of(node, file, kRuleSection);
  if (!t) return t.status();
  TableReader r(**t, file, kRuleSection);
  GuardRule rule;
  rule.origin = where(**t, file);
  MECHA_RETURN_IF_ERROR(r.get("name", &rule.name));
  MECHA_RETURN_IF_ERROR(r.get("reason", &rule.reason));
  MECHA_RETURN_IF_ERROR(r.get("command", &rule.command));
  MECHA_RETURN_IF_ERROR(r.get("flags", &rule.flags));
  MECHA_RETURN_IF_ERROR(r.get("args", &rule.args));
  MECHA_RETURN_IF_ERROR(r.get("unless_args", &rule.unless_args));
  MECHA_RETURN_IF_ERROR(r.get("last_arg", &rule.last_arg));
  MECHA_RETURN_IF_ERROR(r.get("fed_by", &rule.fed_by));
  std::string paths = "any";
  MECHA_RETURN_IF_ERROR(r.get_one_of("paths", &paths, {"outside", "tree-or-outside"}));
  rule.paths = paths == "outside"           ? GuardRule::Paths::kOutside
               : paths == "tree-or-outside" ? GuardRule::Paths::kTreeOrOutside
                                            : GuardRule::Paths::kAny;
  MECHA_RETURN_IF_ERROR(r.get("match", &rule.match));
  MECHA_RETURN_IF_ERROR(r.get("not_match", &rule.not_match));
  MECHA_RETURN_IF_ERROR(r.finish());
  for (const char* key : {"name", "command", "reason"}) MECHA_RETURN_IF_ERROR(r.require(key));
  if (rule.match.empty())
    return r.error(fmt::format("(rule '{}') needs at least one example in 'match'", rule.name));
  return rule;
}

}  // namespace

Status read_guard(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[guard]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[guard]");
  GuardConfig& g = config->guard;
  MECHA_RETURN_IF_ERROR(r.get("writable", &g.writable));
  MECHA_RETURN_IF_ERROR(r.get("protected", &g.protected_paths));
  MECHA_RETURN_IF_ERROR(r.get("secrets", &g.secrets));
  MECHA_RETURN_IF_ERROR(r.get("disable_rules", &g.disable_rules));
  if (const toml::node* rules = r.node("rules")) {
    const toml::array* a = rules->as_array();
    if (a == nullptr)
      return r.error_at("rules", "must be an array of tables (write each one as [[guard.rules]])");
    g.rules.clear();
    for (const auto& n : *a) {
      auto rule = read_rule(n, reading.file);
      if (!rule) return rule.status();
      g.rules.push_back(std::move(*rule));
    }
  }
  return r.finish();
}

}  // namespace mecha::config
