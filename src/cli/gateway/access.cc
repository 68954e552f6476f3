#include "cli/gateway/access.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace mecha::gateway {
namespace {

// Browsers logged in at once that the gateway remembers; the oldest is forgotten past it.
constexpr size_t kMaxCookies = 1024;

}  // namespace

std::string random_secret() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // No randomness means no secret worth the name: never serve with a guessable one.
      std::fputs("mecha gateway: the kernel gave no random bytes (getrandom)\n", stderr);
      std::abort();
    }
    got += static_cast<size_t>(n);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

Access::Access(AccessOptions options) : options_(std::move(options)) {}

std::optional<std::string> Access::login(std::string_view token) {
  if (!same_secret(token, options_.token)) return std::nullopt;
  std::string value = random_secret();
  {
    std::lock_guard<std::mutex> lock(mu_);
    cookies_.insert(value);
    granted_.push_back(value);
    while (granted_.size() > kMaxCookies) {
      cookies_.erase(granted_.front());
      granted_.pop_front();
    }
  }
  return fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict{}", kCookieName, value,
                     options_.secure_cookie ? "; Secure" : "");
}

bool Access::valid_cookie(std::string_view header) const {
  // "a=1; mecha_gateway=v; b=2": every cookie of that name is tried.
  while (!header.empty()) {
    size_t end = header.find(';');
    std::string_view part = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (!part.starts_with(kCookieName) || part.size() <= kCookieName.size() ||
        part[kCookieName.size()] != '=') {
      continue;
    }
    std::string value(part.substr(kCookieName.size() + 1));
    std::lock_guard<std::mutex> lock(mu_);
    // The set's lookup compares early-out, but the value is 256 random bits: timing tells
    // an attacker nothing they could use to guess one.
    if (cookies_.count(value)) return true;
  }
  return false;
}

std::optional<std::string> Access::refuse_reader(std::string_view host, std::string_view cookie,
                                                 std::string_view authorization) const {
  if (!options_.hosts.empty() && !options_.hosts.count(std::string(host))) {
    return fmt::format("the Host header \"{}\" is not this gateway's address", host.substr(0, 100));
  }
  if (bearer(authorization)) return std::nullopt;
  if (valid_cookie(cookie)) return std::nullopt;
  return std::string(
      "not logged in: open the login URL mecha gateway printed when it started "
      "(/login?token=...)");
}

bool Access::bearer(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  return authorization.starts_with(kBearer) &&
         same_secret(authorization.substr(kBearer.size()), options_.token);
}

std::optional<std::string> Access::refuse_writer(std::string_view origin,
                                                 std::string_view fetch_site, std::string_view csrf,
                                                 std::string_view origin_expected) const {
  if (!origin.empty() && origin != origin_expected) {
    return fmt::format("cross-site request refused: it came from {}, not from this gateway's page",
                       origin.substr(0, 200));
  }
  if (!fetch_site.empty() && fetch_site != "same-origin" && fetch_site != "none") {
    return fmt::format("cross-site request refused: the browser says it is {}",
                       fetch_site.substr(0, 50));
  }
  if (!same_secret(csrf, csrf_)) {
    return std::string(
        "request refused: it lacks the page's CSRF token (X-CSRF-Token), so it did not come "
        "from the gateway's page");
  }
  return std::nullopt;
}

}  // namespace mecha::gateway
