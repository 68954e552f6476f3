#include "base/json_limits.h"

#include <fmt/format.h>

namespace mecha {

int json_depth(std::string_view text, int max_depth) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > max_depth) return deepest;
        }
        break;
      case ']':
      case '}':
        // More closing than opening brackets is the parser's error, not a depth.
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

Status check_json_depth(std::string_view text, int max_depth, const std::string& where) {
  if (json_depth(text, max_depth) <= max_depth) return ok_status();
  return Status::error(
      fmt::format("{}: JSON nested deeper than the limit of {} levels", where, max_depth));
}

namespace {

// The length of the valid UTF-8 character at the start of `s`, or 0 when there is none.
size_t valid_char_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  size_t copied = 0;  // s[copied, i) is valid and not yet in out
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (size_t n = valid_char_length(s.substr(i)); n > 0) {
      i += n;
      continue;
    }
    if (out.empty()) out.reserve(s.size() + 8);
    out.append(s.substr(copied, i - copied));
    out.append("\xEF\xBF\xBD");
    // One replacement for a lead byte and the continuation bytes that follow it.
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    copied = i;
  }
  if (copied == 0) return std::string(s);
  out.append(s.substr(copied));
  return out;
}

}  // namespace mecha
