#include "store/postgres_url.h"

namespace mecha::store {
namespace {

constexpr std::string_view kHidden = "***";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; a malformed escape is kept as written.
std::string percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool is_postgres_url(std::string_view spec) {
  return spec.starts_with("postgresql://") || spec.starts_with("postgres://");
}

std::string shown_store(std::string_view spec) {
  return is_postgres_url(spec) ? PostgresUrl(spec).redacted() : std::string(spec);
}

PostgresUrl::PostgresUrl(std::string_view url) : url_(url) {
  std::string out(url);
  auto hide = [&](size_t begin, size_t end) {
    if (end <= begin) return;
    std::string secret = out.substr(begin, end - begin);
    secrets_.push_back(secret);
    if (std::string decoded = percent_decoded(secret); decoded != secret) {
      secrets_.push_back(decoded);
    }
    out.replace(begin, end - begin, kHidden);
  };
  // As libpq reads it: the user part ends at the first '@' before any '/', and a password
  // in it follows its first ':'.
  size_t user_begin = std::string::npos, password = std::string::npos, at = std::string::npos;
  if (size_t scheme = out.find("://"); scheme != std::string::npos) {
    user_begin = scheme + 3;
    at = out.find_first_of("@/", user_begin);
    if (at != std::string::npos && out[at] == '@') {
      password = out.find(':', user_begin);
      if (password > at) password = std::string::npos;
    } else {
      at = std::string::npos;
    }
  }
  // The parameters first, so the positions of the user part stay valid.
  const size_t host_begin = at != std::string::npos ? at + 1 : 0;
  if (size_t query = out.find('?', host_begin); query != std::string::npos) {
    size_t pos = query + 1;
    while (pos < out.size()) {
      size_t amp = out.find('&', pos);
      if (amp == std::string::npos) amp = out.size();
      if (std::string_view(out).substr(pos, amp - pos).starts_with("password=")) {
        const size_t value = pos + std::string_view("password=").size();
        hide(value, amp);
        amp = value + kHidden.size();
      }
      pos = amp + 1;
    }
  }
  if (password != std::string::npos) hide(password + 1, at);
  redacted_ = std::move(out);
}

std::string PostgresUrl::scrub(std::string message) const {
  for (const std::string& secret : secrets_) {
    for (size_t at = message.find(secret); at != std::string::npos;
         at = message.find(secret, at + kHidden.size())) {
      message.replace(at, secret.size(), kHidden);
    }
  }
  return message;
}

}  // namespace mecha::store
