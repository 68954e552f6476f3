#include "tools/mcp/http_exchange.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include <fmt/format.h>

#include "base/text.h"
#include "providers/libcurl.h"

namespace mecha::mcp {
namespace {

using SteadyClock = std::chrono::steady_clock;
using providers::Libcurl;
constexpr size_t kMaxErrorBody = 64 << 10;

struct Transfer {
  const HttpExchange* exchange = nullptr;
  const Libcurl* lib = nullptr;
  CURL* easy = nullptr;
  HttpAnswer answer;
  bool headers_done = false;
  Status failed;  // from a callback
  SteadyClock::time_point last_byte = SteadyClock::now();
};

// The headers of the final answer are in: tells the caller. False when it refused them.
bool headers_complete(Transfer* t) {
  t->headers_done = true;
  t->lib->easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->answer.status);
  if (!t->exchange->on_headers) return true;
  Status st =
      t->exchange->on_headers(t->answer.status, t->answer.content_type, t->answer.session_id);
  if (st.ok()) return true;
  t->failed = st;
  return false;
}

size_t on_header(char* data, size_t size, size_t nitems, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * nitems;
  t->last_byte = SteadyClock::now();
  std::string_view line(data, n);
  if (trim(line).empty()) {
    // The blank line after a block of headers: the answer's, unless it was a 1xx.
    long code = 0;
    t->lib->easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && !t->headers_done && !headers_complete(t)) return 0;
    return n;
  }
  if (line.rfind("HTTP/", 0) == 0) {
    t->answer.content_type.clear();
    t->answer.session_id.clear();
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string_view name = trim(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "content-type")) t->answer.content_type = value;
  if (iequals(name, "mcp-session-id")) t->answer.session_id = value;
  return n;
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * nmemb;
  t->last_byte = SteadyClock::now();
  if (!t->headers_done && !headers_complete(t)) return 0;
  if (t->answer.status >= 200 && t->answer.status < 300) {
    if (!t->exchange->on_body) return n;
    Status st = t->exchange->on_body(std::string_view(data, n));
    if (!st.ok()) {
      t->failed = st;
      return 0;
    }
    return n;
  }
  auto& body = t->answer.error_body;
  if (body.size() < kMaxErrorBody) body.append(data, std::min(n, kMaxErrorBody - body.size()));
  return n;
}

}  // namespace

Result<HttpAnswer> http_exchange(const HttpExchange& ex) {
  const std::string what = fmt::format("{} {}", ex.method, ex.url);
  auto loaded = providers::libcurl();
  if (!loaded.ok()) return Status::error(fmt::format("{}: {}", what, loaded.message()));
  const Libcurl& lib = **loaded;
  providers::EasyHandle easy = providers::new_easy(lib);
  providers::MultiHandle multi = providers::new_multi(lib);
  if (!easy || !multi)
    return Status::error(fmt::format("{}: cannot create a libcurl handle", what));
  curl_slist* raw = nullptr;
  for (const auto& h : ex.headers) raw = lib.slist_append(raw, h.c_str());
  raw = lib.slist_append(raw, "Expect:");
  providers::HeaderList headers = providers::own_list(lib, raw);

  Transfer t;
  t.exchange = &ex;
  t.lib = &lib;
  t.easy = easy.get();
  char curl_error[CURL_ERROR_SIZE] = {0};
  CURL* h = easy.get();
  lib.easy_setopt(h, CURLOPT_URL, ex.url.c_str());
  if (ex.method == "POST") {
    lib.easy_setopt(h, CURLOPT_POST, 1L);
    lib.easy_setopt(h, CURLOPT_POSTFIELDS, ex.body.data());
    lib.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(ex.body.size()));
  } else if (ex.method != "GET") {
    lib.easy_setopt(h, CURLOPT_CUSTOMREQUEST, ex.method.c_str());
  }
  lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &t);
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &t);
  lib.easy_setopt(h, CURLOPT_ERRORBUFFER, curl_error);
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::max<int64_t>(1, ex.connect_timeout.count())));
  if (ex.total_timeout.count() > 0) {
    lib.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(ex.total_timeout.count()));
  }
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_USERAGENT, "mecha/0.1");
  lib.easy_setopt(h, CURLOPT_NOPROXY, providers::no_proxy_list().c_str());

  CURLcode code = CURLE_OK;
  bool cancelled = false, stalled = false;
  lib.multi_add_handle(multi.get(), h);
  for (;;) {
    int running = 0;
    CURLMcode mc = lib.multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      lib.multi_remove_handle(multi.get(), h);
      return Status::error(fmt::format("{}: libcurl failed: {}", what, lib.multi_strerror(mc)));
    }
    if (running == 0) {
      int left = 0;
      while (CURLMsg* msg = lib.multi_info_read(multi.get(), &left)) {
        if (msg->msg == CURLMSG_DONE) code = msg->data.result;
      }
      break;
    }
    if (ex.cancel != nullptr && ex.cancel->cancelled()) {
      cancelled = true;
      break;
    }
    if (ex.stall_timeout.count() > 0 && t.headers_done &&
        SteadyClock::now() - t.last_byte > ex.stall_timeout) {
      stalled = true;
      break;
    }
    lib.multi_poll(multi.get(), nullptr, 0, 50, nullptr);
  }
  lib.multi_remove_handle(multi.get(), h);
  if (cancelled) return Status::cancelled(fmt::format("{}: cancelled", what));
  if (stalled) {
    return Status::error(
        fmt::format("{}: no bytes from the server for {} ms", what, ex.stall_timeout.count()));
  }
  if (!t.failed.ok()) return t.failed;
  if (code != CURLE_OK) {
    return Status::error(
        fmt::format("{}: {}", what, curl_error[0] != '\0' ? curl_error : lib.easy_strerror(code)));
  }
  if (t.answer.status == 0) lib.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.answer.status);
  if (!t.headers_done && ex.on_headers) {
    // An answer without a body (202 Accepted) still has headers.
    MECHA_RETURN_IF_ERROR(
        ex.on_headers(t.answer.status, t.answer.content_type, t.answer.session_id));
  }
  return t.answer;
}

}  // namespace mecha::mcp
