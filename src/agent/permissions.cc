#include "agent/permissions.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>

#include "agent/bash_rule_match.h"
#include "agent/deny_masks.h"
#include "agent/permission_paths.h"
#include "agent/permission_targets.h"
#include "agent/subagent.h"
#include "base/text.h"
#include "config/permission_rule.h"
#include "guard/command_finder.h"
#include "guard/path_model.h"
#include "tools/web_client.h"

namespace mecha::agent {
namespace {

using config::PermissionMode;
using config::RuleAction;
using config::RuleKind;

constexpr std::string_view kReadTools[] = {"Read", "Glob", "Grep"};
constexpr std::string_view kEditTools[] = {"Edit", "Write", "MultiEdit", "NotebookEdit"};

template <size_t N>
bool one_of(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool is_edit_tool(std::string_view name) { return one_of(kEditTools, name); }

// Whether a rule written for `rule_tool` speaks of calls of `tool`: Read rules cover the
// tools that read files, Edit rules those that write them.
bool covers(std::string_view rule_tool, std::string_view tool) {
  if (rule_tool == tool) return true;
  if (rule_tool == "Read") return one_of(kReadTools, tool);
  if (rule_tool == "Edit") return one_of(kEditTools, tool);
  return false;
}

struct CompiledRule {
  config::PermissionRuleText text;
  config::PermissionRule rule;
  std::optional<PathPattern> path;
  std::optional<BashPattern> bash;
  std::string shown;  // "deny rule Read(./x) (/t/.claude/settings.json:4)"
};

std::string string_field(const Json& input, const char* key) {
  auto it = input.find(key);
  return it != input.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string plain_host(std::string_view raw) {
  std::string host = ascii_lower(raw);
  while (host.ends_with('.')) host.pop_back();
  return host;
}

// The host of an http(s) URL read by hand, lowercase, without user, port or trailing dot;
// "" when the URL cannot be read.
std::string host_by_hand(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  std::string_view rest = std::string_view(url).substr(scheme + 3);
  // A backslash ends the authority too, as browsers and some clients read it.
  rest = rest.substr(0, rest.find_first_of("/\\?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (rest.starts_with('[')) {
    rest = rest.substr(0, rest.find(']') + 1);
  } else {
    rest = rest.substr(0, rest.find(':'));
  }
  return plain_host(rest);
}

// The hosts a fetch of `url` may be taken to reach: the one libcurl reads (WebFetch's
// reading, so numeric spellings are the address they stand for) and the one read by hand,
// when they differ ("https://evil.com\\@example.com/" is example.com to libcurl). A rule
// must hold for each: a deny or ask rule fires on either, an allow rule needs both. "" for
// a reading that fails.
std::vector<std::string> hosts_of(const std::string& url) {
  std::vector<std::string> hosts{host_by_hand(url)};
  if (auto parsed = tools::parse_web_url(url); parsed.ok()) {
    std::string host = plain_host(parsed->host);
    if (host != hosts.front()) hosts.push_back(host);
  }
  return hosts;
}

bool host_matches(const std::string& rule, const std::string& host) {
  if (rule.starts_with("*.")) {
    std::string_view parent = std::string_view(rule).substr(1);  // ".example.com"
    return host.size() > parent.size() && host.ends_with(parent);
  }
  return host == rule;
}

// Quotes a word for a Bash rule when it holds what the rule syntax reads specially.
std::string rule_word(const std::string& w) {
  if (!w.empty() && w.find_first_of(" \t'\"\\*") == std::string::npos) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string escape_path(const std::string& p) {
  std::string out;
  for (char c : p) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

struct PermissionPolicy::Impl {
  std::vector<config::PermissionRuleText> texts;
  std::vector<CompiledRule> rules;
  PermissionMode mode = PermissionMode::kDefault;
  std::filesystem::path home;
  bool shell_paths = false;  // some Read, Edit or Write deny or ask rule names a path
  void note_shell_paths() {
    shell_paths = std::any_of(rules.begin(), rules.end(), [](const CompiledRule& r) {
      return r.text.action != RuleAction::kAllow && r.rule.kind == RuleKind::kPath &&
             (r.rule.tool == "Read" || r.rule.tool == "Edit" || r.rule.tool == "Write");
    });
  }
};

namespace {

// One call, read once for every rule.
struct Call {
  const tools::Tool& tool;
  std::string name;
  const Json& input;
  const std::filesystem::path& tree;
  // A definition's own tool (named after it, with input {task}): a delegation as much as
  // Task with that subagent_type, so Task rules hold it too.
  bool subagent = false;
  std::optional<Target> file;  // Read, Write, Edit, Glob, Grep
  std::optional<ShellLine> shell;
  std::string tree_text;
  PathPattern::Parts tree_parts;
};

Call read_call(const tools::Tool& tool, const Json& input, const std::filesystem::path& tree,
               const std::filesystem::path& home, bool shell_paths) {
  Call call{tool,
            tool.name(),
            input,
            tree,
            dynamic_cast<const SubagentTool*>(&tool) != nullptr,
            std::nullopt,
            std::nullopt,
            tree.string(),
            {}};
  if (call.name == "Bash") {
    call.shell = read_shell_line(string_field(input, "command"), tree, home, shell_paths);
  } else if (call.name == "Glob" || call.name == "Grep") {
    std::string p = string_field(input, "path");
    call.file = target_of(p.empty() ? "." : p, tree.string());
  } else if (one_of(kReadTools, call.name) || is_edit_tool(call.name)) {
    std::string p = string_field(input, "file_path");
    if (p.empty()) p = string_field(input, "notebook_path");
    if (!p.empty()) call.file = target_of(p, tree.string());
  }
  return call;
}

// The call's paths split into components, once it is built and no longer moves.
void split_paths(Call& call) {
  call.tree_parts = path_components(call.tree_text);
  if (call.file) call.file->split();
  if (call.shell) {
    for (auto& u : call.shell->reads) u.path.split();
    for (auto& u : call.shell->writes) u.path.split();
  }
}

bool path_catches(const PathPattern& p, const Target& t, bool under,
                  const PathPattern::Parts& tree) {
  if (under) {
    return p.may_match_under(t.lexical_parts, tree) ||
           (t.canonical != t.lexical && p.may_match_under(t.canonical_parts, tree));
  }
  return p.matches(t.lexical_parts, tree) ||
         (t.canonical != t.lexical && p.matches(t.canonical_parts, tree));
}

// Whether a deny or ask rule fires on the call: on whatever the call may do.
bool catches(const CompiledRule& r, const Call& call) {
  const PathPattern::Parts& tree = call.tree_parts;
  if (call.shell) {
    const ShellLine& line = *call.shell;
    if (r.rule.kind == RuleKind::kPath &&
        (r.rule.tool == "Read" || r.rule.tool == "Edit" || r.rule.tool == "Write")) {
      if (line.unreadable) return true;  // it may read or write anything
      const auto& uses = r.rule.tool == "Read" ? line.reads : line.writes;
      return std::any_of(uses.begin(), uses.end(), [&](const ShellLine::Use& u) {
        return path_catches(*r.path, u.path, u.under, tree);
      });
    }
    if (r.rule.tool != "Bash") return false;
    if (r.rule.kind == RuleKind::kTool) return true;
    if (line.unreadable || line.unseen_script) return true;
    return std::any_of(line.commands.begin(), line.commands.end(),
                       [&](const CommandShape& c) { return r.bash->catches(c); });
  }
  switch (r.rule.kind) {
    case RuleKind::kTool:
    case RuleKind::kOther:
      return covers(r.rule.tool, call.name) || (r.rule.tool == "Task" && call.subagent);
    case RuleKind::kBash:
      return false;
    case RuleKind::kPath:
      if (!covers(r.rule.tool, call.name) || !call.file) return false;
      // Grep reads every file under its folder; Glob lists names only.
      return path_catches(*r.path, *call.file, call.name == "Grep", tree);
    case RuleKind::kDomain: {
      if (call.name != "WebFetch") return false;
      for (const std::string& host : hosts_of(string_field(call.input, "url"))) {
        if (host.empty() || host_matches(r.rule.specifier, host)) return true;
      }
      return false;
    }
    case RuleKind::kAgent:
      return call.subagent ? call.name == r.rule.specifier
                           : call.name == "Task" &&
                                 string_field(call.input, "subagent_type") == r.rule.specifier;
    case RuleKind::kMcp:
      return r.rule.specifier.empty() ? call.name.starts_with(r.rule.tool + "__")
                                      : call.name == r.rule.tool + "__" + r.rule.specifier;
  }
  return false;
}

// Whether an allow rule lets the call (not a shell line) run: only what it surely covers.
bool permits(const CompiledRule& r, const Call& call) {
  switch (r.rule.kind) {
    case RuleKind::kTool:
      return covers(r.rule.tool, call.name);
    case RuleKind::kPath:
      return covers(r.rule.tool, call.name) && call.file &&
             r.path->matches(call.file->canonical_parts, call.tree_parts);
    case RuleKind::kDomain: {
      if (call.name != "WebFetch") return false;
      for (const std::string& host : hosts_of(string_field(call.input, "url"))) {
        if (host.empty() || !host_matches(r.rule.specifier, host)) return false;
      }
      return true;
    }
    case RuleKind::kAgent:
    case RuleKind::kMcp:
      return catches(r, call);
    case RuleKind::kBash:
    case RuleKind::kOther:
      return false;
  }
  return false;
}

std::string shown(const config::PermissionRuleText& r) {
  std::string where = r.origin.where();
  return where.empty()
             ? fmt::format("{} rule {}", config::rule_action_name(r.action), r.text)
             : fmt::format("{} rule {} ({})", config::rule_action_name(r.action), r.text, where);
}

Result<CompiledRule> compile(const config::PermissionRuleText& text,
                             const std::filesystem::path& home) {
  auto parsed = config::parse_permission_rule(text.text);
  if (!parsed) {
    return Status::error(fmt::format("{}: permissions.{}: {}", text.origin.where(),
                                     config::rule_action_name(text.action), parsed.message()));
  }
  CompiledRule r{text, std::move(*parsed), std::nullopt, std::nullopt, shown(text)};
  if (r.rule.kind == RuleKind::kPath) {
    auto p = PathPattern::parse(r.rule.specifier, home);
    if (!p) {
      return Status::error(fmt::format("{}: permissions.{}: rule \"{}\": {}", text.origin.where(),
                                       config::rule_action_name(text.action), text.text,
                                       p.message()));
    }
    r.path = std::move(*p);
  }
  if (r.rule.kind == RuleKind::kBash) r.bash.emplace(r.rule);
  return r;
}

}  // namespace

Result<PermissionPolicy> PermissionPolicy::build(const config::PermissionSettings& settings,
                                                 config::PermissionMode mode,
                                                 const std::filesystem::path& home) {
  auto impl = std::make_shared<Impl>();
  impl->mode = mode;
  impl->home = home;
  for (const auto& t : settings.rules) {
    auto r = compile(t, home);
    if (!r) return r.status();
    impl->rules.push_back(std::move(*r));
    impl->texts.push_back(t);
  }
  impl->note_shell_paths();
  return PermissionPolicy(std::move(impl));
}

PermissionDecision PermissionPolicy::decide(const tools::Tool& tool, const Json& input,
                                            const std::filesystem::path& work_tree) const {
  const Impl& p = *impl_;
  Call call = read_call(tool, input, work_tree, p.home, p.shell_paths);
  split_paths(call);
  auto by_rule = [&](Verdict v, const CompiledRule& r) {
    std::string source = r.shown;
    if (call.shell && call.shell->unreadable) {
      source += fmt::format(
          ": the guard cannot read this line ({}), so it may do what the rule "
          "names",
          *call.shell->unreadable);
    }
    return PermissionDecision{v, std::move(source), r.text.text};
  };
  for (const auto& r : p.rules) {
    if (r.text.action == RuleAction::kDeny && catches(r, call)) return by_rule(Verdict::kDeny, r);
  }
  const std::string mode_name(config::permission_mode_name(p.mode));
  if (p.mode == PermissionMode::kPlan && !tool.read_only()) {
    return {Verdict::kDeny,
            fmt::format("mode plan: {} is not read-only, and plan mode runs read-only tools only",
                        call.name),
            ""};
  }
  for (const auto& r : p.rules) {
    if (r.text.action == RuleAction::kAsk && catches(r, call)) return by_rule(Verdict::kAsk, r);
  }
  if (call.shell) {
    // Every command of the line needs an allow rule; a line not read, or one that runs a
    // script nobody could see, is never allowed by rules, nor one that redirects into a
    // file unless a rule allows every line.
    const ShellLine& line = *call.shell;
    if (!line.unreadable && !line.unseen_script) {
      for (const auto& r : p.rules) {
        if (r.text.action == RuleAction::kAllow && r.rule.tool == "Bash" &&
            r.rule.kind == RuleKind::kTool) {
          return {Verdict::kAllow, r.shown, r.text.text};
        }
      }
    }
    if (!line.unreadable && !line.unseen_script && !line.writes_file && !line.sets_search_path) {
      std::vector<const CompiledRule*> used;
      bool all = true;
      for (const CommandShape& c : line.commands) {
        const CompiledRule* found = nullptr;
        for (const auto& r : p.rules) {
          if (r.text.action == RuleAction::kAllow && r.bash && r.bash->allows(c)) {
            found = &r;
            break;
          }
        }
        if (found == nullptr) {
          all = false;
          break;
        }
        if (std::find(used.begin(), used.end(), found) == used.end()) used.push_back(found);
      }
      if (all && !used.empty()) {
        std::vector<std::string> names;
        for (const auto* r : used) names.push_back(r->shown);
        return {Verdict::kAllow, fmt::format("{}", fmt::join(names, ", ")), used[0]->text.text};
      }
    }
  } else {
    for (const auto& r : p.rules) {
      if (r.text.action == RuleAction::kAllow && permits(r, call)) {
        return {Verdict::kAllow, r.shown, r.text.text};
      }
    }
  }
  if (tool.read_only()) {
    return {Verdict::kAllow, fmt::format("mode {}: {} is read-only", mode_name, call.name), ""};
  }
  switch (p.mode) {
    case PermissionMode::kBypassPermissions:
      return {Verdict::kAllow, "mode bypassPermissions: no rule denies or asks", ""};
    case PermissionMode::kAcceptEdits:
      if (is_edit_tool(call.name) && call.file &&
          guard::within(call.file->canonical, work_tree.string())) {
        return {Verdict::kAllow,
                fmt::format("mode acceptEdits: {} of a file inside the work tree", call.name), ""};
      }
      break;
    case PermissionMode::kPlan:
    case PermissionMode::kDefault:
      break;
  }
  if (call.shell && call.shell->writes_file) {
    return {Verdict::kAsk,
            fmt::format("mode {}: Bash asks before running, and no allow rule covers the "
                        "redirection to {}",
                        mode_name, *call.shell->writes_file),
            ""};
  }
  return {Verdict::kAsk, fmt::format("mode {}: {} asks before running", mode_name, call.name), ""};
}

config::PermissionMode PermissionPolicy::mode() const { return impl_->mode; }

std::shared_ptr<const DenyMasks> PermissionPolicy::sandbox_masks(
    const std::filesystem::path& work_tree) const {
  std::vector<DenyMasks::Rule> masks;
  for (const CompiledRule& r : impl_->rules) {
    if (r.text.action != RuleAction::kDeny || r.rule.kind != RuleKind::kPath || !r.path) continue;
    if (r.rule.tool == "Read") {
      masks.push_back({*r.path, tools::SandboxMasks::Mask::kHidden});
    } else if (r.rule.tool == "Edit" || r.rule.tool == "Write") {
      masks.push_back({*r.path, tools::SandboxMasks::Mask::kReadOnly});
    }
  }
  if (masks.empty()) return nullptr;
  return std::make_shared<const DenyMasks>(std::move(masks), work_tree);
}

PermissionPolicy PermissionPolicy::with_mode(config::PermissionMode mode) const {
  auto impl = std::make_shared<Impl>(*impl_);
  impl->mode = mode;
  return PermissionPolicy(std::move(impl));
}

Result<PermissionPolicy> PermissionPolicy::with_rules(
    const std::vector<config::PermissionRuleText>& rules) const {
  auto impl = std::make_shared<Impl>(*impl_);
  for (const auto& t : rules) {
    auto r = compile(t, impl->home);
    if (!r) return r.status();
    impl->rules.push_back(std::move(*r));
    impl->texts.push_back(t);
  }
  impl->note_shell_paths();
  return PermissionPolicy(std::move(impl));
}

const std::vector<config::PermissionRuleText>& PermissionPolicy::rules() const {
  return impl_->texts;
}

std::vector<std::string> always_allow_rules(const tools::Tool& tool, const Json& input,
                                            const std::filesystem::path& work_tree) {
  const std::string name = tool.name();
  std::vector<std::string> out;
  if (name == "Bash") {
    auto found = guard::find_commands(string_field(input, "command"));
    const auto* script = std::get_if<guard::Script>(&found);
    if (script == nullptr) return out;
    for (const guard::Step& step : script->steps) {
      if (step.kind != guard::Step::Kind::kCommand) continue;
      std::vector<std::string> words;
      bool known = true;
      for (const auto& w : step.command.argv) {
        if (w.dynamic || w.splits || w.glob) known = false;
        std::string t = w.text;
        std::replace(t.begin(), t.end(), guard::kHome, '~');
        words.push_back(rule_word(t));
      }
      if (!known || words.empty()) continue;  // no rule can name a word known only when it runs
      std::string rule = fmt::format("Bash({})", fmt::join(words, " "));
      if (std::find(out.begin(), out.end(), rule) == out.end()) out.push_back(std::move(rule));
    }
    return out;
  }
  // A file tool's answer covers that file (a folder, for Glob and Grep), never the tool: an
  // "always" for one asked Read must not answer the ask rules of every other file.
  const bool edits = is_edit_tool(name);
  if (edits || one_of(kReadTools, name)) {
    std::string p = string_field(input, "file_path");
    if (p.empty()) p = string_field(input, "notebook_path");
    if (p.empty() && (name == "Glob" || name == "Grep")) {
      const std::string folder = string_field(input, "path");
      p = folder.empty() ? work_tree.string() : folder;
    }
    if (!p.empty()) {
      const char* rule = edits ? "Edit" : "Read";
      Target t = target_of(p, work_tree.string());
      std::string tree = work_tree.string();
      if (guard::within(t.canonical, tree) && t.canonical != tree) {
        out.push_back(
            fmt::format("{}(./{})", rule, escape_path(t.canonical.substr(tree.size() + 1))));
      } else {
        out.push_back(fmt::format("{}(/{})", rule, escape_path(t.canonical)));
      }
      return out;
    }
  }
  out.push_back(name);
  return out;
}

}  // namespace mecha::agent
