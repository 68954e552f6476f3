#include "config/permission_sources.h"

#include <fmt/format.h>

#include "config/permission_rule.h"
#include "config/toml_reader.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

// Takes one source's rules and mode, leaving out what an untrusted source may not widen.
class SourceReader {
 public:
  SourceReader(const PermissionSource& source, PermissionSettings* into)
      : source_(source), into_(into) {}

  Status rule(RuleAction action, const std::string& text, int line) {
    auto parsed = parse_permission_rule(text);
    SettingOrigin origin{source_.file, line};
    if (!parsed) {
      return Status::error(fmt::format("{}: permissions.{}: {}", origin.where(),
                                       rule_action_name(action), parsed.message()));
    }
    if (action == RuleAction::kAllow && !source_.untrusted_why.empty()) {
      left_out_.push_back(fmt::format("allow rule {}", text));
      return ok_status();
    }
    into_->rules.push_back({action, text, std::move(origin)});
    return ok_status();
  }

  Status mode(const std::string& name, int line) {
    auto mode = parse_permission_mode(name);
    SettingOrigin origin{source_.file, line};
    if (!mode)
      return Status::error(
          fmt::format("{}: permissions.defaultMode: {}", origin.where(), mode.message()));
    if (*mode != PermissionMode::kPlan && !source_.untrusted_why.empty()) {
      left_out_.push_back(fmt::format("defaultMode \"{}\"", name));
      return ok_status();
    }
    into_->default_mode = *mode;
    into_->mode_origin = std::move(origin);
    return ok_status();
  }

  void note(std::string text) { into_->notes.push_back(std::move(text)); }

  void finish() {
    if (left_out_.empty()) return;
    note(fmt::format(
        "{} {}, so what it widens is left out: {}. A project's settings may only tighten "
        "permissions until you trust them; read it, and if you accept what it allows, run: "
        "mecha trust {}",
        source_.file, source_.untrusted_why, fmt::join(left_out_, ", "),
        shell_quoted(source_.file)));
  }

 private:
  const PermissionSource& source_;
  PermissionSettings* into_;
  std::vector<std::string> left_out_;
};

constexpr const char* kJsonKeys =
    "allow, ask, deny, defaultMode, additionalDirectories, disableBypassPermissionsMode";

}  // namespace

Status add_json_permissions(const ClaudeSettingsFile& file, PermissionSettings* into) {
  auto it = file.doc.find("permissions");
  if (it == file.doc.end()) return ok_status();
  const int at = line_of(file.text, "\"permissions\"");
  const SettingOrigin here{file.path, at};
  if (!it->is_object()) {
    return Status::error(fmt::format("{}: permissions must be an object, not {}", here.where(),
                                     json_type_name(*it)));
  }
  PermissionSource source{file.path, file.trusted ? "" : "is not trusted"};
  SourceReader reader(source, into);
  // The keys come in nlohmann's order (by name); the order of rules does not matter to a
  // decision (deny beats ask beats allow).
  for (const auto& [key, value] : it->items()) {
    const int key_line = line_of(file.text, fmt::format("\"{}\"", key), at);
    const SettingOrigin key_at{file.path, key_line};
    if (key == "allow" || key == "ask" || key == "deny") {
      RuleAction action = key == "allow" ? RuleAction::kAllow
                          : key == "ask" ? RuleAction::kAsk
                                         : RuleAction::kDeny;
      if (!value.is_array()) {
        return Status::error(fmt::format("{}: permissions.{} must be a list of rules, not {}",
                                         key_at.where(), key, json_type_name(value)));
      }
      int line = key_line;
      for (const Json& r : value) {
        if (!r.is_string()) {
          return Status::error(
              fmt::format("{}: permissions.{} holds {}, where a rule (a string) "
                          "belongs",
                          key_at.where(), key, json_type_name(r)));
        }
        const std::string text = r.get<std::string>();
        int found = line_of(file.text, dump_json(r), line);
        if (found > 0) line = found;
        MECHA_RETURN_IF_ERROR(reader.rule(action, text, found));
      }
    } else if (key == "defaultMode") {
      if (!value.is_string()) {
        return Status::error(fmt::format("{}: permissions.defaultMode must be a string, not {}",
                                         key_at.where(), json_type_name(value)));
      }
      MECHA_RETURN_IF_ERROR(reader.mode(value.get<std::string>(), key_line));
    } else if (key == "additionalDirectories" || key == "disableBypassPermissionsMode") {
      reader.note(fmt::format("{}: permissions.{} is not supported by mecha and is ignored",
                              key_at.where(), key));
    } else {
      return Status::error(fmt::format("{}: unknown key \"{}\" in permissions (keys: {})",
                                       key_at.where(), key, kJsonKeys));
    }
  }
  reader.finish();
  return ok_status();
}

Status add_toml_permissions(const toml::node& value, const PermissionSource& source,
                            PermissionSettings* into) {
  auto t = table_of(value, source.file, "[permissions]");
  if (!t) return t.status();
  TableReader r(**t, source.file, "[permissions]");
  SourceReader reader(source, into);
  for (const char* key : {"deny", "ask", "allow"}) {
    const toml::node* list = r.node(key);
    if (list == nullptr) continue;
    const toml::array* items = list->as_array();
    if (items == nullptr) return r.error_at(key, "must be a list of rules (strings)");
    RuleAction action = std::string_view(key) == "allow" ? RuleAction::kAllow
                        : std::string_view(key) == "ask" ? RuleAction::kAsk
                                                         : RuleAction::kDeny;
    for (const toml::node& item : *items) {
      auto text = item.value<std::string>();
      if (!text || !item.is_string()) return r.error_at(key, "must be a list of rules (strings)");
      MECHA_RETURN_IF_ERROR(reader.rule(action, *text, static_cast<int>(item.source().begin.line)));
    }
  }
  if (const toml::node* mode = r.node("defaultMode")) {
    auto name = mode->value<std::string>();
    if (!name || !mode->is_string()) return r.error_at("defaultMode", "must be a string");
    MECHA_RETURN_IF_ERROR(reader.mode(*name, static_cast<int>(mode->source().begin.line)));
  }
  MECHA_RETURN_IF_ERROR(r.finish());
  reader.finish();
  return ok_status();
}

}  // namespace mecha::config
