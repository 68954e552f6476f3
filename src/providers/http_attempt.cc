#include "providers/http_attempt.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text.h"

namespace mecha::providers {
namespace {

constexpr size_t kMaxErrorBody = 64 << 10;

std::string seconds(double s) { return fmt::format("{:g} s", s); }

}  // namespace

std::optional<long> parse_count(std::string_view v) {
  if (v.empty() || v.size() > 9) return std::nullopt;
  long n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

SteadyClock::duration seconds_of(double s) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(s));
}

void Attempt::header(std::string_view line) {
  answered = true;
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue, say)
    content_type.clear();
    retry_after.reset();
    should_retry.reset();
    return;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view name = trim(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "content-type")) {
    content_type = value;
  } else if (iequals(name, "retry-after")) {
    if (auto d = parse_retry_after(value, std::chrono::system_clock::now()); d && !retry_after) {
      retry_after = *d;
    }
  } else if (iequals(name, "retry-after-ms")) {
    if (auto ms = parse_count(value)) retry_after = std::chrono::milliseconds(*ms);
  } else if (iequals(name, "x-should-retry")) {
    if (iequals(value, "true")) should_retry = true;
    if (iequals(value, "false")) should_retry = false;
  }
}

bool Attempt::body(std::string_view piece) {
  if (status >= 200 && status < 300) {
    if (interrupt == Interrupt::kComplete) return true;  // after the whole answer: ignored
    delivered = true;
    Status st = receiver->on_body(piece);
    if (!st.ok()) {
      handler_status = std::move(st);
      interrupt = Interrupt::kHandler;
      return false;
    }
    if (receiver->complete()) {
      // The answer is whole: whatever the server sends after it, or however long it keeps
      // the body open, changes nothing. The transfer goes on for kCompletionGrace only.
      interrupt = Interrupt::kComplete;
      completed_at = last_byte;
    }
    return true;
  }
  if (error_body.size() < kMaxErrorBody) {
    error_body.append(piece.substr(0, kMaxErrorBody - error_body.size()));
  }
  return true;
}

std::string connect_timeout_message(const HttpOptions& opt, const HttpRequest& req) {
  return fmt::format("POST {}: connect timeout: no connection within {} (connect_timeout)", req.url,
                     seconds(opt.connect_timeout_s));
}

std::string mid_stream_message(const HttpRequest& req, std::string_view detail) {
  return fmt::format("POST {}: the connection broke mid-stream: {}", req.url, detail);
}

Outcome conclude(const Attempt& a, const HttpOptions& opt, const HttpRequest& req) {
  Outcome out;
  out.retry_after = a.retry_after;
  out.delivered = a.delivered;
  switch (a.interrupt) {
    case Interrupt::kCancelled:
      out.status = Status::cancelled(fmt::format("POST {}: cancelled", req.url));
      return out;
    case Interrupt::kStalled:
      out.status = Status::error(fmt::format(
          "POST {}: stall timeout: no bytes from the server for {} (stall_timeout){}", req.url,
          seconds(opt.stall_timeout_s),
          a.delivered ? ", the stream was cut short" : " while waiting for the answer"));
      // A connection gone quiet is as good as dropped.
      out.retryable = true;
      return out;
    case Interrupt::kTimedOut:
      out.status = Status::error(fmt::format(
          "POST {}: request timeout: the answer was not complete within {} (request_timeout){}",
          req.url, seconds(opt.request_timeout_s),
          a.delivered ? "; the server kept the stream open without finishing it"
                      : "; no answer arrived"));
      return out;
    case Interrupt::kHandler:
      out.status = a.handler_status;
      out.retryable = a.receiver->transient();
      return out;
    case Interrupt::kComplete:
      out.reply.status = a.status;
      out.reply.content_type = a.content_type;
      return out;
    case Interrupt::kNone:
      break;
  }
  if (a.status >= 200 && a.status < 300) {
    out.reply.status = a.status;
    out.reply.content_type = a.content_type;
    out.status = a.receiver->on_end(out.reply);
    out.retryable = !out.status.ok() && a.receiver->transient();
    return out;
  }
  std::string message = api_error_message(a.error_body);
  out.status = Status::error(
      fmt::format("POST {}: HTTP {}{}{}", req.url, a.status, message.empty() ? "" : ": ", message));
  out.retryable = a.status == 408 || a.status == 429 || (a.status >= 500 && a.status < 600);
  if (a.should_retry) out.retryable = *a.should_retry;
  return out;
}

}  // namespace mecha::providers
