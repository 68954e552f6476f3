#include "config/permission_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace mecha::config {
namespace {

constexpr std::string_view kPathTools[] = {"Read", "Edit",      "Write",       "Glob",
                                           "Grep", "MultiEdit", "NotebookEdit"};

bool tool_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

Status bad(std::string_view text, std::string_view what) {
  return Status::error(fmt::format("rule \"{}\": {}", text, what));
}

// Shell-like words: whitespace separates, quotes group, a backslash escapes, an unquoted *
// is kRuleWildcard.
Result<std::vector<std::string>> bash_words(std::string_view text, std::string_view spec) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    if (c == kRuleWildcard || c == '\0') return bad(text, "holds a control character");
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < spec.size()) {
        word += spec[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      if (i + 1 == spec.size()) return bad(text, "ends with a lone backslash");
      word += spec[++i];
    } else if (c == '*') {
      word += kRuleWildcard;
    } else {
      word += c;
    }
  }
  if (quote != 0) return bad(text, fmt::format("has an unclosed {} quote", quote));
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<PermissionRule> parse_mcp(std::string_view text) {
  PermissionRule r;
  r.kind = RuleKind::kMcp;
  std::string_view rest = text.substr(5);  // after "mcp__"
  size_t sep = rest.find("__");
  std::string_view server = rest.substr(0, sep);
  if (server.empty()) return bad(text, "names no MCP server (mcp__SERVER or mcp__SERVER__TOOL)");
  std::string_view tool_part = sep == std::string_view::npos ? "" : rest.substr(sep + 2);
  if (server.find('*') != std::string_view::npos ||
      (tool_part != "*" && tool_part.find('*') != std::string_view::npos)) {
    return bad(text, "a wildcard in an MCP rule may only be the whole tool: mcp__SERVER__*");
  }
  r.tool = fmt::format("mcp__{}", server);
  if (sep != std::string_view::npos) {
    std::string_view tool = rest.substr(sep + 2);
    if (tool.empty())
      return bad(text, "ends with \"__\" (write mcp__SERVER__TOOL or mcp__SERVER__*)");
    if (tool != "*") r.specifier = std::string(tool);
  }
  return r;
}

}  // namespace

bool is_path_rule_tool(std::string_view tool) {
  return std::find(std::begin(kPathTools), std::end(kPathTools), tool) != std::end(kPathTools);
}

Result<PermissionRule> parse_permission_rule(std::string_view text) {
  if (text.size() > kMaxRuleBytes) {
    return Status::error(
        fmt::format("rule \"{}...\": longer than {} bytes", text.substr(0, 40), kMaxRuleBytes));
  }
  if (text.empty()) return bad(text, "is empty");
  size_t open = text.find('(');
  std::string_view name = text.substr(0, open);
  if (name.empty()) return bad(text, "names no tool before \"(\"");
  if (name.find('*') != std::string_view::npos && !name.starts_with("mcp__")) {
    return bad(text, "a tool name has no wildcard (only mcp__SERVER__* has)");
  }
  for (char c : name) {
    if (!tool_name_char(c) && c != '*') {
      return bad(text,
                 fmt::format("the tool name \"{}\" may hold only letters, digits, _ and -", name));
    }
  }
  if (name.starts_with("mcp__")) {
    if (open != std::string_view::npos) {
      return bad(text, "an MCP rule takes no specifier in parentheses");
    }
    return parse_mcp(text);
  }
  PermissionRule r;
  r.tool = std::string(name);
  if (open == std::string_view::npos) return r;
  if (text.back() != ')') return bad(text, "has no closing \")\" at its end");
  std::string_view spec = text.substr(open + 1, text.size() - open - 2);
  if (spec.empty()) {
    return bad(text, fmt::format("has empty parentheses (write {} for every call)", name));
  }
  if (name == "Bash") {
    bool legacy_prefix = spec.size() >= 2 && spec.ends_with(":*");
    if (legacy_prefix) spec.remove_suffix(2);
    auto words = bash_words(text, spec);
    if (!words) return words.status();
    r.words = std::move(*words);
    r.any_further_words = legacy_prefix;
    if (!r.words.empty() && r.words.back() == std::string(1, kRuleWildcard)) {
      r.words.pop_back();
      r.any_further_words = true;
    }
    if (r.words.empty() && !r.any_further_words) return bad(text, "names no command");
    r.kind = r.words.empty() ? RuleKind::kTool : RuleKind::kBash;
    return r;
  }
  if (is_path_rule_tool(name)) {
    if (spec.find('\0') != std::string_view::npos) return bad(text, "holds a NUL byte");
    if (spec.starts_with('~') && spec != "~" && !spec.starts_with("~/")) {
      return bad(text, "starts with ~ but not ~/ (another user's home is not understood)");
    }
    r.kind = RuleKind::kPath;
    r.specifier = std::string(spec);
    return r;
  }
  if (name == "WebFetch") {
    if (!spec.starts_with("domain:")) {
      return bad(text, "WebFetch takes domain:HOST (WebFetch(domain:example.com))");
    }
    std::string host(spec.substr(7));
    std::transform(host.begin(), host.end(), host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bool wildcard = host.starts_with("*.");
    std::string_view rest = std::string_view(host).substr(wildcard ? 2 : 0);
    if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-';
        })) {
      return bad(text, "the host may hold only letters, digits, . and - (and start with *.)");
    }
    r.kind = RuleKind::kDomain;
    r.specifier = std::move(host);
    return r;
  }
  if (name == "Task") {
    r.kind = RuleKind::kAgent;
    r.specifier = std::string(spec);
    return r;
  }
  r.kind = RuleKind::kOther;
  r.specifier = std::string(spec);
  return r;
}

}  // namespace mecha::config
