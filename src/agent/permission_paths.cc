#include "agent/permission_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace mecha::agent {
namespace {

bool has_wildcard(std::string_view c) { return c.find_first_of("*?[\\") != std::string_view::npos; }

// One character of `pattern` at `p` (a literal, an escaped one, ?, or a [...] class)
// against `c`; sets *next past it. A [ without its ] is a literal [.
bool one_matches(std::string_view pattern, size_t p, char c, size_t* next) {
  char pc = pattern[p];
  if (pc == '?') {
    *next = p + 1;
    return true;
  }
  if (pc == '\\' && p + 1 < pattern.size()) {
    *next = p + 2;
    return pattern[p + 1] == c;
  }
  if (pc == '[') {
    size_t i = p + 1;
    bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negate) ++i;
    size_t first = i;
    bool in = false;
    while (i < pattern.size() && (pattern[i] != ']' || i == first)) {
      char lo = pattern[i];
      if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
        in = in || (lo <= c && c <= pattern[i + 2]);
        i += 3;
      } else {
        in = in || lo == c;
        ++i;
      }
    }
    if (i < pattern.size()) {
      *next = i + 1;
      return in != negate;
    }
  }
  *next = p + 1;
  return pc == c;
}

// Glob within one component: * any run, ? one character, [...] a class, \ escapes. One
// backtrack point for the last *, so the time is at most the product of the two lengths
// however many stars a (hostile) rule holds.
bool component_matches(const std::string& pattern, std::string_view name) {
  if (!has_wildcard(pattern)) return pattern == name;
  if (pattern == "*") return true;
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < name.size()) {
    size_t next = 0;
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && one_matches(pattern, p, name[t], &next)) {
      p = next;
      ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

std::vector<std::string_view> path_components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

Result<PathPattern> PathPattern::parse(std::string_view pattern,
                                       const std::filesystem::path& home) {
  PathPattern p;
  std::string_view rest = pattern;
  std::vector<std::string> homes;
  std::vector<std::string> components;
  if (rest.starts_with("//")) {
    p.from_tree_ = false;
    rest.remove_prefix(2);
  } else if (rest == "~" || rest.starts_with("~/")) {
    p.from_tree_ = false;
    rest.remove_prefix(1);
    std::error_code ec;
    std::string given = home.lexically_normal().string();
    std::string canonical = std::filesystem::weakly_canonical(home, ec).string();
    homes.push_back(ec ? given : canonical);
    if (given != homes[0]) homes.push_back(given);
  } else {
    // "x" without a slash (but for a trailing one) names x at any depth, as in gitignore.
    std::string_view trimmed = rest;
    while (trimmed.ends_with('/')) trimmed.remove_suffix(1);
    if (trimmed.find('/') == std::string_view::npos && trimmed != "." && trimmed != "..") {
      components.push_back("**");
    }
  }
  bool wild = false;
  int up = 0;
  for (std::string_view c : path_components(rest)) {
    if (c == ".") continue;
    if (c == "..") {
      if (wild) {
        return Status::error(
            fmt::format("path \"{}\": .. after a wildcard is not understood", pattern));
      }
      if (!components.empty()) {
        components.pop_back();
      } else {
        ++up;
      }
      continue;
    }
    wild = wild || has_wildcard(c);
    components.emplace_back(c);
  }
  if (p.from_tree_) {
    if (components.size() > 60) {
      return Status::error(fmt::format("path \"{}\": more than 60 components", pattern));
    }
    p.up_ = up;
    p.alternatives_.push_back(std::move(components));
    return p;
  }
  if (homes.empty()) homes.push_back("/");
  for (const auto& h : homes) {
    std::vector<std::string_view> base = path_components(h);
    base.resize(base.size() - std::min<size_t>(base.size(), up));
    std::vector<std::string> full(base.begin(), base.end());
    full.insert(full.end(), components.begin(), components.end());
    p.alternatives_.push_back(std::move(full));
  }
  for (const auto& a : p.alternatives_) {
    if (a.size() > 60) {
      return Status::error(fmt::format("path \"{}\": more than 60 components", pattern));
    }
  }
  return p;
}

// Walks the path's components after the anchor through the pattern's, as an automaton
// whose states are pattern positions (`**` stays or moves on), kept as bits. kMatch: the
// pattern was consumed by the path or a folder above it; kUnder: the path was consumed with
// pattern left, so the pattern may match below it.
PathPattern::Outcome PathPattern::walk(const std::vector<std::string>& components,
                                       const Parts& subject, const Parts& work_tree) const {
  size_t base = 0;
  if (from_tree_) {
    if (static_cast<size_t>(up_) > work_tree.size()) return Outcome::kNone;
    base = work_tree.size() - up_;
  }
  size_t k = 0;
  for (; k < base && k < subject.size(); ++k) {
    if (work_tree[k] != subject[k]) return Outcome::kNone;
  }
  if (k < base) return Outcome::kUnder;  // the path is a folder above the anchor
  const size_t n = components.size();
  // parse() refuses patterns of more than 60 components, so the states fit in 64 bits.
  const uint64_t done = uint64_t{1} << n;
  auto close = [&](uint64_t s) {
    for (size_t i = 0; i < n; ++i) {
      if ((s >> i & 1) && components[i] == "**") s |= uint64_t{1} << (i + 1);
    }
    return s;
  };
  uint64_t state = close(1);
  if (state & done) return Outcome::kMatch;
  for (size_t j = k; j < subject.size(); ++j) {
    uint64_t next = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!(state >> i & 1)) continue;
      if (components[i] == "**") {
        next |= uint64_t{1} << i;
      } else if (component_matches(components[i], subject[j])) {
        next |= uint64_t{1} << (i + 1);
      }
    }
    if (next == 0) return Outcome::kNone;
    next = close(next);
    if (next & done) return Outcome::kMatch;
    state = next;
  }
  return Outcome::kUnder;
}

bool PathPattern::matches(const Parts& path, const Parts& work_tree) const {
  for (const auto& c : alternatives_) {
    if (walk(c, path, work_tree) == Outcome::kMatch) return true;
  }
  return false;
}

bool PathPattern::may_match_under(const Parts& dir, const Parts& work_tree) const {
  for (const auto& c : alternatives_) {
    if (walk(c, dir, work_tree) != Outcome::kNone) return true;
  }
  return false;
}

bool PathPattern::matches(std::string_view path, std::string_view work_tree) const {
  return matches(path_components(path), path_components(work_tree));
}

bool PathPattern::may_match_under(std::string_view dir, std::string_view work_tree) const {
  return may_match_under(path_components(dir), path_components(work_tree));
}

}  // namespace mecha::agent
