// Access: who may use the gateway, and which requests may change anything.
//
// The gateway prints a secret token when it starts (or reads it from --token-file). A
// browser shows it once, in the login URL (/login?token=...), and gets a cookie in return:
// a fresh random value, HttpOnly and SameSite=Strict, that every later request must carry
// (a script may send the token itself, as "Authorization: Bearer TOKEN"). A request that
// changes anything (every POST) must also come from the page itself: it carries the page's
// CSRF token in X-CSRF-Token, and its Origin (when the browser sends one) and
// Sec-Fetch-Site must name this gateway. A gateway on loopback also checks the Host header,
// so a hostile web page cannot reach it through a DNS name rebound to 127.0.0.1.
// Secrets are compared in constant time. Thread-safe.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace mecha::gateway {

// 32 random bytes from the kernel, as 64 hex digits.
std::string random_secret();

struct AccessOptions {
  std::string token;            // REQUIRES: not empty
  bool secure_cookie = false;   // served over TLS: the cookie says Secure
  std::set<std::string> hosts;  // Host headers accepted; empty: any
};

class Access {
 public:
  explicit Access(AccessOptions options);

  const std::string& token() const { return options_.token; }
  const std::string& csrf_token() const { return csrf_; }
  static constexpr std::string_view kCookieName = "mecha_gateway";

  // The Set-Cookie value for a browser that showed the token, or nullopt for a wrong one.
  std::optional<std::string> login(std::string_view token);
  // Why a request may not be served (its Host, or no valid cookie or bearer token), or
  // nullopt. Arguments are the headers' values ("" when absent).
  std::optional<std::string> refuse_reader(std::string_view host, std::string_view cookie,
                                           std::string_view authorization) const;
  // True when `authorization` is "Bearer TOKEN" with the right token: a script, not a
  // browser (a browser never adds the header to a cross-site request by itself), so such a
  // request needs no CSRF token.
  bool bearer(std::string_view authorization) const;
  // Why a state-changing request is refused as cross-site, or nullopt. `origin_expected` is
  // the scheme and host the page was served from ("http://127.0.0.1:8080").
  std::optional<std::string> refuse_writer(std::string_view origin, std::string_view fetch_site,
                                           std::string_view csrf,
                                           std::string_view origin_expected) const;

 private:
  bool valid_cookie(std::string_view cookie_header) const;

  const AccessOptions options_;
  const std::string csrf_ = random_secret();
  mutable std::mutex mu_;
  std::set<std::string> cookies_;    // GUARDED_BY(mu_)
  std::deque<std::string> granted_;  // GUARDED_BY(mu_): oldest first, to forget past a bound
};

// a == b, in time that depends on their lengths only.
bool same_secret(std::string_view a, std::string_view b);

}  // namespace mecha::gateway
