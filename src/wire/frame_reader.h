// FrameReader: cuts a byte stream into frame lines, whatever sizes the reads arrive in.
//
// Bytes go in with feed() as they are read; complete lines come out of next(). A line longer
// than the limit is not kept: its bytes are dropped as they arrive (memory stays bounded by
// the limit), and next() reports it once, as an oversize line, when its newline arrives or as
// soon as the limit is passed. The stream then goes on at the next line. Owned by one thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mecha::wire {

class FrameReader {
 public:
  explicit FrameReader(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  void feed(std::string_view bytes);

  struct Line {
    std::string text;       // without the newline; empty when oversize
    bool oversize = false;  // longer than the limit; `size` is how long it was so far
    size_t size = 0;
  };
  // The next complete line, or nullopt until more bytes arrive. Empty lines are skipped.
  std::optional<Line> next();

  // Bytes of an unfinished line are waiting (at end of stream, the peer cut a frame short).
  bool partial() const { return buffer_.size() > start_ || discarding_; }

 private:
  const size_t max_;
  std::string buffer_;
  size_t start_ = 0;         // where the unconsumed bytes begin
  size_t scanned_ = 0;       // bytes from start_ already known to hold no newline
  bool discarding_ = false;  // inside an oversize line already reported
};

}  // namespace mecha::wire
