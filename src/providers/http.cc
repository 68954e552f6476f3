#include "providers/http.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "base/strict_json.h"
#include "base/text.h"
#include "providers/curl_attempt.h"
#include "providers/curl_handle_pool.h"
#include "providers/http_attempt.h"
#include "providers/libcurl.h"
#include "providers/plain_http.h"

namespace mecha::providers {
namespace {

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

// The retry loop of promises 4 and 9 around one transport's attempts.
Result<HttpReply> post_with(const HttpOptions& options, const HttpRequest& request,
                            BodyReceiver& receiver,
                            const std::function<Outcome(bool fresh_connection)>& attempt_once) {
  const int retries_allowed = std::max(0, options.max_retries);
  const int attempts_allowed = 1 + retries_allowed;
  Outcome last;
  bool fresh_connection = false;  // the next attempt refuses a kept connection
  bool stale_retried = false;     // the one transparent retry of a stale connection is spent
  for (int attempt = 1; attempt <= attempts_allowed; ++attempt) {
    if (request.cancel != nullptr && request.cancel->cancelled()) {
      return Status::cancelled(fmt::format("POST {}: cancelled", request.url));
    }
    last = attempt_once(fresh_connection);
    fresh_connection = false;
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
      // its handles are kept for the life of the client.
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
    const auto delay = backoff(options, attempt, last.retry_after);
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

}  // namespace

HttpClient::HttpClient(HttpOptions options)
    : options_(options),
      handles_(std::make_shared<CurlHandlePool>()),
      plain_(std::make_shared<PlainConnectionPool>()) {}

size_t HttpClient::kept_handles() const { return handles_->idle() + plain_->idle(); }

Result<HttpReply> HttpClient::post(const HttpRequest& request, const BodyHandler& on_body) const {
  HandlerReceiver receiver(on_body);
  return post(request, receiver);
}

Result<HttpReply> HttpClient::post(const HttpRequest& request, BodyReceiver& receiver) const {
  const bool is_http = request.url.rfind("http://", 0) == 0;
  const bool plain =
      options_.transport == HttpTransport::kPlain ||
      (options_.transport == HttpTransport::kAuto && is_http && plain_transport_fits(request.url));
  if (plain) {
    if (!is_http) {
      return Status::error(fmt::format(
          "POST {}: the plain HTTP transport serves http:// URLs only; https:// needs libcurl",
          request.url));
    }
    return post_with(options_, request, receiver, [&](bool fresh_connection) {
      return plain_attempt(options_, request, receiver, *plain_, fresh_connection);
    });
  }
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
  return post_with(options_, request, receiver, [&](bool fresh_connection) {
    std::unique_ptr<CurlHandles> handles = handles_->take(lib);
    if (!handles) {
      Outcome out;
      out.status =
          Status::error(fmt::format("POST {}: cannot create a libcurl handle", request.url));
      return out;
    }
    Outcome out =
        curl_attempt(lib, options_, request, headers.get(), receiver, *handles, fresh_connection);
    if (out.reusable) handles_->give_back(std::move(handles));
    return out;
  });
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
