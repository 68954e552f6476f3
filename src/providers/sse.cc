#include "providers/sse.h"

#include <fmt/format.h>

#include <cstring>

namespace mecha::providers {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";
constexpr size_t kBomSize = 3;

Status too_large(size_t limit) {
  return Status::error(fmt::format(
      "server-sent event larger than the limit of {} bytes; the stream was refused", limit));
}

// The position of `c` in [from, size) of `s`, or `size`.
size_t find_byte(std::string_view s, size_t from, char c) {
  const void* p = std::memchr(s.data() + from, c, s.size() - from);
  return p == nullptr ? s.size() : static_cast<const char*>(p) - s.data();
}

}  // namespace

Status SseParser::feed(std::string_view bytes) {
  if (!failed_.ok()) return failed_;
  while (at_start_ && !bytes.empty()) {
    if (bytes[0] == kBom[bom_matched_]) {
      bytes.remove_prefix(1);
      if (++bom_matched_ == kBomSize) at_start_ = false;
    } else {
      // Not a byte order mark after all: what looked like its start is ordinary input.
      at_start_ = false;
      if (bom_matched_ > 0) MECHA_RETURN_IF_ERROR(feed(std::string_view(kBom, bom_matched_)));
    }
  }
  if (bytes.empty()) return ok_status();

  const size_t n = bytes.size();
  size_t i = 0;
  if (after_cr_) {
    after_cr_ = false;
    if (n > 0 && bytes[0] == '\n') i = 1;
  }
  // The next LF and CR at or after i, each searched for once per occurrence so that a
  // stream using only one kind of line end stays linear.
  size_t next_lf = std::string_view::npos;
  size_t next_cr = std::string_view::npos;
  while (i < n) {
    if (next_lf == std::string_view::npos || next_lf < i) next_lf = find_byte(bytes, i, '\n');
    if (next_cr == std::string_view::npos || next_cr < i) next_cr = find_byte(bytes, i, '\r');
    const size_t end = std::min(next_lf, next_cr);
    if (end == n) {
      if (line_.size() + (n - i) > max_event_bytes_) return failed_ = too_large(max_event_bytes_);
      line_.append(bytes.substr(i));
      break;
    }
    Status st;
    if (line_.empty()) {
      st = take_line(bytes.substr(i, end - i));
    } else {
      if (line_.size() + (end - i) > max_event_bytes_) return failed_ = too_large(max_event_bytes_);
      line_.append(bytes.substr(i, end - i));
      st = take_line(line_);
      line_.clear();
    }
    if (!st.ok()) return failed_ = st;
    i = end + 1;
    if (bytes[end] == '\r') {
      if (i < n) {
        if (bytes[i] == '\n') ++i;
      } else {
        after_cr_ = true;
      }
    }
  }
  return ok_status();
}

Status SseParser::take_line(std::string_view line) {
  if (line.empty()) return dispatch();
  if (line[0] == ':') return ok_status();  // a comment or keep-alive
  std::string_view field = line;
  std::string_view value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  has_fields_ = true;
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
    if (data_.size() > max_event_bytes_) return too_large(max_event_bytes_);
  } else if (field == "event") {
    type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_.assign(value);
  }
  // "retry" and unknown fields are ignored, as the format says.
  return ok_status();
}

Status SseParser::dispatch() {
  has_fields_ = false;
  if (!has_data_) {
    type_.clear();
    return ok_status();
  }
  SseEvent event{type_.empty() ? std::string_view("message") : std::string_view(type_), data_, id_};
  ++events_;
  Status st = handler_(event);
  type_.clear();
  data_.clear();
  has_data_ = false;
  return st;
}

}  // namespace mecha::providers
