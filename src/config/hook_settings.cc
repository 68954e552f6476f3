#include "config/hook_settings.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cmath>
#include <utility>

#include "config/claude_settings.h"
#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {
namespace {

constexpr std::pair<HookEvent, std::string_view> kEvents[] = {
    {HookEvent::kPreToolUse, "PreToolUse"},
    {HookEvent::kPostToolUse, "PostToolUse"},
    {HookEvent::kUserPromptSubmit, "UserPromptSubmit"},
    {HookEvent::kStop, "Stop"},
    {HookEvent::kSubagentStop, "SubagentStop"},
    {HookEvent::kSessionStart, "SessionStart"},
    {HookEvent::kSessionEnd, "SessionEnd"},
    {HookEvent::kPreCompact, "PreCompact"},
    {HookEvent::kNotification, "Notification"},
};

// A hook that runs longer than a day is a mistake, and a bound keeps the conversion to
// milliseconds from overflowing.
constexpr double kMaxTimeoutSeconds = 24 * 60 * 60;

std::string located(const std::string& file, int line) {
  return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

// "" and "*" match everything; anything else is a regular expression matched against the
// whole subject, so it must compile.
Status check_matcher(const std::string& matcher, const std::string& where) {
  if (matcher.empty() || matcher == "*") return ok_status();
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(matcher, options);
  if (!re.ok()) {
    return Status::error(fmt::format("{}: matcher \"{}\" is not a valid regular expression: {}",
                                     where, matcher, re.error()));
  }
  return ok_status();
}

Result<std::chrono::milliseconds> timeout_of(double seconds, const std::string& where) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    return Status::error(
        fmt::format("{}: timeout must be a positive number of seconds up to {}, not {}", where,
                    kMaxTimeoutSeconds, seconds));
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

std::string event_list() {
  std::string names;
  for (const auto& [event, name] : kEvents)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  return names;
}

// Reads one {"type": "command", "command": ..., "timeout": ...} of a JSON group. The file is
// Claude Code's too, and Claude Code grows: a key mecha does not know is ignored and a hook of
// another type (a "prompt" hook) is left out, each with a note; nullopt for one left out.
Result<std::optional<HookCommand>> json_command(const Json& j, const std::string& path,
                                                const std::string& file, std::string_view text,
                                                int* cursor, std::vector<std::string>* notes) {
  auto at = [&](std::string_view needle) {
    int line = line_of(text, needle, *cursor);
    return located(file, line > 0 ? line : *cursor);
  };
  if (!j.is_object()) {
    return Status::error(
        fmt::format("{}: {} must be an object, not {}", at("{"), path, json_type_name(j)));
  }
  HookCommand hook;
  const Json* type = j.contains("type") ? &j.at("type") : nullptr;
  if (type == nullptr) {
    return Status::error(fmt::format("{}: {} needs \"type\": \"command\"", at("{"), path));
  }
  if (!type->is_string()) {
    return Status::error(fmt::format("{}: {}.type must be a string, not {}", at("\"type\""), path,
                                     json_type_name(*type)));
  }
  if (type->get<std::string>() != "command") {
    notes->push_back(
        fmt::format("{}: {} has type {}; mecha runs only hooks of type \"command\", "
                    "so it is left out",
                    at("\"type\""), path, dump_json(*type)));
    return std::optional<HookCommand>();
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "type" && key != "command" && key != "timeout") {
      notes->push_back(fmt::format("{}: {}: key \"{}\" is not one mecha reads; ignored",
                                   at(fmt::format("\"{}\"", key)), path, key));
    }
  }
  const Json* command = j.contains("command") ? &j.at("command") : nullptr;
  if (command == nullptr || !command->is_string() || command->get<std::string>().empty()) {
    return Status::error(fmt::format("{}: {} needs \"command\", a string that is not empty",
                                     at("\"command\""), path));
  }
  hook.command = command->get<std::string>();
  int line = line_of(text, dump_json(*command), *cursor);
  if (line > 0) *cursor = line;
  hook.origin = SettingOrigin{file, line};
  if (j.contains("timeout")) {
    const Json& t = j.at("timeout");
    std::string where = fmt::format("{}: {}", at("\"timeout\""), path);
    if (!t.is_number()) {
      return Status::error(
          fmt::format("{}: timeout must be a number of seconds, not {}", where, json_type_name(t)));
    }
    auto timeout = timeout_of(t.get<double>(), where);
    if (!timeout) return timeout.status();
    hook.timeout = *timeout;
  }
  return std::optional<HookCommand>(std::move(hook));
}

}  // namespace

std::string_view hook_event_name(HookEvent event) {
  for (const auto& [e, name] : kEvents) {
    if (e == event) return name;
  }
  return "?";
}

Result<HookEvent> parse_hook_event(std::string_view name) {
  for (const auto& [event, n] : kEvents) {
    if (n == name) return event;
  }
  return Status::error(fmt::format("unknown hook event \"{}\" (events: {})", name, event_list()));
}

Status add_json_hooks(const Json& hooks, const std::string& file, std::string_view text,
                      HookSettings* into) {
  const int hooks_line = std::max(1, line_of(text, "\"hooks\"", 1));
  if (!hooks.is_object()) {
    return Status::error(fmt::format("{}: \"hooks\" must be an object of events, not {}",
                                     located(file, hooks_line), json_type_name(hooks)));
  }
  // Parsed first, all of them, so that one bad entry leaves *into as it was.
  std::map<HookEvent, std::vector<HookGroup>> added;
  for (const auto& [name, groups] : hooks.items()) {
    const int event_line = line_of(text, fmt::format("\"{}\"", name), hooks_line);
    const std::string event_at = located(file, event_line > 0 ? event_line : hooks_line);
    auto event = parse_hook_event(name);
    if (!event) {
      into->notes.push_back(
          fmt::format("{}: {}; its hooks are left out", event_at, event.status().message()));
      continue;
    }
    if (!groups.is_array()) {
      return Status::error(fmt::format("{}: hooks.{} must be an array of matcher groups, not {}",
                                       event_at, name, json_type_name(groups)));
    }
    int cursor = std::max(event_line, hooks_line);
    for (size_t g = 0; g < groups.size(); ++g) {
      const Json& group = groups[g];
      const std::string path = fmt::format("hooks.{}[{}]", name, g);
      if (!group.is_object()) {
        return Status::error(fmt::format("{}: {} must be an object with \"hooks\", not {}",
                                         located(file, cursor), path, json_type_name(group)));
      }
      HookGroup out;
      for (const auto& [key, value] : group.items()) {
        if (key != "matcher" && key != "hooks") {
          int line = line_of(text, fmt::format("\"{}\"", key), cursor);
          return Status::error(fmt::format("{}: unknown key \"{}\" in {} (keys: matcher, hooks)",
                                           located(file, line > 0 ? line : cursor), key, path));
        }
      }
      if (group.contains("matcher") && !group.at("matcher").is_null()) {
        const Json& m = group.at("matcher");
        int line = line_of(text, "\"matcher\"", cursor);
        const std::string at = located(file, line > 0 ? line : cursor);
        if (!m.is_string()) {
          return Status::error(
              fmt::format("{}: {}.matcher must be a string, not {}", at, path, json_type_name(m)));
        }
        out.matcher = m.get<std::string>();
        MECHA_RETURN_IF_ERROR(check_matcher(out.matcher, fmt::format("{}: {}", at, path)));
      }
      if (!group.contains("hooks") || !group.at("hooks").is_array()) {
        int line = line_of(text, group.contains("matcher") ? "\"matcher\"" : "{", cursor);
        return Status::error(fmt::format("{}: {} needs \"hooks\", an array of commands",
                                         located(file, line > 0 ? line : cursor), path));
      }
      const Json& commands = group.at("hooks");
      for (size_t h = 0; h < commands.size(); ++h) {
        auto hook = json_command(commands[h], fmt::format("{}.hooks[{}]", path, h), file, text,
                                 &cursor, &into->notes);
        if (!hook) return hook.status();
        if (*hook) out.hooks.push_back(std::move(**hook));
      }
      added[*event].push_back(std::move(out));
    }
  }
  for (auto& [event, groups] : added) {
    auto& to = into->events[event];
    for (auto& g : groups) to.push_back(std::move(g));
  }
  return ok_status();
}

Status add_toml_hooks(const toml::node& hooks, const std::string& file, HookSettings* into) {
  auto t = table_of(hooks, file, "[hooks]");
  if (!t) return t.status();
  std::map<HookEvent, std::vector<HookGroup>> added;
  for (const auto& [key, node] : **t) {
    const std::string name(key.str());
    auto event = parse_hook_event(name);
    if (!event) return event.status().prefixed(where(node, file));
    const std::string section = fmt::format("[[hooks.{}]]", name);
    const toml::array* groups = node.as_array();
    if (groups == nullptr || (!groups->empty() && !groups->is_array_of_tables())) {
      return Status::error(fmt::format(
          "{}: hooks.{} must be an array of tables: {} with matcher and [[hooks.{}.hooks]]",
          where(node, file), name, section, name));
    }
    for (const toml::node& group_node : *groups) {
      TableReader r(*group_node.as_table(), file, section);
      HookGroup group;
      MECHA_RETURN_IF_ERROR(r.get("matcher", &group.matcher));
      if (!group.matcher.empty()) {
        MECHA_RETURN_IF_ERROR(check_matcher(
            group.matcher,
            fmt::format("{}: key 'matcher' in {}",
                        where(*group_node.as_table()->get("matcher"), file), section)));
      }
      MECHA_RETURN_IF_ERROR(r.require("hooks"));
      const toml::node* commands_node = r.node("hooks");
      const toml::array* commands = commands_node->as_array();
      const std::string hook_section = fmt::format("[[hooks.{}.hooks]]", name);
      if (commands == nullptr || (!commands->empty() && !commands->is_array_of_tables())) {
        return r.error_at("hooks", fmt::format("must be an array of tables: {} with type = "
                                               "\"command\" and command",
                                               hook_section));
      }
      for (const toml::node& command_node : *commands) {
        TableReader c(*command_node.as_table(), file, hook_section);
        HookCommand hook;
        std::string type;
        MECHA_RETURN_IF_ERROR(c.require("type"));
        MECHA_RETURN_IF_ERROR(c.get_one_of("type", &type, {"command"}));
        MECHA_RETURN_IF_ERROR(c.require("command"));
        MECHA_RETURN_IF_ERROR(c.get("command", &hook.command));
        if (hook.command.empty()) return c.error_at("command", "must not be empty");
        std::optional<double> seconds;
        MECHA_RETURN_IF_ERROR(c.get("timeout", &seconds));
        if (seconds) {
          auto timeout = timeout_of(
              *seconds,
              fmt::format("{}: key 'timeout' in {}",
                          where(*command_node.as_table()->get("timeout"), file), hook_section));
          if (!timeout) return timeout.status();
          hook.timeout = *timeout;
        }
        MECHA_RETURN_IF_ERROR(c.finish());
        const toml::node& at = *command_node.as_table()->get("command");
        const auto& source = at.source();
        hook.origin = SettingOrigin{source.path ? std::string(*source.path) : file,
                                    static_cast<int>(source.begin.line)};
        group.hooks.push_back(std::move(hook));
      }
      MECHA_RETURN_IF_ERROR(r.finish());
      added[*event].push_back(std::move(group));
    }
  }
  for (auto& [event, groups] : added) {
    auto& to = into->events[event];
    for (auto& g : groups) to.push_back(std::move(g));
  }
  return ok_status();
}

Status read_hooks(const toml::node& value, const Reading& reading, Config* config) {
  return add_toml_hooks(value, reading.file, &config->hooks);
}

}  // namespace mecha::config
