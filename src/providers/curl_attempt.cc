#include "providers/curl_attempt.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>

namespace mecha::providers {
namespace {

// Keeps an easy handle in a multi handle for the length of one transfer.
class MultiMembership {
 public:
  MultiMembership(const Libcurl& lib, CURLM* multi, CURL* easy)
      : lib_(lib), multi_(multi), easy_(easy) {
    lib_.multi_add_handle(multi_, easy_);
  }
  ~MultiMembership() { lib_.multi_remove_handle(multi_, easy_); }
  MultiMembership(const MultiMembership&) = delete;
  MultiMembership& operator=(const MultiMembership&) = delete;

 private:
  const Libcurl& lib_;
  CURLM* multi_;
  CURL* easy_;
};

// The curl callbacks' user data: the attempt, and the handle to read the status from.
struct CurlAttempt {
  Attempt a;
  const Libcurl* lib;
  CURL* easy;
};

size_t on_header(char* data, size_t size, size_t nitems, void* user) {
  auto* c = static_cast<CurlAttempt*>(user);
  const size_t n = size * nitems;
  c->a.last_byte = SteadyClock::now();
  c->a.header(std::string_view(data, n));
  return n;
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* c = static_cast<CurlAttempt*>(user);
  const size_t n = size * nmemb;
  c->a.last_byte = SteadyClock::now();
  if (c->a.status == 0) c->lib->easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->a.status);
  // A failure aborts the transfer with CURLE_WRITE_ERROR.
  return c->a.body(std::string_view(data, n)) ? n : 0;
}

bool is_connection_failure(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
      return true;
    default:
      return false;
  }
}

// Opens libcurl's sockets close-on-exec: a connection now outlives its request, and no
// program a tool starts may inherit it.
curl_socket_t open_socket(void*, curlsocktype, curl_sockaddr* address) {
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// Points the handle's options at nothing of the request that set them, once its transfer is
// over, so that handles kept for the next request hold no pointer into this one.
class RequestOptions {
 public:
  RequestOptions(const Libcurl& lib, CURL* easy) : lib_(lib), easy_(easy) {}
  ~RequestOptions() {
    lib_.easy_setopt(easy_, CURLOPT_POSTFIELDS, nullptr);
    lib_.easy_setopt(easy_, CURLOPT_HTTPHEADER, nullptr);
    lib_.easy_setopt(easy_, CURLOPT_WRITEDATA, nullptr);
    lib_.easy_setopt(easy_, CURLOPT_HEADERDATA, nullptr);
  }
  RequestOptions(const RequestOptions&) = delete;
  RequestOptions& operator=(const RequestOptions&) = delete;

 private:
  const Libcurl& lib_;
  CURL* easy_;
};

}  // namespace

Outcome curl_attempt(const Libcurl& lib, const HttpOptions& opt, const HttpRequest& req,
                     curl_slist* headers, BodyReceiver& receiver, CurlHandles& handles,
                     bool fresh_connection) {
  CurlAttempt c{Attempt(receiver), &lib, handles.easy()};
  Attempt& a = c.a;
  char* curl_error = handles.error_buffer();
  curl_error[0] = '\0';
  CURL* h = handles.easy();
  CURLM* multi = handles.multi();
  RequestOptions request_options(lib, h);
  lib.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  lib.easy_setopt(h, CURLOPT_POST, 1L);
  lib.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  lib.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &c);
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &c);
  lib.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  lib.easy_setopt(h, CURLOPT_FRESH_CONNECT, fresh_connection ? 1L : 0L);
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::max(1.0, opt.connect_timeout_s * 1000)));
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  lib.easy_setopt(h, CURLOPT_USERAGENT, "mecha/0.1");
  lib.easy_setopt(h, CURLOPT_NOPROXY, no_proxy_list().c_str());

  const auto stall = seconds_of(opt.stall_timeout_s);
  const auto deadline = SteadyClock::now() + seconds_of(opt.request_timeout_s);
  bool connected = false;
  curl_off_t sent = 0;  // request body bytes sent so far
  CURLcode code = CURLE_OK;
  bool finished = false;  // libcurl ended the transfer itself
  {
    MultiMembership member(lib, multi, h);
    for (;;) {
      int running = 0;
      CURLMcode mc = lib.multi_perform(multi, &running);
      if (mc != CURLM_OK) {
        Outcome out;
        out.status = Status::error(
            fmt::format("POST {}: libcurl failed: {}", req.url, lib.multi_strerror(mc)));
        return out;
      }
      if (a.interrupt == Interrupt::kHandler) break;
      if (running == 0) {
        int left = 0;
        while (CURLMsg* msg = lib.multi_info_read(multi, &left)) {
          if (msg->msg == CURLMSG_DONE) code = msg->data.result;
        }
        finished = true;
        break;
      }
      const auto now = SteadyClock::now();
      if (a.interrupt == Interrupt::kComplete) {
        // The answer is whole; only the end of its body is awaited, and not for long.
        const auto left = kCompletionGrace - (now - a.completed_at);
        if (left <= SteadyClock::duration::zero()) break;
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
        lib.multi_poll(multi, nullptr, 0, static_cast<int>(wait) + 1, nullptr);
        continue;
      }
      if (req.cancel != nullptr && req.cancel->cancelled()) {
        a.interrupt = Interrupt::kCancelled;
        break;
      }
      if (!connected) {
        curl_off_t pre = 0;
        lib.easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &pre);
        if (pre > 0 || a.last_byte != SteadyClock::time_point()) {
          connected = true;
          if (a.last_byte < now) a.last_byte = now;
        }
      }
      // Sending a large request body is progress too.
      curl_off_t sent_now = 0;
      lib.easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &sent_now);
      if (sent_now > sent) {
        sent = sent_now;
        a.last_byte = now;
      }
      if (connected && now - a.last_byte > stall) {
        a.interrupt = Interrupt::kStalled;
        break;
      }
      if (opt.request_timeout_s > 0 && now >= deadline) {
        a.interrupt = Interrupt::kTimedOut;
        break;
      }
      lib.multi_poll(multi, nullptr, 0, static_cast<int>(kPollInterval.count()), nullptr);
    }
  }
  if (a.status == 0) lib.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);

  if (a.interrupt != Interrupt::kNone || code == CURLE_OK) {
    Outcome out = conclude(a, opt, req);
    // libcurl keeps the connection of a transfer that ended cleanly, and closes any other.
    out.reusable = finished && code == CURLE_OK;
    return out;
  }
  Outcome out;
  out.retry_after = a.retry_after;
  out.delivered = a.delivered;
  std::string detail = curl_error[0] != '\0' ? curl_error : lib.easy_strerror(code);
  if (a.delivered) {
    out.status = Status::error(mid_stream_message(req, detail));
    out.retryable = true;  // when the receiver can restart
    return out;
  }
  long new_connections = 0;
  lib.easy_getinfo(h, CURLINFO_NUM_CONNECTS, &new_connections);
  out.stale_connection =
      new_connections == 0 && !a.answered &&
      (code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING);
  curl_off_t connect_time = 0;
  lib.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connect_time);
  if (code == CURLE_OPERATION_TIMEDOUT && connect_time == 0) {
    out.status = Status::error(connect_timeout_message(opt, req));
  } else {
    out.status = Status::error(fmt::format("POST {}: {}", req.url, detail));
  }
  out.retryable = is_connection_failure(code);
  return out;
}

}  // namespace mecha::providers
