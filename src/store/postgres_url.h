// What `--store` names when it is not a SQLite file: a PostgreSQL connection URL, as libpq
// reads it (postgresql://[user[:password]@][host][:port][/dbname][?param=value&...]).
//
// A URL may carry a password, and it is never printed: messages name the store by
// redacted() and pass libpq's own messages through scrub().
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mecha::store {

// True for "postgresql://..." and "postgres://...".
bool is_postgres_url(std::string_view spec);

// How messages name the store `spec`: a URL redacted, a path as it is.
std::string shown_store(std::string_view spec);

class PostgresUrl {
 public:
  explicit PostgresUrl(std::string_view url);

  const std::string& url() const { return url_; }
  // The URL with its password (in the user part, or a password= parameter) replaced by
  // "***": what messages call the store.
  const std::string& redacted() const { return redacted_; }
  // `message` with every appearance of the password, as written or percent-decoded,
  // replaced by "***" (libpq quotes a token it cannot decode).
  std::string scrub(std::string message) const;

 private:
  std::string url_;
  std::string redacted_;
  std::vector<std::string> secrets_;  // the password as written, and decoded when different
};

}  // namespace mecha::store
