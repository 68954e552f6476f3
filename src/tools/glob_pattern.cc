#include "tools/glob_pattern.h"

#include <fmt/format.h>

namespace mecha::tools {
namespace {

constexpr size_t kMaxPatternBytes = 4096;

void append_literal(std::string& out, char c) {
  if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out += '\\';
  out += c;
}

}  // namespace

GlobPattern::GlobPattern(std::string regex, bool basename_only)
    : regex_(std::move(regex)), basename_only_(basename_only) {
  RE2::Options options;
  options.set_dot_nl(true);
  options.set_log_errors(false);
  re_ = std::make_shared<const RE2>(regex_, options);
}

Result<GlobPattern> GlobPattern::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return Status::error(fmt::format("the glob pattern is {} bytes long, over the limit of {}",
                                     pattern.size(), kMaxPatternBytes));
  }
  if (pattern.empty()) return Status::error("the glob pattern is empty");
  std::string_view p = pattern;
  while (p.substr(0, 2) == "./") p.remove_prefix(2);
  bool anchored = false;
  while (!p.empty() && p.front() == '/') {
    p.remove_prefix(1);
    anchored = true;
  }
  const bool basename_only = !anchored && p.find('/') == std::string_view::npos;

  std::string re;
  int braces = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '*') {
      if (i + 1 < p.size() && p[i + 1] == '*') {
        const bool at_start = i == 0 || p[i - 1] == '/';
        i += 1;
        if (at_start && i + 1 < p.size() && p[i + 1] == '/') {
          re += "(?:.*/)?";  // "**/": any folders, or none
          i += 1;
        } else {
          re += ".*";
        }
      } else {
        re += "[^/]*";
      }
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '[') {
      size_t j = i + 1;
      std::string set;
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
        set += '^';
        ++j;
      }
      if (j < p.size() && p[j] == ']') {
        set += "\\]";
        ++j;
      }
      while (j < p.size() && p[j] != ']') {
        if (p[j] == '\\' || p[j] == '[') set += '\\';
        set += p[j];
        ++j;
      }
      if (j >= p.size()) {
        return Status::error(
            fmt::format("the glob pattern '{}' has a '[' that is not closed", pattern));
      }
      re += "[" + set + "]";
      i = j;
    } else if (c == '{') {
      ++braces;
      re += "(?:";
    } else if (c == '}' && braces > 0) {
      --braces;
      re += ")";
    } else if (c == ',' && braces > 0) {
      re += "|";
    } else if (c == '\\' && i + 1 < p.size()) {
      append_literal(re, p[++i]);
    } else {
      append_literal(re, c);
    }
  }
  if (braces > 0) {
    return Status::error(
        fmt::format("the glob pattern '{}' has a '{{' that is not closed", pattern));
  }
  GlobPattern g(re, basename_only);
  if (!g.re_->ok()) {
    return Status::error(
        fmt::format("the glob pattern '{}' is not valid: {}", pattern, g.re_->error()));
  }
  return g;
}

bool GlobPattern::matches(std::string_view path) const {
  if (basename_only_) {
    size_t slash = path.rfind('/');
    if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  }
  return RE2::FullMatch(path, *re_);
}

}  // namespace mecha::tools
