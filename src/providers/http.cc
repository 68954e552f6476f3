#include "providers/http.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "base/strict_json.h"
#include "base/text.h"
#include "providers/curl_handle_pool.h"
#include "providers/libcurl.h"

namespace mecha::providers {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr size_t kMaxErrorBody = 64 << 10;
// How long a whole answer waits for the server to end its body. Servers end it right after
// the final event; waiting for that end keeps the connection for the next request, where
// cutting the transfer short would close it.
constexpr auto kCompletionGrace = std::chrono::milliseconds(25);

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

// What ended one attempt, beyond curl's own result code.
enum class Interrupt { kNone, kCancelled, kStalled, kTimedOut, kHandler, kComplete };

// The state of one attempt, shared with the curl callbacks.
struct Attempt {
  const Libcurl* lib = nullptr;
  CURL* easy = nullptr;
  BodyReceiver* receiver = nullptr;
  long status = 0;
  bool answered = false;   // a byte of the answer (a header line) arrived
  bool delivered = false;  // a body byte reached the caller
  std::string error_body;  // of a non-2xx answer, bounded
  std::string content_type;
  std::optional<std::chrono::milliseconds> retry_after;
  std::optional<bool> should_retry;  // x-should-retry, when sent
  SteadyClock::time_point last_byte;
  SteadyClock::time_point completed_at;  // when the receiver said complete()
  Interrupt interrupt = Interrupt::kNone;
  Status handler_status;
};

std::optional<long> parse_count(std::string_view v) {
  if (v.empty() || v.size() > 9) return std::nullopt;
  long n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

size_t on_header(char* data, size_t size, size_t nitems, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t n = size * nitems;
  a->last_byte = SteadyClock::now();
  a->answered = true;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue, say)
    a->content_type.clear();
    a->retry_after.reset();
    a->should_retry.reset();
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string_view name = trim(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "content-type")) {
    a->content_type = value;
  } else if (iequals(name, "retry-after")) {
    if (auto d = parse_retry_after(value, std::chrono::system_clock::now()); d && !a->retry_after) {
      a->retry_after = *d;
    }
  } else if (iequals(name, "retry-after-ms")) {
    if (auto ms = parse_count(value)) a->retry_after = std::chrono::milliseconds(*ms);
  } else if (iequals(name, "x-should-retry")) {
    if (iequals(value, "true")) a->should_retry = true;
    if (iequals(value, "false")) a->should_retry = false;
  }
  return n;
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t n = size * nmemb;
  a->last_byte = SteadyClock::now();
  if (a->status == 0) a->lib->easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &a->status);
  if (a->status >= 200 && a->status < 300) {
    if (a->interrupt == Interrupt::kComplete) return n;  // after the whole answer: ignored
    a->delivered = true;
    Status st = a->receiver->on_body(std::string_view(data, n));
    if (!st.ok()) {
      a->handler_status = std::move(st);
      a->interrupt = Interrupt::kHandler;
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
    }
    if (a->receiver->complete()) {
      // The answer is whole: whatever the server sends after it, or however long it keeps
      // the body open, changes nothing. The transfer goes on for kCompletionGrace only.
      a->interrupt = Interrupt::kComplete;
      a->completed_at = a->last_byte;
    }
    return n;
  }
  if (a->error_body.size() < kMaxErrorBody) {
    a->error_body.append(data, std::min(n, kMaxErrorBody - a->error_body.size()));
  }
  return n;
}

std::string seconds(double s) { return fmt::format("{:g} s", s); }

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

// The result of one attempt, as the retry loop sees it.
struct Outcome {
  Status status;           // ok: a 2xx answer delivered whole
  bool retryable = false;  // a failure worth another attempt
  bool delivered = false;  // body bytes reached the receiver
  // The transfer ended cleanly: its handles, and the connection they keep, may serve the
  // next request.
  bool reusable = false;
  // The connection was one kept from an earlier request and it broke before any byte of the
  // answer arrived: the server closed it while it sat idle.
  bool stale_connection = false;
  std::optional<std::chrono::milliseconds> retry_after;
  HttpReply reply;
};

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

// One attempt on `handles`, whose options are all set again here: a handle kept from an
// earlier request carries that request's settings. `fresh_connection` refuses a kept one.
Outcome attempt_once(const Libcurl& lib, const HttpOptions& opt, const HttpRequest& req,
                     curl_slist* headers, BodyReceiver& receiver, CurlHandles& handles,
                     bool fresh_connection) {
  Outcome out;
  Attempt a;
  a.lib = &lib;
  a.easy = handles.easy();
  a.receiver = &receiver;
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
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &a);
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &a);
  lib.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
  lib.easy_setopt(h, CURLOPT_FRESH_CONNECT, fresh_connection ? 1L : 0L);
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::max(1.0, opt.connect_timeout_s * 1000)));
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  lib.easy_setopt(h, CURLOPT_USERAGENT, "mecha/0.1");
  // Loopback servers (llama-server, tests) are never reached through a proxy.
  lib.easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");

  const auto stall = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(opt.stall_timeout_s));
  const auto deadline =
      SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                               std::chrono::duration<double>(opt.request_timeout_s));
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
  out.retry_after = a.retry_after;
  out.delivered = a.delivered;
  // libcurl keeps the connection of a transfer that ended cleanly, and closes any other.
  out.reusable = finished && code == CURLE_OK;

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
      out.retryable = receiver.transient();
      return out;
    case Interrupt::kComplete:
      out.reply.status = a.status;
      out.reply.content_type = a.content_type;
      return out;
    case Interrupt::kNone:
      break;
  }
  if (code != CURLE_OK) {
    std::string detail = curl_error[0] != '\0' ? curl_error : lib.easy_strerror(code);
    if (a.delivered) {
      out.status = Status::error(
          fmt::format("POST {}: the connection broke mid-stream: {}", req.url, detail));
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
      out.status = Status::error(
          fmt::format("POST {}: connect timeout: no connection within {} (connect_timeout)",
                      req.url, seconds(opt.connect_timeout_s)));
    } else {
      out.status = Status::error(fmt::format("POST {}: {}", req.url, detail));
    }
    out.retryable = is_connection_failure(code);
    return out;
  }
  if (a.status >= 200 && a.status < 300) {
    out.reply.status = a.status;
    out.reply.content_type = a.content_type;
    out.status = receiver.on_end(out.reply);
    out.retryable = !out.status.ok() && receiver.transient();
    return out;
  }
  std::string message = api_error_message(a.error_body);
  out.status = Status::error(
      fmt::format("POST {}: HTTP {}{}{}", req.url, a.status, message.empty() ? "" : ": ", message));
  out.retryable = a.status == 408 || a.status == 429 || (a.status >= 500 && a.status < 600);
  if (a.should_retry) out.retryable = *a.should_retry;
  return out;
}

std::chrono::milliseconds backoff(const HttpOptions& opt, int retry,
                                  std::optional<std::chrono::milliseconds> retry_after) {
  if (retry_after) return std::min(*retry_after, opt.max_retry_after);
  auto delay = opt.base_delay;
  for (int i = 1; i < retry && delay < opt.max_delay; ++i) delay *= 2;
  delay = std::min(delay, opt.max_delay);
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_int_distribution<int64_t> jitter(delay.count() / 2, delay.count());
  return std::chrono::milliseconds(jitter(rng));
}

// Sleeps for `delay`, waking early when the token is cancelled. False when cancelled.
bool sleep_unless_cancelled(std::chrono::milliseconds delay, const CancelToken* cancel) {
  const auto until = SteadyClock::now() + delay;
  for (;;) {
    if (cancel != nullptr && cancel->cancelled()) return false;
    const auto now = SteadyClock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<SteadyClock::duration>(until - now, kPollInterval));
  }
}

// "250 ms", "2.5 s", "45 s".
std::string delay_text(std::chrono::milliseconds d) {
  if (d < std::chrono::seconds(1)) return fmt::format("{} ms", d.count());
  if (d < std::chrono::seconds(10)) return fmt::format("{:.1f} s", d.count() / 1000.0);
  return fmt::format("{} s", (d.count() + 500) / 1000);
}

// A failure as a retry note gives it: without the "POST <url>: " every message starts with.
std::string reason_of(const Status& st, const std::string& url) {
  std::string_view m = st.message();
  const std::string prefix = "POST " + url + ": ";
  if (m.substr(0, prefix.size()) == prefix) m.remove_prefix(prefix.size());
  constexpr size_t kMaxReason = 200;
  if (m.size() > kMaxReason) return std::string(m.substr(0, kMaxReason)) + "...";
  return std::string(m);
}

// Adapts a BodyHandler: it cannot restart, so a failure after bytes reached it is final.
class HandlerReceiver final : public BodyReceiver {
 public:
  explicit HandlerReceiver(const BodyHandler& handler) : handler_(handler) {}
  Status on_body(std::string_view piece) override { return handler_(piece); }

 private:
  const BodyHandler& handler_;
};

}  // namespace

HttpClient::HttpClient(HttpOptions options)
    : options_(options), handles_(std::make_shared<CurlHandlePool>()) {}

size_t HttpClient::kept_handles() const { return handles_->idle(); }

Result<HttpReply> HttpClient::post(const HttpRequest& request, const BodyHandler& on_body) const {
  HandlerReceiver receiver(on_body);
  return post(request, receiver);
}

Result<HttpReply> HttpClient::post(const HttpRequest& request, BodyReceiver& receiver) const {
  auto loaded = libcurl();
  if (!loaded.ok()) {
    return Status::error(fmt::format("POST {}: {}", request.url, loaded.status().message()));
  }
  const Libcurl& lib = **loaded;
  curl_slist* raw = nullptr;
  for (const auto& h : request.headers) raw = lib.slist_append(raw, h.c_str());
  // No "Expect: 100-continue" round trip for large bodies.
  raw = lib.slist_append(raw, "Expect:");
  HeaderList headers = own_list(lib, raw);

  const int retries_allowed = std::max(0, options_.max_retries);
  const int attempts_allowed = 1 + retries_allowed;
  Outcome last;
  bool fresh_connection = false;  // the next attempt refuses a kept connection
  bool stale_retried = false;     // the one transparent retry of a stale connection is spent
  for (int attempt = 1; attempt <= attempts_allowed; ++attempt) {
    if (request.cancel != nullptr && request.cancel->cancelled()) {
      return Status::cancelled(fmt::format("POST {}: cancelled", request.url));
    }
    std::unique_ptr<CurlHandles> handles = handles_->take(lib);
    if (!handles) {
      return Status::error(fmt::format("POST {}: cannot create a libcurl handle", request.url));
    }
    last =
        attempt_once(lib, options_, request, headers.get(), receiver, *handles, fresh_connection);
    fresh_connection = false;
    if (last.reusable) handles_->give_back(std::move(handles));
    if (last.status.ok()) {
      last.reply.attempts = attempt;
      return last.reply;
    }
    if (last.status.kind() == ErrorKind::kCancelled) return last.status;
    if (last.stale_connection && !stale_retried) {
      // The server closed a kept connection as the request went out on it: nothing of the
      // answer came, so the request is sent again at once on a new connection. This is the
      // connection's failure, not the server's: no note, no backoff, no attempt counted.
      // libcurl does the same itself, but five times in the life of an easy handle, and
      // these handles are kept for the life of the client.
      stale_retried = true;
      fresh_connection = true;
      --attempt;
      continue;
    }
    if (!last.retryable) return last.status;
    if (attempt == attempts_allowed) break;
    std::string caveat;
    if (last.delivered) {
      caveat = receiver.retry_caveat();
      if (!receiver.restart()) return last.status;  // what was delivered cannot be taken back
    }
    const auto delay = backoff(options_, attempt, last.retry_after);
    if (request.on_retry) {
      request.on_retry(fmt::format("retrying in {} (attempt {} of {}: {}){}", delay_text(delay),
                                   attempt, retries_allowed, reason_of(last.status, request.url),
                                   caveat.empty() ? "" : "; " + caveat));
    }
    if (!sleep_unless_cancelled(delay, request.cancel)) {
      return Status::cancelled(fmt::format("POST {}: cancelled", request.url));
    }
  }
  if (attempts_allowed == 1) return last.status;
  return Status::error(
      fmt::format("{} (gave up after {} attempts)", last.status.message(), attempts_allowed));
}

std::string api_error_message(std::string_view body) {
  std::string_view t = trim(body);
  if (t.empty()) return "";
  auto j = parse_json(t, "error body");
  if (j.ok() && j->is_object()) {
    const Json* err = j->contains("error") ? &(*j)["error"] : nullptr;
    if (err != nullptr && err->is_object()) {
      std::string msg, type;
      if (err->contains("message") && (*err)["message"].is_string()) {
        msg = (*err)["message"].get<std::string>();
      }
      if (err->contains("type") && (*err)["type"].is_string()) {
        type = (*err)["type"].get<std::string>();
      }
      if (!msg.empty()) return type.empty() ? msg : fmt::format("{} ({})", msg, type);
    } else if (err != nullptr && err->is_string()) {
      return err->get<std::string>();  // Ollama: {"error":"model not found"}
    }
    if (j->contains("message") && (*j)["message"].is_string()) {
      return (*j)["message"].get<std::string>();
    }
  }
  constexpr size_t kMaxQuote = 300;
  if (t.size() <= kMaxQuote) return std::string(t);
  return fmt::format("{}... ({} bytes)", t.substr(0, kMaxQuote), t.size());
}

std::string api_error_type(std::string_view body) {
  auto j = parse_json(trim(body), "error body");
  if (!j.ok() || !j->is_object()) return "";
  auto err = j->find("error");
  if (err == j->end() || !err->is_object()) return "";
  auto type = err->find("type");
  return type != err->end() && type->is_string() ? type->get<std::string>() : "";
}

bool is_transient_api_error(std::string_view type) {
  return type == "overloaded_error" || type == "api_error" || type == "rate_limit_error" ||
         type == "server_error";
}

std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now) {
  value = trim(value);
  if (auto s = parse_count(value)) return std::chrono::seconds(*s);
  // The three date forms HTTP allows; all are GMT.
  const std::string text(value);
  for (const char* format :
       {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"}) {
    std::tm tm{};
    const char* end = strptime(text.c_str(), format, &tm);
    if (end == nullptr || *end != '\0') continue;
    const std::time_t at = timegm(&tm);
    if (at == static_cast<std::time_t>(-1)) return std::nullopt;
    const auto when = std::chrono::system_clock::from_time_t(at);
    if (when <= now) return std::chrono::milliseconds(0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(when - now);
  }
  return std::nullopt;
}

}  // namespace mecha::providers
