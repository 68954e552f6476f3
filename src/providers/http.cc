#include "providers/http.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "base/strict_json.h"
#include "providers/libcurl.h"

namespace mecha::providers {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr size_t kMaxErrorBody = 64 << 10;

struct EasyDeleter {
  const Libcurl* lib;
  void operator()(CURL* h) const { lib->easy_cleanup(h); }
};
struct MultiDeleter {
  const Libcurl* lib;
  void operator()(CURLM* h) const { lib->multi_cleanup(h); }
};
struct SlistDeleter {
  const Libcurl* lib;
  void operator()(curl_slist* l) const { lib->slist_free_all(l); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

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
enum class Interrupt { kNone, kCancelled, kStalled, kHandler };

// The state of one attempt, shared with the curl callbacks.
struct Attempt {
  const Libcurl* lib = nullptr;
  CURL* easy = nullptr;
  const BodyHandler* on_body = nullptr;
  long status = 0;
  bool delivered = false;  // a body byte reached the caller
  std::string error_body;  // of a non-2xx answer, bounded
  std::string content_type;
  std::optional<std::chrono::milliseconds> retry_after;
  SteadyClock::time_point last_byte;
  Interrupt interrupt = Interrupt::kNone;
  Status handler_status;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

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
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue, say)
    a->content_type.clear();
    a->retry_after.reset();
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string_view name = trim(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "content-type")) {
    a->content_type = value;
  } else if (iequals(name, "retry-after")) {
    // Only the seconds form; an HTTP date falls back to our own backoff.
    if (auto s = parse_count(value); s && !a->retry_after) {
      a->retry_after = std::chrono::seconds(*s);
    }
  } else if (iequals(name, "retry-after-ms")) {
    if (auto ms = parse_count(value)) a->retry_after = std::chrono::milliseconds(*ms);
  }
  return n;
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* a = static_cast<Attempt*>(user);
  const size_t n = size * nmemb;
  a->last_byte = SteadyClock::now();
  if (a->status == 0) a->lib->easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &a->status);
  if (a->status >= 200 && a->status < 300) {
    a->delivered = true;
    Status st = (*a->on_body)(std::string_view(data, n));
    if (!st.ok()) {
      a->handler_status = std::move(st);
      a->interrupt = Interrupt::kHandler;
      return 0;  // aborts the transfer with CURLE_WRITE_ERROR
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

// The result of one attempt, as the retry loop sees it.
struct Outcome {
  Status status;           // ok: a 2xx answer delivered whole
  bool retryable = false;  // a failure worth another attempt
  std::optional<std::chrono::milliseconds> retry_after;
  HttpReply reply;
};

Outcome attempt_once(const Libcurl& lib, const HttpOptions& opt, const HttpRequest& req,
                     curl_slist* headers, const BodyHandler& on_body) {
  Outcome out;
  EasyHandle easy(lib.easy_init(), EasyDeleter{&lib});
  MultiHandle multi(lib.multi_init(), MultiDeleter{&lib});
  if (!easy || !multi) {
    out.status = Status::error(fmt::format("POST {}: cannot create a libcurl handle", req.url));
    return out;
  }
  Attempt a;
  a.lib = &lib;
  a.easy = easy.get();
  a.on_body = &on_body;
  char curl_error[CURL_ERROR_SIZE] = {0};
  CURL* h = easy.get();
  lib.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  lib.easy_setopt(h, CURLOPT_POST, 1L);
  lib.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  lib.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &a);
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &a);
  lib.easy_setopt(h, CURLOPT_ERRORBUFFER, curl_error);
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::max(1.0, opt.connect_timeout_s * 1000)));
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  lib.easy_setopt(h, CURLOPT_USERAGENT, "mecha/0.1");
  // Loopback servers (llama-server, tests) are never reached through a proxy.
  lib.easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");

  const auto stall = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(opt.stall_timeout_s));
  bool connected = false;
  curl_off_t sent = 0;  // request body bytes sent so far
  CURLcode code = CURLE_OK;
  {
    MultiMembership member(lib, multi.get(), h);
    for (;;) {
      int running = 0;
      CURLMcode mc = lib.multi_perform(multi.get(), &running);
      if (mc != CURLM_OK) {
        out.status = Status::error(
            fmt::format("POST {}: libcurl failed: {}", req.url, lib.multi_strerror(mc)));
        return out;
      }
      if (a.interrupt == Interrupt::kHandler) break;
      if (running == 0) {
        int left = 0;
        while (CURLMsg* msg = lib.multi_info_read(multi.get(), &left)) {
          if (msg->msg == CURLMSG_DONE) code = msg->data.result;
        }
        break;
      }
      if (req.cancel != nullptr && req.cancel->cancelled()) {
        a.interrupt = Interrupt::kCancelled;
        break;
      }
      const auto now = SteadyClock::now();
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
      lib.multi_poll(multi.get(), nullptr, 0, static_cast<int>(kPollInterval.count()), nullptr);
    }
  }
  if (a.status == 0) lib.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  out.retry_after = a.retry_after;

  switch (a.interrupt) {
    case Interrupt::kCancelled:
      out.status = Status::cancelled(fmt::format("POST {}: cancelled", req.url));
      return out;
    case Interrupt::kStalled:
      out.status = Status::error(fmt::format(
          "POST {}: stall timeout: no bytes from the server for {} (stall_timeout){}", req.url,
          seconds(opt.stall_timeout_s),
          a.delivered ? ", the stream was cut short" : " while waiting for the answer"));
      return out;
    case Interrupt::kHandler:
      out.status = a.handler_status;
      return out;
    case Interrupt::kNone:
      break;
  }
  if (code != CURLE_OK) {
    std::string detail = curl_error[0] != '\0' ? curl_error : lib.easy_strerror(code);
    if (a.delivered) {
      out.status = Status::error(
          fmt::format("POST {}: the connection broke mid-stream: {}", req.url, detail));
      return out;
    }
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
    return out;
  }
  std::string message = api_error_message(a.error_body);
  out.status = Status::error(
      fmt::format("POST {}: HTTP {}{}{}", req.url, a.status, message.empty() ? "" : ": ", message));
  out.retryable = a.status == 408 || a.status == 429 || (a.status >= 500 && a.status < 600);
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

}  // namespace

HttpClient::HttpClient(HttpOptions options) : options_(options) {}

Result<HttpReply> HttpClient::post(const HttpRequest& request, const BodyHandler& on_body) const {
  auto loaded = libcurl();
  if (!loaded.ok()) {
    return Status::error(fmt::format("POST {}: {}", request.url, loaded.status().message()));
  }
  const Libcurl& lib = **loaded;
  curl_slist* raw = nullptr;
  for (const auto& h : request.headers) raw = lib.slist_append(raw, h.c_str());
  // No "Expect: 100-continue" round trip for large bodies.
  raw = lib.slist_append(raw, "Expect:");
  HeaderList headers(raw, SlistDeleter{&lib});

  const int attempts_allowed = 1 + std::max(0, options_.max_retries);
  Outcome last;
  for (int attempt = 1; attempt <= attempts_allowed; ++attempt) {
    if (request.cancel != nullptr && request.cancel->cancelled()) {
      return Status::cancelled(fmt::format("POST {}: cancelled", request.url));
    }
    last = attempt_once(lib, options_, request, headers.get(), on_body);
    if (last.status.ok()) {
      last.reply.attempts = attempt;
      return last.reply;
    }
    if (!last.retryable) return last.status;
    if (attempt == attempts_allowed) break;
    if (!sleep_unless_cancelled(backoff(options_, attempt, last.retry_after), request.cancel)) {
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

}  // namespace mecha::providers
