#include "store/postgres_backend.h"

#include <unistd.h>

#include <charconv>

#include <fmt/format.h>

#include "base/sha256.h"

namespace mecha::store {
namespace {

constexpr int64_t kPgSchemaVersion = 1;  // store_version.version of a schema with every step

// Created in one transaction by the first role that may (invariant 1 of the header). The
// functions fix their search_path to the schema they were made in, so a caller's
// search_path cannot point them at other tables. Ids compare bytewise (COLLATE "C"), as in
// SQLite, so "starts with" is a range of the primary key.
constexpr std::string_view kPgSchema = R"sql(
CREATE TABLE sessions(
  id text COLLATE "C" PRIMARY KEY,
  started_ms bigint NOT NULL,
  updated_ms bigint NOT NULL,
  title text NOT NULL,
  records bigint NOT NULL DEFAULT 0,
  turns bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  priced_calls bigint NOT NULL DEFAULT 0,
  unpriced_calls bigint NOT NULL DEFAULT 0,
  untrusted boolean NOT NULL DEFAULT false,
  work_tree text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_update ON sessions(updated_ms);
CREATE INDEX sessions_by_tree ON sessions(work_tree, started_ms);
CREATE TABLE records(
  session_id text COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  at_ms bigint NOT NULL,
  kind text NOT NULL,
  body text NOT NULL,
  untrusted boolean NOT NULL DEFAULT false,  -- a tool_result's label, as in its body
  PRIMARY KEY(session_id, seq)
);
CREATE FUNCTION mecha_records_never_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  RAISE EXCEPTION 'session records are append-only';
END $$;
CREATE FUNCTION mecha_records_go_with_their_session() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id) THEN
    RAISE EXCEPTION 'session records are append-only: remove the whole session instead';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER records_never_updated BEFORE UPDATE ON records
  FOR EACH ROW EXECUTE FUNCTION mecha_records_never_change();
CREATE TRIGGER records_never_truncated BEFORE TRUNCATE ON records
  FOR EACH STATEMENT EXECUTE FUNCTION mecha_records_never_change();
CREATE TRIGGER records_deleted_only_with_session BEFORE DELETE ON records
  FOR EACH ROW EXECUTE FUNCTION mecha_records_go_with_their_session();
CREATE FUNCTION mecha_sessions_keep_labels() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
  IF OLD.untrusted AND NOT NEW.untrusted THEN
    RAISE EXCEPTION 'a session''s untrusted label never clears';
  END IF;
  IF NEW.id <> OLD.id OR NEW.started_ms <> OLD.started_ms OR NEW.work_tree <> OLD.work_tree THEN
    RAISE EXCEPTION 'a session''s id, start and work tree never change';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER sessions_keep_labels BEFORE UPDATE ON sessions
  FOR EACH ROW EXECUTE FUNCTION mecha_sessions_keep_labels();
CREATE FUNCTION mecha_remove_session(session text) RETURNS boolean LANGUAGE sql
SECURITY DEFINER SET search_path FROM CURRENT AS $$
  WITH gone AS (DELETE FROM sessions WHERE id = session RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM gone);
$$;
REVOKE ALL ON FUNCTION mecha_remove_session(text) FROM PUBLIC;
CREATE TABLE store_version(version integer NOT NULL);
INSERT INTO store_version VALUES (1);
)sql";

// What kWriterRole may do (invariant 1), granted when that role exists.
constexpr std::string_view kGrants = R"sql(
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mecha_writer') THEN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO mecha_writer', current_schema());
    GRANT SELECT ON store_version TO mecha_writer;
    GRANT SELECT, INSERT, UPDATE ON sessions TO mecha_writer;
    GRANT SELECT, INSERT ON records TO mecha_writer;
    GRANT EXECUTE ON FUNCTION mecha_remove_session(text) TO mecha_writer;
  END IF;
END $$;
)sql";

// Held for the creation of the schema, so two first opens do not both create it.
constexpr int64_t kSchemaLockKey = 0x6d65636861736368;  // "mechasch"

constexpr std::string_view kPgSummaryColumns =
    "id, started_ms, updated_ms, title, records, turns, cost_usd, priced_calls, unpriced_calls, "
    "untrusted, work_tree";

SessionSummary read_summary(const PgResult& r, int row) {
  SessionSummary s;
  s.id = std::string(r.text(row, 0));
  s.started_ms = r.int_at(row, 1);
  s.updated_ms = r.int_at(row, 2);
  s.title = std::string(r.text(row, 3));
  s.records = r.int_at(row, 4);
  s.turns = r.int_at(row, 5);
  s.cost_usd = r.double_at(row, 6);
  s.priced_calls = r.int_at(row, 7);
  s.unpriced_calls = r.int_at(row, 8);
  s.untrusted = r.bool_at(row, 9);
  s.work_tree = std::string(r.text(row, 10));
  return s;
}

// "mecha pid 123 on host": what the server shows of this connection (pg_stat_activity), and
// what a refused lock names as its holder. The server keeps 63 bytes of it.
std::string application_name() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format("mecha pid {} on {}", getpid(), host).substr(0, 63);
}

// The connection's settings: appends commit without waiting for the WAL flush (invariant 3),
// flushes wait for it. Values are parameters even here, by habit.
Status configure(PgConnection& conn, bool synchronous) {
  auto set = conn.run(
      "SELECT set_config('application_name', $1, false), "
      "set_config('synchronous_commit', $2, false)",
      PgParams().add(application_name()).add(synchronous ? "on" : "off"));
  return set.status();
}

Status install_schema(PgConnection& conn, const std::string& where) {
  MECHA_RETURN_IF_ERROR(conn.exec("BEGIN").prefixed(where));
  auto fail = [&](const Status& s) {
    (void)conn.exec("ROLLBACK");
    return s.prefixed(where);
  };
  auto locked = conn.run("SELECT pg_advisory_xact_lock($1)", PgParams().add(kSchemaLockKey));
  if (!locked) return fail(locked.status());
  // Again under the lock: another process may have made it meanwhile.
  auto exists = conn.run("SELECT to_regclass('store_version') IS NOT NULL");
  if (!exists) return fail(exists.status());
  if (!exists->bool_at(0, 0)) {
    Status made = conn.exec(kPgSchema);
    if (!made.ok()) {
      return fail(Status::error(fmt::format(
          "the store's tables are missing and this role cannot create them ({}): open the store "
          "once as the role that is to own them (README, \"Sessions in PostgreSQL\")",
          made.message())));
    }
    Status granted = conn.exec(kGrants);
    if (!granted.ok()) return fail(granted);
  }
  return conn.exec("COMMIT").prefixed(where);
}

}  // namespace

// The advisory lock a Session holds: unlocked (under the store's mutex, see ~Session) when
// the session closes.
class PostgresBackend::HeldAdvisoryLock : public HeldSessionLock {
 public:
  HeldAdvisoryLock(PostgresBackend* backend, std::string id)
      : backend_(backend), id_(std::move(id)) {}
  // A failed unlock leaves the lock to the connection's end; nothing else can be done here.
  ~HeldAdvisoryLock() override { (void)backend_->unlock(id_); }

 private:
  PostgresBackend* const backend_;
  const std::string id_;
};

int64_t PostgresBackend::lock_key(std::string_view id) {
  const std::string hex = sha256_hex(fmt::format("mecha session {}", id)).substr(0, 16);
  uint64_t key = 0;
  std::from_chars(hex.data(), hex.data() + hex.size(), key, 16);
  return static_cast<int64_t>(key);
}

Result<std::unique_ptr<PostgresBackend>> PostgresBackend::open(std::string_view url_text) {
  PostgresUrl url(url_text);
  const std::string where = fmt::format("session store {}", url.redacted());
  auto conn = PgConnection::connect(url);
  if (!conn) return conn.status();
  MECHA_RETURN_IF_ERROR(configure(*conn, false).prefixed(where));
  auto exists = conn->run("SELECT to_regclass('store_version') IS NOT NULL");
  if (!exists) return exists.status().prefixed(where);
  if (!exists->bool_at(0, 0)) MECHA_RETURN_IF_ERROR(install_schema(*conn, where));
  auto version = conn->run("SELECT max(version) FROM store_version");
  if (!version) return version.status().prefixed(where);
  if (version->int_at(0, 0) > kPgSchemaVersion) {
    return Status::error(
        fmt::format("{}: written by a newer mecha (schema version {}, this one "
                    "reads {})",
                    where, version->int_at(0, 0), kPgSchemaVersion));
  }
  return std::unique_ptr<PostgresBackend>(new PostgresBackend(std::move(url), std::move(*conn)));
}

PostgresBackend::~PostgresBackend() = default;

std::string PostgresBackend::holder_of(int64_t key) {
  const auto k = static_cast<uint64_t>(key);
  // A bigint advisory key shows in pg_locks as its high half (classid) and low half (objid).
  auto who = conn_.run(
      "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
      "AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid LIMIT 1",
      PgParams().add(static_cast<int64_t>(k >> 32)).add(static_cast<int64_t>(k & 0xffffffffu)));
  if (!who.ok() || who->rows() == 0 || who->text(0, 0).empty()) return "another process";
  return std::string(who->text(0, 0));
}

Result<std::unique_ptr<HeldSessionLock>> PostgresBackend::lock(const std::string& id) {
  const int64_t key = lock_key(id);
  auto refused = [&](const std::string& holder) {
    return Status::error(fmt::format(
        "session {} is in use by {}: wait for that run to finish or stop it, then try again "
        "(PostgreSQL advisory lock {} in {})",
        id, holder, key, name()));
  };
  if (held_.contains(id)) return refused(application_name());
  auto taken = conn_.run("SELECT pg_try_advisory_lock($1)", PgParams().add(key));
  if (!taken) return taken.status().prefixed(fmt::format("locking session {}", id));
  if (!taken->bool_at(0, 0)) return refused(holder_of(key));
  held_.insert(id);
  return std::unique_ptr<HeldSessionLock>(new HeldAdvisoryLock(this, id));
}

Status PostgresBackend::unlock(const std::string& id) {
  held_.erase(id);
  return conn_.run("SELECT pg_advisory_unlock($1)", PgParams().add(lock_key(id))).status();
}

Result<bool> PostgresBackend::insert_session(const SessionSummary& s) {
  auto r = conn_.run(
      "INSERT INTO sessions(id, started_ms, updated_ms, title, work_tree) "
      "VALUES($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
      PgParams().add(s.id).add(s.started_ms).add(s.updated_ms).add(s.title).add(s.work_tree));
  if (!r) return r.status();
  return r->affected() == 1;
}

Result<std::optional<std::string>> PostgresBackend::last_written(const std::string& work_tree) {
  auto r = conn_.run(
      "SELECT id FROM sessions WHERE $1 = '' OR work_tree = $1 "
      "ORDER BY updated_ms DESC, started_ms DESC, id DESC LIMIT 1",
      PgParams().add(work_tree));
  if (!r) return r.status();
  if (r->rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::string(r->text(0, 0)));
}

Result<std::vector<std::string>> PostgresBackend::ids_starting_with(std::string_view prefix,
                                                                    int limit) {
  // '~' sorts after every character of an id, so this is "starts with prefix".
  auto r =
      conn_.run("SELECT id FROM sessions WHERE id >= $1 AND id < $1 || '~' ORDER BY id LIMIT $2",
                PgParams().add(prefix).add(static_cast<int64_t>(limit)));
  if (!r) return r.status();
  std::vector<std::string> found;
  for (int i = 0; i < r->rows(); ++i) found.emplace_back(r->text(i, 0));
  return found;
}

Result<std::vector<SessionSummary>> PostgresBackend::list(
    const std::optional<std::string>& work_tree) {
  PgParams params;
  if (work_tree) {
    params.add(*work_tree);
  } else {
    params.add_null();
  }
  auto r = conn_.run(fmt::format("SELECT {} FROM sessions WHERE $1::text IS NULL OR work_tree = $1 "
                                 "ORDER BY started_ms DESC, id DESC",
                                 kPgSummaryColumns),
                     params);
  if (!r) return r.status();
  std::vector<SessionSummary> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(read_summary(*r, i));
  return out;
}

Result<std::optional<SessionSummary>> PostgresBackend::summary(std::string_view id) {
  auto r = conn_.run(fmt::format("SELECT {} FROM sessions WHERE id = $1", kPgSummaryColumns),
                     PgParams().add(id));
  if (!r) return r.status();
  if (r->rows() == 0) return std::optional<SessionSummary>();
  return std::optional<SessionSummary>(read_summary(*r, 0));
}

Result<std::vector<StoredRecord>> PostgresBackend::read_log(std::string_view id) {
  auto r = conn_.run(
      "SELECT seq, at_ms, kind, untrusted, body FROM records WHERE session_id = $1 ORDER BY seq",
      PgParams().add(id));
  if (!r) return r.status();
  std::vector<StoredRecord> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    MECHA_RETURN_IF_ERROR(add_log_row(id, r->int_at(i, 0), r->int_at(i, 1), r->text(i, 2),
                                      r->bool_at(i, 3), std::string(r->text(i, 4)), &out));
  }
  return out;
}

Status PostgresBackend::append(const AppendRow& row) {
  const StoredRecord& rec = row.record;
  // One statement, so one round trip and one commit: the record's INSERT (which the foreign
  // key fails when the session is gone) and its session's summary.
  auto r = conn_.run(
      "WITH added AS (INSERT INTO records(session_id, seq, at_ms, kind, body, untrusted) "
      "VALUES($1, $2, $3, $4, $5, $6) RETURNING session_id) "
      "UPDATE sessions SET records = records + 1, "
      "updated_ms = GREATEST($3, (SELECT MAX(updated_ms) FROM sessions) + 1), "
      "turns = turns + $7, cost_usd = cost_usd + $8, priced_calls = priced_calls + $9, "
      "unpriced_calls = unpriced_calls + $10, untrusted = untrusted OR $6, "
      // A session created without a title (a daemon's) takes its first prompt's.
      "title = CASE WHEN title = '' THEN $11 ELSE title END "
      "WHERE id = (SELECT session_id FROM added)",
      PgParams()
          .add(row.session_id)
          .add(rec.seq)
          .add(rec.at_ms)
          .add(record_kind_name(rec.kind))
          .add(rec.body)
          .add(rec.untrusted)
          .add(row.delta.turns)
          .add(row.delta.cost_usd)
          .add(row.delta.priced_calls)
          .add(row.delta.unpriced_calls)
          .add(row.title));
  if (!r) return r.status();
  if (r->affected() != 1) return Status::error("the session was removed");
  return ok_status();
}

Result<bool> PostgresBackend::remove(std::string_view id) {
  auto r = conn_.run("SELECT mecha_remove_session($1)", PgParams().add(id));
  if (!r) return r.status();
  return r->bool_at(0, 0);
}

Status PostgresBackend::prepare_flush() {
  if (flusher_) return ok_status();
  auto conn = PgConnection::connect(url_);
  if (!conn) return conn.status();
  MECHA_RETURN_IF_ERROR(configure(*conn, true));
  flusher_ = std::move(*conn);
  return ok_status();
}

Status PostgresBackend::flush() {
  MECHA_RETURN_IF_ERROR(prepare_flush());
  // A transaction that writes WAL (a logical-decoding message nobody decodes) and commits
  // with synchronous_commit on: the server returns once the WAL is on its disk up to this
  // commit, so every commit acknowledged before it is too. A commit that wrote no WAL of its
  // own (pg_current_xact_id() alone) would not wait.
  return flusher_->run("SELECT pg_logical_emit_message(true, 'mecha.sync', '')").status();
}

}  // namespace mecha::store
