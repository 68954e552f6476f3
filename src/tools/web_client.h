// WebClient: one HTTP GET for the web tools, with the limits a fetched URL needs when the
// model chose it.
//
// Promises:
//  1. Only http:// and https:// are fetched, at the first URL and at every redirect; no proxy
//     is taken from the environment (a proxy would do its own resolving, past the check).
//  2. Before each connection the host is resolved and every address checked
//     (tools/web_address.h) unless Options::check_addresses is false; the connection is then
//     pinned to the checked addresses (CURLOPT_RESOLVE), so a second DNS answer cannot swap
//     in another one (DNS rebinding).
//  3. Redirects are followed here, not by libcurl, each one checked as in 2, up to
//     Limits::max_redirects; one more is an error naming the limit and the config key. Each
//     hop is first put to Options::before_redirect, whose error ends the fetch before any
//     lookup or connection of that hop (a URL with credentials is refused the same way).
//  4. At most Limits::max_bytes of body are kept; the rest is not read, and the page says it
//     was cut. The whole fetch, redirects included, ends within Limits::timeout_s, or it is an
//     error naming the timeout and its key.
//  5. The CancelToken is polled while the transfer runs; a cancelled fetch returns
//     Status::cancelled.
// Errors name the URL. The body of a non-2xx answer is returned like any other; the caller
// decides.
//
// Thread-safe: get() uses its own handles.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"
#include "tools/web_address.h"

namespace mecha::tools {

inline constexpr const char* kWebUserAgent = "mecha/0.1.0";

// The parts of a URL as libcurl reads them, which is how it will connect.
struct WebUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // lowercase; an IPv6 address in brackets; numeric IPv4 forms normalised
  int port = 0;        // the scheme's default when the URL names none
  bool has_credentials = false;  // a user or password part ("https://user@host/")
};

// Reads `url`: an error when it is not an absolute http:// or https:// URL, naming what was
// wrong. Loads libcurl on first use.
Result<WebUrl> parse_web_url(const std::string& url);

struct WebPage {
  std::string url;                     // the last URL fetched, after redirects
  std::vector<std::string> redirects;  // the URLs that redirected, in order
  long status = 0;                     // the HTTP status of the last answer
  std::string content_type;            // its Content-Type header, as sent ("" if none)
  std::string body;
  bool truncated = false;  // the body was longer than max_bytes and was cut there
};

class WebClient {
 public:
  struct Options {
    int64_t max_bytes = 10 << 20;
    double timeout_s = 30;
    int max_redirects = 5;
    // False only for a URL the user configured (a search backend): it is fetched wherever it
    // points, and not redirected.
    bool check_addresses = true;
    bool allow_private = false;
    AddressClassifier classify = classify_address;
    // Asked before each redirect is followed, with its absolute URL: the caller's rules for
    // a request it did not choose (ToolContext::follow_up). Empty: every hop may go.
    std::function<Status(const std::string& url)> before_redirect = nullptr;
  };

  explicit WebClient(Options options) : options_(std::move(options)) {}

  // GETs `url` with the extra `headers` ("Name: value").
  Result<WebPage> get(const std::string& url, const std::vector<std::string>& headers,
                      const CancelToken& cancel) const;

 private:
  Options options_;
};

}  // namespace mecha::tools
