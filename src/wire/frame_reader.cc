#include "wire/frame_reader.h"

namespace mecha::wire {

void FrameReader::feed(std::string_view bytes) {
  if (discarding_) {
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) return;
    discarding_ = false;
    bytes.remove_prefix(nl + 1);
  }
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
    scanned_ = 0;
  } else if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<FrameReader::Line> FrameReader::next() {
  while (true) {
    size_t nl = buffer_.find('\n', start_ + scanned_);
    if (nl == std::string::npos) {
      scanned_ = buffer_.size() - start_;
      if (scanned_ <= max_) return std::nullopt;
      // Past the limit with no end in sight: report it now and drop the rest as it comes.
      Line line{"", true, scanned_};
      buffer_.clear();
      start_ = 0;
      scanned_ = 0;
      discarding_ = true;
      return line;
    }
    const size_t size = nl - start_;
    const size_t begin = start_;
    start_ = nl + 1;
    scanned_ = 0;
    if (size == 0) continue;
    if (size > max_) return Line{"", true, size};
    return Line{buffer_.substr(begin, size), false, size};
  }
}

}  // namespace mecha::wire
