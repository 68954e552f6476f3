#include "base/bounded_output.h"

#include <algorithm>

#include <fmt/format.h>

namespace mecha {

std::string BoundedOutput::text() const {
  if (dropped == 0) return head + tail;
  return fmt::format("{}\n[... {} bytes dropped ...]\n{}", head, dropped, tail);
}

void OutputKeeper::add(std::string_view data) {
  out_.total += data.size();
  size_t to_head = std::min(data.size(), head_cap_ - std::min(head_cap_, out_.head.size()));
  out_.head.append(data.substr(0, to_head));
  data.remove_prefix(to_head);
  if (data.empty()) return;
  tail_.append(data);
  // Trim in batches so appending stays amortised O(1).
  if (tail_.size() > 2 * tail_cap_ + 4096) trim();
}

BoundedOutput OutputKeeper::finish() {
  trim();
  out_.tail = std::move(tail_);
  out_.dropped = out_.total - out_.head.size() - out_.tail.size();
  if (out_.dropped == 0) {
    out_.head += out_.tail;
    out_.tail.clear();
  }
  return std::move(out_);
}

void OutputKeeper::trim() {
  if (tail_.size() > tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
}

}  // namespace mecha
