#include "tools/bash_output.h"

#include <fmt/format.h>

#include <vector>

#include "tools/file_tool_support.h"

namespace mecha::tools {
namespace {

// Byte offsets where each character starts, for valid UTF-8.
std::vector<size_t> char_starts(std::string_view s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) out.push_back(i);
  return out;
}

}  // namespace

std::string cap_output(std::string_view head_in, std::string_view tail_in, uint64_t dropped_bytes,
                       size_t max_chars) {
  std::string head = valid_utf8(head_in);
  std::string tail = valid_utf8(tail_in);
  if (dropped_bytes == 0) {
    head += tail;
    tail.clear();
    if (char_starts(head).size() <= max_chars) return head;
    // One piece: its two ends are the head and tail.
    std::vector<size_t> cs = char_starts(head);
    size_t mid = cs[cs.size() / 2];
    tail = head.substr(mid);
    head.resize(mid);
  }
  size_t half = max_chars / 2;
  std::vector<size_t> hs = char_starts(head);
  std::vector<size_t> ts = char_starts(tail);
  std::string first = hs.size() > half ? head.substr(0, hs[half]) : head;
  size_t keep_last = max_chars - half;
  std::string last = ts.size() > keep_last ? tail.substr(ts[ts.size() - keep_last]) : tail;
  uint64_t cut = (head.size() - first.size()) + dropped_bytes + (tail.size() - last.size());
  return fmt::format(
      "{}\n[... {} bytes of output cut here; the first {} and last {} characters are kept ...]\n{}",
      first, cut, half, keep_last, last);
}

}  // namespace mecha::tools
