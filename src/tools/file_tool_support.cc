#include "tools/file_tool_support.h"

#include <fmt/format.h>

namespace mecha::tools {

ToolOutput path_problem_output(const PathProblem& problem) {
  if (problem.rule.empty()) return ToolOutput::error(problem.message);
  return ToolOutput::refusal(problem.rule, problem.message);
}

PathResult<ConfinedPath> resolve_in_work_tree(const ToolContext& ctx, std::string_view path,
                                              Access access) {
  auto tree = WorkTree::open(ctx.work_tree);
  if (!tree.ok()) {
    PathResult<ConfinedPath> r;
    r.problem = {"", tree.message()};
    return r;
  }
  return tree->resolve(path, access);
}

namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one.
size_t sequence_length(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not valid.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    return 0;
  }
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  size_t i = 0;
  // Fast path: nothing to replace.
  while (i < text.size()) {
    size_t n = sequence_length(text.substr(i));
    if (n == 0) break;
    i += n;
  }
  if (i == text.size()) return std::string(text);
  out.reserve(text.size() + 16);
  out.append(text.substr(0, i));
  while (i < text.size()) {
    size_t n = sequence_length(text.substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

size_t utf8_prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return text.size();
  size_t end = max;
  // Back off over continuation bytes to the start of the sequence max cuts into.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80 && max - end < 4) --end;
  return end;
}

std::string plural(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace mecha::tools
