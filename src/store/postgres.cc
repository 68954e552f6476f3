#include "store/postgres.h"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace mecha::store {
namespace {

// libpq's messages end in a newline and continue on tab-indented lines; one line reads
// better inside ours.
std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (c != '\t' && c != '\r') {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// What a message calls a statement: its first line, "…" when more follows (a schema is
// dozens of lines).
std::string statement_label(std::string_view sql) {
  const size_t begin = sql.find_first_not_of(" \n");
  if (begin == std::string_view::npos) return "";
  sql.remove_prefix(begin);
  const size_t end = sql.find('\n');
  if (end == std::string_view::npos ||
      sql.find_first_not_of(" \n", end) == std::string_view::npos) {
    return std::string(sql.substr(0, end));
  }
  return std::string(sql.substr(0, end)) + "…";
}

// NOTICEs ("relation already exists, skipping") would go to stderr: library code never prints.
void ignore_notice(void*, const PGresult*) {}

}  // namespace

PgParams& PgParams::add(std::string_view text) {
  values_.emplace_back(std::string(text));
  return *this;
}
PgParams& PgParams::add(int64_t value) {
  values_.emplace_back(std::to_string(value));
  return *this;
}
PgParams& PgParams::add(double value) {
  // The shortest text that reads back as the same double.
  values_.emplace_back(fmt::format("{}", value));
  return *this;
}
PgParams& PgParams::add(bool value) {
  values_.emplace_back(value ? "true" : "false");
  return *this;
}
PgParams& PgParams::add_null() {
  values_.emplace_back(std::nullopt);
  return *this;
}

int PgResult::rows() const { return lib_->ntuples(result_.get()); }

bool PgResult::is_null(int row, int column) const {
  return lib_->getisnull(result_.get(), row, column) != 0;
}

std::string_view PgResult::text(int row, int column) const {
  return std::string_view(lib_->getvalue(result_.get(), row, column),
                          static_cast<size_t>(lib_->getlength(result_.get(), row, column)));
}

int64_t PgResult::int_at(int row, int column) const {
  std::string_view t = text(row, column);
  int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

double PgResult::double_at(int row, int column) const {
  return std::strtod(lib_->getvalue(result_.get(), row, column), nullptr);
}

bool PgResult::bool_at(int row, int column) const { return text(row, column) == "t"; }

int64_t PgResult::affected() const {
  const char* n = lib_->cmd_tuples(result_.get());
  return n != nullptr ? std::strtoll(n, nullptr, 10) : 0;
}

Result<PgConnection> PgConnection::connect(const PostgresUrl& url) {
  auto lib = libpq();
  if (!lib) return lib.status().prefixed(fmt::format("session store {}", url.redacted()));
  // Parsed first, so a malformed URL gets libpq's reason instead of a failed connection.
  char* parse_error = nullptr;
  PQconninfoOption* options = (*lib)->conninfo_parse(url.url().c_str(), &parse_error);
  if (options == nullptr) {
    std::string why = parse_error != nullptr ? one_line(parse_error) : "out of memory";
    if (parse_error != nullptr) (*lib)->freemem(parse_error);
    return Status::usage(fmt::format("session store {}: not a valid PostgreSQL URL: {}",
                                     url.redacted(), url.scrub(why)));
  }
  (*lib)->conninfo_free(options);
  PgConnection conn(*lib, (*lib)->connectdb(url.url().c_str()), url);
  if (!conn.conn_) return Status::error("session store: out of memory connecting to PostgreSQL");
  if ((*lib)->status(conn.conn_.get()) != CONNECTION_OK) {
    return Status::error(fmt::format("session store {}: cannot connect: {}", url.redacted(),
                                     url.scrub(one_line((*lib)->error_message(conn.conn_.get())))));
  }
  (*lib)->set_notice_receiver(conn.conn_.get(), ignore_notice, nullptr);
  return conn;
}

bool PgConnection::alive() const { return lib_->status(conn_.get()) == CONNECTION_OK; }

Result<PgResult> PgConnection::check(PGresult* raw, std::string_view sql) {
  PgResult result(lib_, raw);
  ExecStatusType status = raw != nullptr ? lib_->result_status(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  std::string why;
  if (raw != nullptr) {
    if (const char* primary = lib_->result_error_field(raw, PG_DIAG_MESSAGE_PRIMARY)) {
      why = primary;
    }
  }
  if (why.empty()) why = one_line(lib_->error_message(conn_.get()));
  if (!alive())
    why += " (the connection to the store is lost, and with it the session locks it held)";
  return Status::error(fmt::format("postgresql: {}: {}", statement_label(sql), url_.scrub(why)));
}

Status PgConnection::exec(std::string_view sql) {
  const std::string text(sql);
  return check(lib_->exec(conn_.get(), text.c_str()), sql).status();
}

Result<PgResult> PgConnection::run(std::string_view sql, const PgParams& params) {
  const auto& values = params.values();
  std::vector<const char*> raw;
  raw.reserve(values.size());
  for (const auto& v : values) raw.push_back(v ? v->c_str() : nullptr);
  const std::string text(sql);
  auto it = prepared_.find(text);
  if (it == prepared_.end()) {
    std::string name = fmt::format("mecha_{}", prepared_.size() + 1);
    auto prepared = check(lib_->prepare(conn_.get(), name.c_str(), text.c_str(),
                                        static_cast<int>(raw.size()), nullptr),
                          sql);
    if (!prepared) return prepared.status();
    it = prepared_.emplace(text, std::move(name)).first;
  }
  return check(lib_->exec_prepared(conn_.get(), it->second.c_str(), static_cast<int>(raw.size()),
                                   raw.data(), nullptr, nullptr, 0),
               sql);
}

}  // namespace mecha::store
