#include "cli/printable.h"

#include <fmt/format.h>

#include <cstdint>

namespace mecha::cli {
namespace {

// The bytes of the UTF-8 character a lead byte begins; 0 for a byte no character begins with.
size_t utf8_width(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// The valid UTF-8 character at the start of `s` (its length and code point); length 0 when
// there is none: a stray or cut byte, an overlong form, a surrogate, past U+10FFFF.
struct Character {
  size_t length = 0;
  uint32_t code = 0;
};

Character character_at(std::string_view s) {
  const auto lead = static_cast<unsigned char>(s[0]);
  const size_t n = utf8_width(lead);
  if (n == 0 || s.size() < n) return {};
  if (n == 1) return {1, lead};
  uint32_t code = lead & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[k]);
    if ((b & 0xc0) != 0x80) return {};
    code = (code << 6) | (b & 0x3fu);
  }
  static constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kLeast[n] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return {};
  return {n, code};
}

// Promise 5: characters that are not shown but change what is shown around them.
bool hides_or_reorders(uint32_t c) {
  return c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
         c == 0x2060 || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += '^';
      out += static_cast<char>(c == 0x7f ? '?' : c + 0x40);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const Character ch = character_at(text.substr(i)); ch.length == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (ch.code <= 0x9f) {
      out += fmt::format("\\u{{{:02x}}}", ch.code);
      i += ch.length;
    } else if (hides_or_reorders(ch.code)) {
      out += fmt::format("\\u{{{:04x}}}", ch.code);
      i += ch.length;
    } else {
      out.append(text.substr(i, ch.length));
      i += ch.length;
    }
  }
  return out;
}

std::string printable_line(std::string_view text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PrintableStream::feed(std::string_view piece) {
  held_.append(piece);
  // The last character's lead byte is among the last four bytes; hold it back when the
  // bytes after it are fewer than it needs.
  size_t keep = held_.size();
  for (size_t back = 1; back <= 4 && back <= held_.size(); ++back) {
    const auto b = static_cast<unsigned char>(held_[held_.size() - back]);
    if ((b & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    if (utf8_width(b) > back) keep = held_.size() - back;
    break;
  }
  std::string out = printable(std::string_view(held_).substr(0, keep));
  held_.erase(0, keep);
  return out;
}

std::string PrintableStream::finish() {
  std::string out = printable(held_);
  held_.clear();
  return out;
}

void write_printable(std::FILE* out, std::string_view text) {
  const std::string shown = printable(text);
  std::fwrite(shown.data(), 1, shown.size(), out);
}

}  // namespace mecha::cli
