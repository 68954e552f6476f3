// SseParser: an incremental Server-Sent Events parser (the WHATWG "event stream" format).
//
// feed() takes the stream in chunks split at any byte: inside a UTF-8 character, inside a
// "\r\n", inside a field name. The parser works on bytes and only looks at whole lines, so
// no split changes what it emits. Lines end with CRLF, LF or CR. For each event it handles
//   event: NAME     the event's type (Default: "message")
//   data: TEXT      one line of data; several data lines are joined with "\n"
//   id: ID          the last event id (kept across events, as the format says)
//   retry: MS       ignored (we never reconnect)
//   : comment       ignored; servers send these as keep-alives
// and a blank line dispatches the event when it has data (an event with no data line is
// dropped, as the format says). A leading UTF-8 byte order mark is skipped.
//
// Bounded: a line or an event's data longer than `max_event_bytes` is an error naming the
// limit; the parser then refuses further input.
//
// Not thread-safe: one parser belongs to one stream.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::providers {

struct SseEvent {
  std::string_view type;  // "message" when the event named none
  std::string_view data;  // the data lines joined with "\n"
  std::string_view id;    // the last event id seen in the stream, "" when none
};

class SseParser {
 public:
  // Called once per dispatched event; the views are valid only during the call. A failed
  // Status stops the parser and is returned by the feed() that dispatched the event.
  using EventHandler = std::function<Status(const SseEvent&)>;

  static constexpr size_t kDefaultMaxEventBytes = 16 << 20;  // 16 MiB

  explicit SseParser(EventHandler handler, size_t max_event_bytes = kDefaultMaxEventBytes)
      : handler_(std::move(handler)), max_event_bytes_(max_event_bytes) {}
  SseParser(const SseParser&) = delete;
  SseParser& operator=(const SseParser&) = delete;

  // Parses the next piece of the stream, dispatching every event it completes.
  Status feed(std::string_view bytes);

  // True when the stream so far holds part of an event that has not been dispatched. At the
  // end of a stream such an event is dropped (the format says so); callers that expect a
  // final event say what arrived instead.
  bool pending() const { return has_fields_ || !line_.empty(); }
  // Events dispatched so far.
  size_t events() const { return events_; }

 private:
  Status take_line(std::string_view line);
  Status dispatch();

  EventHandler handler_;
  const size_t max_event_bytes_;
  std::string line_;  // an incomplete line carried over from the last feed()
  std::string type_;
  std::string data_;
  std::string id_;
  bool has_data_ = false;
  bool has_fields_ = false;
  bool after_cr_ = false;   // the last byte fed was a CR, so a leading LF is its pair
  size_t bom_matched_ = 0;  // bytes of a leading byte order mark seen so far
  bool at_start_ = true;    // still looking for the byte order mark
  size_t events_ = 0;
  Status failed_;
};

}  // namespace mecha::providers
