#include "agent/hooks.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <utility>

#include "base/subprocess.h"

extern char** environ;

namespace mecha::agent {

using config::HookEvent;

namespace {

// Each stream of a hook's output kept, half head and half tail: a hook's stdout and stderr
// go to the model and the user, so a hook that prints without end costs no more than this.
constexpr size_t kHookOutputCap = 64 << 10;
// A hook's SIGTERM before its SIGKILL: hooks are short commands, not servers.
constexpr std::chrono::milliseconds kHookKillGrace{500};

bool uses_matcher(HookEvent event) {
  return event == HookEvent::kPreToolUse || event == HookEvent::kPostToolUse ||
         event == HookEvent::kSessionStart || event == HookEvent::kPreCompact;
}

bool is_tool_event(HookEvent event) {
  return event == HookEvent::kPreToolUse || event == HookEvent::kPostToolUse;
}

// The events a hook can hold up (Claude Code's "exit code 2 behaviour"): a tool call, a tool
// result, a prompt, stopping, and a compaction (that one is skipped). For the others exit 2
// only shows stderr to the user.
bool can_block(HookEvent event) {
  return event == HookEvent::kPreToolUse || event == HookEvent::kPostToolUse ||
         event == HookEvent::kUserPromptSubmit || event == HookEvent::kStop ||
         event == HookEvent::kSubagentStop || event == HookEvent::kPreCompact;
}

// The events whose plain stdout is context for the model rather than a note for the user.
bool stdout_is_context(HookEvent event) {
  return event == HookEvent::kUserPromptSubmit || event == HookEvent::kSessionStart;
}

std::string label_of(const config::HookCommand& hook) {
  return fmt::format("{}: {}", hook.origin.where(), hook.command);
}

std::string trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

Json stdin_json(const HookInput& in) {
  Json j = {
      {"session_id", in.session_id},
      {"transcript_path", in.transcript_path},
      {"cwd", in.cwd},
      {"permission_mode", config::permission_mode_name(in.permission_mode)},
      {"hook_event_name", config::hook_event_name(in.event)},
  };
  switch (in.event) {
    case HookEvent::kPreToolUse:
    case HookEvent::kPostToolUse:
      j["tool_name"] = in.tool_name;
      j["tool_input"] = in.tool_input;
      j["tool_use_id"] = in.tool_use_id;
      if (in.event == HookEvent::kPostToolUse) j["tool_response"] = in.tool_response;
      break;
    case HookEvent::kUserPromptSubmit:
      j["prompt"] = in.prompt;
      break;
    case HookEvent::kStop:
    case HookEvent::kSubagentStop:
      j["stop_hook_active"] = in.stop_hook_active;
      break;
    case HookEvent::kSessionStart:
      j["source"] = in.source;
      break;
    case HookEvent::kSessionEnd:
      j["reason"] = in.reason;
      break;
    case HookEvent::kPreCompact:
      j["trigger"] = in.source;
      j["custom_instructions"] = in.prompt;
      break;
    case HookEvent::kNotification:
      j["message"] = in.message;
      break;
  }
  return j;
}

// The caller's environment with the project directory set, under Claude Code's name and
// mecha's.
std::vector<std::string> hook_env(const std::string& project_dir) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (entry.starts_with("CLAUDE_PROJECT_DIR=") || entry.starts_with("MECHA_PROJECT_DIR=")) {
      continue;
    }
    env.emplace_back(entry);
  }
  env.push_back("CLAUDE_PROJECT_DIR=" + project_dir);
  env.push_back("MECHA_PROJECT_DIR=" + project_dir);
  return env;
}

// What one hook's JSON answer says, read strictly: a field of the wrong type or an unknown
// decision makes the whole answer a warning, never half of it taken.
struct JsonAnswer {
  bool keep_going = true;
  std::string stop_reason;
  std::string system_message;
  std::string decision;  // "", "block", "approve"
  std::string reason;
  std::string permission_decision;  // "", "allow", "deny", "ask"
  std::string permission_reason;
  std::optional<Json> updated_input;
  std::string additional_context;
};

Result<JsonAnswer> read_answer(const Json& j) {
  JsonAnswer a;
  auto string_at = [](const Json& obj, const char* key, std::string* out) -> Status {
    if (!obj.contains(key) || obj.at(key).is_null()) return ok_status();
    if (!obj.at(key).is_string()) {
      return Status::error(
          fmt::format("\"{}\" is {}, not a string", key, json_type_name(obj.at(key))));
    }
    *out = obj.at(key).get<std::string>();
    return ok_status();
  };
  if (j.contains("continue") && !j.at("continue").is_null()) {
    if (!j.at("continue").is_boolean()) {
      return Status::error(
          fmt::format("\"continue\" is {}, not a boolean", json_type_name(j.at("continue"))));
    }
    a.keep_going = j.at("continue").get<bool>();
  }
  MECHA_RETURN_IF_ERROR(string_at(j, "stopReason", &a.stop_reason));
  MECHA_RETURN_IF_ERROR(string_at(j, "systemMessage", &a.system_message));
  MECHA_RETURN_IF_ERROR(string_at(j, "decision", &a.decision));
  MECHA_RETURN_IF_ERROR(string_at(j, "reason", &a.reason));
  if (!a.decision.empty() && a.decision != "block" && a.decision != "approve") {
    return Status::error(
        fmt::format("\"decision\" is \"{}\", not \"block\" or \"approve\"", a.decision));
  }
  if (j.contains("hookSpecificOutput") && !j.at("hookSpecificOutput").is_null()) {
    const Json& h = j.at("hookSpecificOutput");
    if (!h.is_object()) {
      return Status::error(
          fmt::format("\"hookSpecificOutput\" is {}, not an object", json_type_name(h)));
    }
    MECHA_RETURN_IF_ERROR(string_at(h, "permissionDecision", &a.permission_decision));
    MECHA_RETURN_IF_ERROR(string_at(h, "permissionDecisionReason", &a.permission_reason));
    MECHA_RETURN_IF_ERROR(string_at(h, "additionalContext", &a.additional_context));
    const auto& d = a.permission_decision;
    if (!d.empty() && d != "allow" && d != "deny" && d != "ask") {
      return Status::error(
          fmt::format("\"permissionDecision\" is \"{}\", not \"allow\", \"deny\" or \"ask\"", d));
    }
    if (h.contains("updatedInput") && !h.at("updatedInput").is_null()) {
      if (!h.at("updatedInput").is_object()) {
        return Status::error(fmt::format("\"updatedInput\" is {}, not an object",
                                         json_type_name(h.at("updatedInput"))));
      }
      a.updated_input = h.at("updatedInput");
    }
  }
  return a;
}

void append_line(std::string* to, const std::string& text) {
  if (text.empty()) return;
  if (!to->empty()) *to += "\n";
  *to += text;
}

// Takes a decision unless a stronger one is in already: block > ask > allow.
void decide(HookResult* r, HookDecision d, std::string reason, const std::string& label) {
  auto rank = [](HookDecision x) {
    switch (x) {
      case HookDecision::kNone:
        return 0;
      case HookDecision::kAllow:
        return 1;
      case HookDecision::kAsk:
        return 2;
      case HookDecision::kBlock:
        return 3;
    }
    return 0;
  };
  if (rank(d) <= rank(r->decision)) return;
  r->decision = d;
  r->reason = std::move(reason);
  r->hook = label;
}

}  // namespace

struct HookRunner::Compiled {
  struct Group {
    const config::HookGroup* group;
    std::unique_ptr<RE2> matcher;  // null: matches everything
  };
  config::HookSettings settings;
  std::map<HookEvent, std::vector<Group>> groups;

  bool matches(const Group& g, HookEvent event, std::string_view subject) const {
    if (!uses_matcher(event) || g.matcher == nullptr) return true;
    return RE2::FullMatch(subject, *g.matcher);
  }
};

HookRunner::HookRunner(config::HookSettings settings) {
  auto c = std::make_shared<Compiled>();
  c->settings = std::move(settings);
  for (const auto& [event, groups] : c->settings.events) {
    auto& out = c->groups[event];
    for (const auto& g : groups) {
      Compiled::Group compiled{&g, nullptr};
      if (!g.matcher.empty() && g.matcher != "*") {
        RE2::Options options;
        options.set_log_errors(false);
        compiled.matcher = std::make_unique<RE2>(g.matcher, options);
        // The settings reader refused matchers that do not compile; one built by hand that
        // does not compile matches nothing rather than everything.
      }
      out.push_back(std::move(compiled));
    }
  }
  compiled_ = std::move(c);
}

const config::HookSettings& HookRunner::settings() const { return compiled_->settings; }

bool HookRunner::wants(HookEvent event, std::string_view matcher_subject) const {
  auto it = compiled_->groups.find(event);
  if (it == compiled_->groups.end()) return false;
  for (const auto& g : it->second) {
    if (!g.group->hooks.empty() && compiled_->matches(g, event, matcher_subject)) return true;
  }
  return false;
}

HookResult HookRunner::run(const HookInput& input, const CancelToken* cancel) const {
  HookResult result;
  auto it = compiled_->groups.find(input.event);
  if (it == compiled_->groups.end()) return result;
  const HookEvent event = input.event;
  const std::string_view subject = is_tool_event(event)  ? std::string_view(input.tool_name)
                                   : uses_matcher(event) ? std::string_view(input.source)
                                                         : std::string_view();
  const std::string event_name(config::hook_event_name(event));
  Json payload = stdin_json(input);
  std::optional<std::vector<std::string>> env;
  // The same command listed twice (in the user's file and the project's) runs once, as in
  // Claude Code.
  std::set<std::string> ran;
  for (const auto& g : it->second) {
    if (!compiled_->matches(g, event, subject)) continue;
    for (const config::HookCommand& hook : g.group->hooks) {
      if (!ran.insert(hook.command).second) continue;
      const std::string label = label_of(hook);
      if (cancel != nullptr && cancel->cancelled()) {
        result.notes.push_back(
            fmt::format("{} hook {} not run: the run was cancelled", event_name, label));
        return result;
      }
      if (!env) {
        std::error_code ec;
        env = hook_env(input.cwd.empty() ? std::filesystem::current_path(ec).string() : input.cwd);
      }
      SubprocessOptions o;
      o.argv = {"/bin/sh", "-c", hook.command};
      o.cwd = input.cwd;
      o.env = *env;
      o.stdin_data = dump_json(payload);
      o.timeout = hook.timeout;
      o.cancel = cancel;
      o.output_cap = kHookOutputCap;
      o.kill_grace = kHookKillGrace;
      auto ran_hook = run_subprocess(o);
      ++result.hooks_run;
      if (!ran_hook) {
        result.notes.push_back(
            fmt::format("{} hook {} could not start: {}", event_name, label, ran_hook.message()));
        continue;
      }
      const SubprocessResult& r = *ran_hook;
      const std::string err = trimmed(r.err.text());
      if (r.cancelled) {
        result.notes.push_back(
            fmt::format("{} hook {} was stopped: the run was cancelled", event_name, label));
        return result;
      }
      if (r.timed_out) {
        result.notes.push_back(fmt::format(
            "{} hook {} timed out after {} s and was killed with its processes; the run goes on",
            event_name, label, static_cast<double>(hook.timeout.count()) / 1000));
        continue;
      }
      if (r.exit_code == 2) {
        std::string reason = err.empty() ? fmt::format("blocked by hook {}", label) : err;
        if (can_block(event)) {
          decide(&result, HookDecision::kBlock, std::move(reason), label);
          return result;
        }
        result.notes.push_back(fmt::format("{} hook {} (exit 2): {}", event_name, label, reason));
        continue;
      }
      if (r.exit_code != 0) {
        std::string how = r.exit_code < 0 ? fmt::format("was ended by signal {}", r.signal)
                                          : fmt::format("failed with exit code {}", r.exit_code);
        result.notes.push_back(err.empty()
                                   ? fmt::format("{} hook {} {}", event_name, label, how)
                                   : fmt::format("{} hook {} {}: {}", event_name, label, how, err));
        continue;
      }
      const std::string out = trimmed(r.out.text());
      std::optional<Json> answer;
      if (out.starts_with("{")) {
        auto parsed = parse_json(out, "hook output");
        if (parsed && parsed->is_object()) answer = std::move(*parsed);
      }
      if (!answer) {
        if (out.empty()) continue;
        if (stdout_is_context(event)) {
          append_line(&result.additional_context, out);
        } else {
          result.notes.push_back(fmt::format("{} hook {}: {}", event_name, label, out));
        }
        continue;
      }
      auto a = read_answer(*answer);
      if (!a) {
        result.notes.push_back(
            fmt::format("{} hook {} answered JSON that mecha cannot use ({}); "
                        "its answer is ignored",
                        event_name, label, a.message()));
        continue;
      }
      if (!a->system_message.empty()) {
        result.notes.push_back(fmt::format("{} hook {}: {}", event_name, label, a->system_message));
      }
      append_line(&result.additional_context, a->additional_context);
      if (a->updated_input) {
        result.updated_input = a->updated_input;
        // The hooks after this one see the call as it will be made.
        if (is_tool_event(event)) payload["tool_input"] = *a->updated_input;
      }
      if (!a->keep_going) {
        result.stop = true;
        result.stop_reason = a->stop_reason;
        if (result.hook.empty()) result.hook = label;
        return result;
      }
      HookDecision d = HookDecision::kNone;
      std::string reason;
      if (a->permission_decision == "deny" || a->decision == "block") {
        d = HookDecision::kBlock;
        reason = !a->permission_reason.empty() ? a->permission_reason : a->reason;
        if (reason.empty()) reason = fmt::format("blocked by hook {}", label);
      } else if (a->permission_decision == "ask") {
        d = HookDecision::kAsk;
        reason = a->permission_reason;
      } else if (a->permission_decision == "allow" || a->decision == "approve") {
        d = HookDecision::kAllow;
        reason = !a->permission_reason.empty() ? a->permission_reason : a->reason;
      }
      if (d == HookDecision::kBlock && !can_block(event)) {
        result.notes.push_back(fmt::format("{} hook {} asked to block, which {} cannot be: {}",
                                           event_name, label, event_name, reason));
        continue;
      }
      decide(&result, d, std::move(reason), label);
      if (result.decision == HookDecision::kBlock) return result;
    }
  }
  return result;
}

}  // namespace mecha::agent
