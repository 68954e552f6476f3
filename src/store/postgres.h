// RAII wrappers over libpq (store/libpq.h): a connection (PgConnection) and a query's result
// (PgResult). Errors come back as Status values that name the statement and PostgreSQL's own
// message, with the URL's password scrubbed from anything libpq says.
//
// Every value travels as a parameter, in text form, never spliced into the SQL. A connection
// prepares each SQL text it is asked to run() once (a server-side prepared statement) and runs
// the prepared one on every later call, as the SQLite wrapper's prepare_cached() does.
//
// Thread-safety: none. A PgConnection belongs to one thread at a time (the owner guards it);
// separate connections may be used from separate threads and processes at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "store/libpq.h"
#include "store/postgres_url.h"

namespace mecha::store {

// The parameters of a statement ($1, $2, ...), as text; nullopt is SQL NULL.
class PgParams {
 public:
  PgParams& add(std::string_view text);
  // Without this, a string literal would take the bool overload.
  PgParams& add(const char* text) { return add(std::string_view(text)); }
  PgParams& add(int64_t value);
  PgParams& add(double value);
  PgParams& add(bool value);
  PgParams& add_null();
  const std::vector<std::optional<std::string>>& values() const { return values_; }

 private:
  std::vector<std::optional<std::string>> values_;
};

class PgResult {
 public:
  int rows() const;
  bool is_null(int row, int column) const;
  std::string_view text(int row, int column) const;
  // The column read as a number or a boolean ("t"); 0 or false when it is not one.
  int64_t int_at(int row, int column) const;
  double double_at(int row, int column) const;
  bool bool_at(int row, int column) const;
  // Rows inserted, updated or deleted by the statement.
  int64_t affected() const;

 private:
  friend class PgConnection;
  struct Clear {
    const Libpq* lib;
    void operator()(PGresult* r) const { lib->clear(r); }
  };
  PgResult(const Libpq* lib, PGresult* r) : lib_(lib), result_(r, Clear{lib}) {}
  const Libpq* lib_;
  std::unique_ptr<PGresult, Clear> result_;
};

class PgConnection {
 public:
  // Connects to `url`. An error names the store by its redacted URL and says what libpq said.
  static Result<PgConnection> connect(const PostgresUrl& url);

  PgConnection(PgConnection&&) = default;
  PgConnection& operator=(PgConnection&&) = default;

  // Runs SQL without parameters, one or several statements (schema, transaction control).
  Status exec(std::string_view sql);
  // Runs one statement with `params`, prepared on this connection the first time its text is
  // run.
  Result<PgResult> run(std::string_view sql, const PgParams& params = {});
  // How many statements this connection has prepared, for tests that check reuse.
  int64_t statements_prepared() const { return static_cast<int64_t>(prepared_.size()); }
  // False once the server has gone (a failed statement tells which); every session lock the
  // connection held went with it.
  bool alive() const;

 private:
  struct Finish {
    const Libpq* lib;
    void operator()(PGconn* c) const { lib->finish(c); }
  };
  PgConnection(const Libpq* lib, PGconn* conn, PostgresUrl url)
      : lib_(lib), conn_(conn, Finish{lib}), url_(std::move(url)) {}
  Result<PgResult> check(PGresult* r, std::string_view sql);

  const Libpq* lib_;
  std::unique_ptr<PGconn, Finish> conn_;
  PostgresUrl url_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
};

}  // namespace mecha::store
