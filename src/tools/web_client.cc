#include "tools/web_client.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <optional>

#include "base/text.h"
#include "providers/libcurl.h"

namespace mecha::tools {
namespace {

using providers::Libcurl;
using Clock = std::chrono::steady_clock;

// A CURLU handle and the strings it hands out, freed with the table's functions.
class CurlUrl {
 public:
  explicit CurlUrl(const Libcurl& lib) : lib_(lib), u_(lib.url()) {}
  ~CurlUrl() {
    if (u_ != nullptr) lib_.url_cleanup(u_);
  }
  CurlUrl(const CurlUrl&) = delete;
  CurlUrl& operator=(const CurlUrl&) = delete;

  CURLU* get() const { return u_; }
  // The part, or nullopt when the URL has none.
  std::optional<std::string> part(CURLUPart what, unsigned flags = 0) const {
    char* out = nullptr;
    if (lib_.url_get(u_, what, &out, flags) != CURLUE_OK || out == nullptr) return std::nullopt;
    std::string s(out);
    lib_.free(out);
    return s;
  }

 private:
  const Libcurl& lib_;
  CURLU* u_;
};

struct Transfer {
  std::string body;
  int64_t max_bytes = 0;
  bool truncated = false;
  const CancelToken* cancel = nullptr;
  // The addresses a connection may go to (promise 2); empty: any.
  const std::vector<std::string>* allowed = nullptr;
  std::string refused_address;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * n;
  const auto room = static_cast<size_t>(std::max<int64_t>(0, t->max_bytes)) - t->body.size();
  if (bytes > room) {
    t->body.append(data, room);
    t->truncated = true;
    return 0;  // stops the transfer: CURLE_WRITE_ERROR
  }
  t->body.append(data, bytes);
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->cancel->cancelled() ? 1 : 0;
}

// The last check: whatever path libcurl took to an address, the socket is opened only to one
// that was checked.
curl_socket_t on_open_socket(void* user, curlsocktype, curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(user);
  if (t->allowed != nullptr) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = nullptr;
    if (addr->family == AF_INET) {
      where = &reinterpret_cast<const sockaddr_in*>(&addr->addr)->sin_addr;
    } else if (addr->family == AF_INET6) {
      where = &reinterpret_cast<const sockaddr_in6*>(&addr->addr)->sin6_addr;
    }
    if (where == nullptr || inet_ntop(addr->family, where, text, sizeof text) == nullptr ||
        std::find(t->allowed->begin(), t->allowed->end(), text) == t->allowed->end()) {
      t->refused_address = text[0] != '\0' ? text : "an unknown address";
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

Result<WebUrl> parse_web_url(const std::string& url) {
  auto lib = providers::libcurl();
  if (!lib) return lib.status();
  CurlUrl u(**lib);
  if (u.get() == nullptr) return Status::error("out of memory reading a URL");
  CURLUcode rc = (*lib)->url_set(u.get(), CURLUPART_URL, url.c_str(), 0);
  if (rc != CURLUE_OK) {
    return Status::error(
        fmt::format("'{}' is not a URL WebFetch can read ({}); give an absolute "
                    "http:// or https:// URL",
                    url, rc == CURLUE_BAD_SCHEME ? "unsupported scheme" : "malformed"));
  }
  WebUrl out;
  out.scheme = ascii_lower(u.part(CURLUPART_SCHEME).value_or(""));
  if (out.scheme != "http" && out.scheme != "https") {
    return Status::error(
        fmt::format("'{}' uses the scheme '{}': WebFetch reads only http:// and https:// URLs", url,
                    out.scheme));
  }
  // Punycode: the name DNS is asked for, so that the pinned entry is the one libcurl looks up.
  out.host = ascii_lower(u.part(CURLUPART_HOST, CURLU_PUNYCODE).value_or(""));
  while (out.host.ends_with('.')) out.host.pop_back();
  if (out.host.empty()) return Status::error(fmt::format("'{}' names no host", url));
  out.port = std::atoi(u.part(CURLUPART_PORT, CURLU_DEFAULT_PORT).value_or("0").c_str());
  out.has_credentials =
      u.part(CURLUPART_USER).has_value() || u.part(CURLUPART_PASSWORD).has_value();
  return out;
}

Result<WebPage> WebClient::get(const std::string& first_url,
                               const std::vector<std::string>& headers,
                               const CancelToken& cancel) const {
  auto loaded = providers::libcurl();
  if (!loaded) return loaded.status().prefixed(fmt::format("fetching {}", first_url));
  const Libcurl& lib = **loaded;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options_.timeout_s * 1000));
  const std::string timeout_message = fmt::format(
      "fetching {}: timed out after {:g} s ([web] timeout_s)", first_url, options_.timeout_s);

  providers::HeaderList header_list = providers::own_list(lib, nullptr);
  for (const std::string& h : headers) {
    curl_slist* next = lib.slist_append(header_list.get(), h.c_str());
    if (next == nullptr) return Status::error("out of memory building request headers");
    header_list.release();
    header_list.reset(next);
  }

  WebPage page;
  std::string url = first_url;
  for (int hop = 0;; ++hop) {
    if (cancel.cancelled()) return Status::cancelled();
    auto where = parse_web_url(url);
    if (!where) return where.status();
    std::vector<std::string> addresses;
    const bool checking = options_.check_addresses && !options_.allow_private;
    if (checking) {
      auto checked = checked_addresses(where->host, false, options_.classify);
      if (!checked) {
        return hop == 0 ? checked.status()
                        : checked.status().prefixed(
                              fmt::format("redirect {} of {} to {}", hop, first_url, url));
      }
      addresses = std::move(*checked);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status::error(timeout_message);

    providers::EasyHandle h = providers::new_easy(lib);
    if (!h) return Status::error("curl_easy_init failed");
    providers::HeaderList pin = providers::own_list(lib, nullptr);
    const bool numeric_host = addresses.size() == 1 && (addresses[0] == where->host ||
                                                        "[" + addresses[0] + "]" == where->host);
    if (checking && !numeric_host) {
      std::string entry = fmt::format("{}:{}:", where->host, where->port);
      for (size_t i = 0; i < addresses.size(); ++i) {
        if (i > 0) entry += ',';
        entry +=
            addresses[i].find(':') != std::string::npos ? "[" + addresses[i] + "]" : addresses[i];
      }
      pin.reset(lib.slist_append(nullptr, entry.c_str()));
      if (!pin) return Status::error("out of memory pinning an address");
    }

    Transfer t;
    t.max_bytes = options_.max_bytes;
    t.cancel = &cancel;
    t.allowed = checking ? &addresses : nullptr;
    char curl_error[CURL_ERROR_SIZE] = {};
    CURL* e = h.get();
    lib.easy_setopt(e, CURLOPT_URL, url.c_str());
    lib.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    lib.easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    lib.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    lib.easy_setopt(e, CURLOPT_PROXY, "");
    lib.easy_setopt(e, CURLOPT_NOPROXY, "*");
    if (pin) lib.easy_setopt(e, CURLOPT_RESOLVE, pin.get());
    lib.easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    lib.easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
    lib.easy_setopt(e, CURLOPT_HTTPHEADER, header_list.get());
    lib.easy_setopt(e, CURLOPT_USERAGENT, kWebUserAgent);
    lib.easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    lib.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    lib.easy_setopt(e, CURLOPT_WRITEDATA, &t);
    lib.easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    lib.easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    lib.easy_setopt(e, CURLOPT_XFERINFODATA, &t);
    lib.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    lib.easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
    lib.easy_setopt(e, CURLOPT_ERRORBUFFER, curl_error);

    CURLcode rc = lib.easy_perform(e);
    if (rc == CURLE_ABORTED_BY_CALLBACK && cancel.cancelled()) return Status::cancelled();
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status::error(timeout_message);
    if (!t.refused_address.empty()) {
      return Status::error(
          fmt::format("fetching {}: refused a connection to {}, an address "
                      "that was not checked for host '{}'",
                      url, t.refused_address, where->host));
    }
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.truncated)) {
      return Status::error(fmt::format("fetching {}: {}", url,
                                       curl_error[0] != '\0' ? curl_error : lib.easy_strerror(rc)));
    }
    long status = 0;
    lib.easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    char* location = nullptr;
    lib.easy_getinfo(e, CURLINFO_REDIRECT_URL, &location);
    if (is_redirect(status) && location != nullptr && options_.check_addresses) {
      if (hop >= options_.max_redirects) {
        return Status::error(fmt::format(
            "fetching {}: too many redirects (more than {}, [web] max_redirects); the last "
            "pointed to {}",
            first_url, options_.max_redirects, location));
      }
      page.redirects.push_back(url);
      url = location;
      auto next = parse_web_url(url);
      if (!next)
        return next.status().prefixed(fmt::format("redirect {} of {}", hop + 1, first_url));
      if (next->has_credentials) {
        return Status::error(
            fmt::format("redirect {} of {} to {}: it carries a user name or "
                        "password, which WebFetch does not send",
                        hop + 1, first_url, url));
      }
      if (options_.before_redirect) {
        MECHA_RETURN_IF_ERROR(options_.before_redirect(url).prefixed(
            fmt::format("redirect {} of {} to {}", hop + 1, first_url, url)));
      }
      continue;
    }
    char* type = nullptr;
    lib.easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type);
    page.url = url;
    page.status = status;
    page.content_type = type != nullptr ? type : "";
    page.body = std::move(t.body);
    page.truncated = t.truncated;
    return page;
  }
}

}  // namespace mecha::tools
