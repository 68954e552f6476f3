#include "agent/permissions.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <variant>

#include "agent/bash_rule_match.h"
#include "agent/permission_paths.h"
#include "config/permission_rule.h"
#include "guard/command_finder.h"
#include "guard/operands.h"
#include "guard/path_model.h"

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

// The host of an http(s) URL, lowercase, without user, port or trailing dot; "" when the
// URL cannot be read.
std::string host_of(const std::string& url) {
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
  std::string host(rest);
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (host.ends_with('.')) host.pop_back();
  return host;
}

bool host_matches(const std::string& rule, const std::string& host) {
  if (rule.starts_with("*.")) {
    std::string_view parent = std::string_view(rule).substr(1);  // ".example.com"
    return host.size() > parent.size() && host.ends_with(parent);
  }
  return host == rule;
}

// A file the call names, as written (made absolute) and with symlinks resolved.
struct Target {
  std::string lexical;
  std::string canonical;
  // Their components, split once per decision by split() (views into the strings above, so
  // taken only once the Target no longer moves).
  PathPattern::Parts lexical_parts;
  PathPattern::Parts canonical_parts;
  void split() {
    lexical_parts = path_components(lexical);
    canonical_parts = path_components(canonical);
  }
};

// The path with every symlink resolved, dangling ones too (a Write through a link whose
// target does not exist yet creates the target), and `..` applied after each; at most 40
// links are followed, as the kernel does, after which the rest is taken as written. The work
// tree is canonical (decide()'s contract), so a path under it is walked from there.
// `absolute` is lexically normal.
std::string resolved(const std::string& absolute, const std::string& tree) {
  std::vector<std::string> todo;  // components still to walk, the next one last
  std::string out;                // "" stands for "/"
  std::string_view rest = absolute;
  if (guard::within(absolute, tree) && tree != "/") {
    out = tree;
    rest.remove_prefix(tree.size());
  }
  for (auto c : path_components(rest)) todo.emplace_back(c);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  bool missing = false;  // below a component that does not exist, nothing is a link
  char target[4096];
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      size_t slash = out.rfind('/');
      out.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    std::string next = out + "/" + c;
    struct stat st;
    if (!missing && links < 40 && ::lstat(next.c_str(), &st) != 0) missing = true;
    if (!missing && links < 40 && S_ISLNK(st.st_mode)) {
      ssize_t n = ::readlink(next.c_str(), target, sizeof target);
      if (n > 0 && static_cast<size_t>(n) < sizeof target) {
        ++links;
        std::string_view link(target, static_cast<size_t>(n));
        if (link.starts_with('/')) out.clear();
        auto parts = path_components(link);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
        continue;
      }
    }
    out = std::move(next);
  }
  return out.empty() ? std::string("/") : out;
}

Target target_of(const std::string& written, const std::string& tree) {
  Target t;
  t.lexical = guard::normalise(written.starts_with('/') ? written : tree + "/" + written);
  t.canonical = resolved(t.lexical, tree);
  return t;
}

// What a shell line does, as far as rules care.
struct ShellLine {
  std::optional<std::string> unreadable;  // why the guard cannot read it
  std::vector<CommandShape> commands;
  bool unseen_script = false;  // a shell reads a script nobody could see in advance
  // A redirection writes a file (not /dev/null, /dev/stdout or /dev/stderr): an allow rule
  // names commands, not the files they may clobber, so such a line is not allowed by rules.
  std::optional<std::string> writes_file;
  struct Use {
    Target path;
    bool under = false;  // what lies under the folder is read too (or the path is not known)
  };
  std::vector<Use> reads;
  std::vector<Use> writes;
};

// `with_paths`: find the files the line reads and writes (only Read, Edit and Write deny and
// ask rules need them).
ShellLine read_line(const std::string& line, const std::filesystem::path& tree,
                    const std::filesystem::path& home, bool with_paths) {
  ShellLine out;
  auto found = guard::find_commands(line);
  if (auto* problem = std::get_if<guard::Problem>(&found)) {
    out.unreadable = problem->reason;
    return out;
  }
  const auto& script = std::get<guard::Script>(found);
  guard::Places places;
  places.work_tree = tree.string();
  places.home = home.string();
  // Each scope keeps the folders the line may be in (a cd may fail); "" is unknown.
  std::vector<std::set<std::string>> cwds{{tree.string()}};
  std::set<std::tuple<bool, std::string, bool>> seen;  // (write, path, under)
  auto use = [&](const guard::ShellWord& w, bool recursive, std::vector<ShellLine::Use>& into) {
    for (const std::string& cwd : cwds.back()) {
      guard::Resolved r = guard::resolve_path(w, cwd, places);
      bool under = recursive;
      std::string path = r.path;
      if (r.place == guard::Place::kUnknown) {
        // Known only at run time: anything under the folder it is known to be in.
        if (path.empty()) path = cwd.empty() ? std::string("/") : cwd;
        under = true;
      }
      if (!seen.emplace(&into == &out.writes, path, under).second) continue;
      into.push_back({target_of(path, places.work_tree), under});
    }
  };
  for (const guard::Step& step : script.steps) {
    switch (step.kind) {
      case guard::Step::Kind::kScopeOpen:
        cwds.push_back(cwds.back());
        break;
      case guard::Step::Kind::kScopeClose:
        if (cwds.size() > 1) cwds.pop_back();
        break;
      case guard::Step::Kind::kRedirect: {
        const std::string& op = step.redirect.op;
        if (op == ">&" || op == "<&") break;  // a file descriptor
        const std::string& to = step.redirect.target.text;
        if (op != "<" && !out.writes_file && to != "/dev/null" && to != "/dev/stdout" &&
            to != "/dev/stderr") {
          out.writes_file = step.redirect.target.shown();
        }
        if (!with_paths) break;
        if (op == "<" || op == "<>") use(step.redirect.target, false, out.reads);
        if (op != "<") use(step.redirect.target, false, out.writes);
        break;
      }
      case guard::Step::Kind::kCommand: {
        const guard::Command& c = step.command;
        out.commands.push_back(shape_of(c));
        if (c.reads_script_from_stdin || c.script_from_unknown_pipe || c.script_operand_unknown) {
          out.unseen_script = true;
        }
        if (c.name == "cd" || c.name == "pushd" || c.name == "popd") {
          std::set<std::string> next = cwds.back();  // a cd may fail
          const guard::ShellWord* target = nullptr;
          for (size_t i = 1; i < c.argv.size() && target == nullptr; ++i) {
            if (c.argv[i].text.empty() || c.argv[i].text[0] != '-') target = &c.argv[i];
          }
          guard::ShellWord home_word = guard::literal_word(std::string(1, guard::kHome));
          for (const std::string& cwd : cwds.back()) {
            next.insert(c.name == "popd"
                            ? std::string()
                            : guard::resolve_directory(target ? *target : home_word, cwd, places));
          }
          if (next.count("")) next = {""};
          cwds.back() = std::move(next);
        }
        if (!with_paths) break;
        guard::Operands ops = guard::operands_of(c);
        bool recursive = guard::reads_recursively(c, ops);
        for (const auto& w : ops.reads) use(w, recursive, out.reads);
        for (const auto& w : ops.writes) use(w, false, out.writes);
        break;
      }
    }
  }
  return out;
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
  std::optional<Target> file;  // Read, Write, Edit, Glob, Grep
  std::optional<ShellLine> shell;
  std::string tree_text;
  PathPattern::Parts tree_parts;
};

Call read_call(const tools::Tool& tool, const Json& input, const std::filesystem::path& tree,
               const std::filesystem::path& home, bool shell_paths) {
  Call call{tool, tool.name(), input, tree, std::nullopt, std::nullopt, tree.string(), {}};
  if (call.name == "Bash") {
    call.shell = read_line(string_field(input, "command"), tree, home, shell_paths);
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
      return covers(r.rule.tool, call.name);
    case RuleKind::kBash:
      return false;
    case RuleKind::kPath:
      if (!covers(r.rule.tool, call.name) || !call.file) return false;
      // Grep reads every file under its folder; Glob lists names only.
      return path_catches(*r.path, *call.file, call.name == "Grep", tree);
    case RuleKind::kDomain: {
      if (call.name != "WebFetch") return false;
      std::string host = host_of(string_field(call.input, "url"));
      return host.empty() || host_matches(r.rule.specifier, host);
    }
    case RuleKind::kAgent:
      return call.name == "Task" && string_field(call.input, "subagent_type") == r.rule.specifier;
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
      std::string host = host_of(string_field(call.input, "url"));
      return !host.empty() && host_matches(r.rule.specifier, host);
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
    if (!line.unreadable && !line.unseen_script && !line.writes_file) {
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
  if (is_edit_tool(name)) {
    std::string p = string_field(input, "file_path");
    if (p.empty()) p = string_field(input, "notebook_path");
    if (!p.empty()) {
      Target t = target_of(p, work_tree.string());
      std::string tree = work_tree.string();
      if (guard::within(t.canonical, tree) && t.canonical != tree) {
        out.push_back(fmt::format("Edit(./{})", escape_path(t.canonical.substr(tree.size() + 1))));
      } else {
        out.push_back(fmt::format("Edit(/{})", escape_path(t.canonical)));
      }
      return out;
    }
  }
  out.push_back(name);
  return out;
}

}  // namespace mecha::agent
