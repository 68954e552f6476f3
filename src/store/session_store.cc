#include "store/session_store.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "base/state_dir.h"

#include "store/conversation_log.h"
#include "store/record.h"

namespace mecha::store {
namespace {

// synchronous=NORMAL: in WAL mode a commit writes its frames to the -wal file and returns
// without an fsync, so an acknowledged record survives a killed process (the frames are in
// the kernel's page cache) but not yet a power loss. The power-loss promise is kept by the
// sync barrier (store/group_sync.h): one fdatasync of the -wal file per step, before the next
// model call depends on the step's records, instead of one per record (a step writes four
// or five). WAL with NORMAL never corrupts the database: SQLite still syncs around each
// checkpoint, and a torn tail of the -wal file fails its checksums and is ignored.
constexpr std::string_view kSessionSchema = R"sql(
CREATE TABLE IF NOT EXISTS sessions(
  id TEXT PRIMARY KEY,
  started_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  title TEXT NOT NULL,
  records INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  priced_calls INTEGER NOT NULL DEFAULT 0,
  unpriced_calls INTEGER NOT NULL DEFAULT 0,
  untrusted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions(updated_ms);
CREATE TABLE IF NOT EXISTS records(
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  untrusted INTEGER NOT NULL DEFAULT 0,  -- a tool_result's label, as in its body
  PRIMARY KEY(session_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS records_never_updated BEFORE UPDATE ON records
BEGIN
  SELECT RAISE(ABORT, 'session records are append-only');
END;
CREATE TRIGGER IF NOT EXISTS records_deleted_only_with_session BEFORE DELETE ON records
WHEN EXISTS (SELECT 1 FROM sessions WHERE id = OLD.session_id)
BEGIN
  SELECT RAISE(ABORT, 'session records are append-only: remove the whole session instead');
END;
)sql";

// Version 2 records the work tree each session ran in: one store serves every tree.
// Sessions from a version 1 store (which lived inside its tree) get an empty tree.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE sessions ADD COLUMN work_tree TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS sessions_by_tree ON sessions(work_tree, started_ms);
)sql";

constexpr int64_t kSchemaVersion = 2;  // PRAGMA user_version of a store with every step

constexpr std::string_view kSummaryColumns =
    "id, started_ms, updated_ms, title, records, turns, cost_usd, priced_calls, unpriced_calls, "
    "untrusted, work_tree";

SessionSummary read_summary(const Statement& st) {
  SessionSummary s;
  s.id = std::string(st.column_text(0));
  s.started_ms = st.column_int(1);
  s.updated_ms = st.column_int(2);
  s.title = std::string(st.column_text(3));
  s.records = st.column_int(4);
  s.turns = st.column_int(5);
  s.cost_usd = st.column_double(6);
  s.priced_calls = st.column_int(7);
  s.unpriced_calls = st.column_int(8);
  s.untrusted = st.column_int(9) != 0;
  s.work_tree = std::string(st.column_text(10));
  return s;
}

// "20261129-193012-k3f9": sortable by start time to the second, then 20 random bits.
std::string new_session_id(int64_t unix_ms) {
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string stamp = iso8601_utc(unix_ms);  // 2026-11-29T19:30:12.345Z
  std::string id = stamp.substr(0, 4) + stamp.substr(5, 2) + stamp.substr(8, 2) + "-" +
                   stamp.substr(11, 2) + stamp.substr(14, 2) + stamp.substr(17, 2) + "-";
  std::random_device rd;
  uint32_t bits = rd();
  for (int i = 0; i < 4; ++i) {
    id += kAlphabet[bits & 31];
    bits >>= 5;
  }
  return id;
}

// The first line, at most 80 bytes, never cutting a UTF-8 character in two.
std::string make_title(std::string_view prompt) {
  size_t start = prompt.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return "";
  prompt.remove_prefix(start);
  std::string line(prompt.substr(0, prompt.find('\n')));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  constexpr size_t kMax = 80;
  if (line.size() <= kMax) return line;
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "…";
}

bool valid_id_ref(std::string_view ref) {
  if (ref.empty() || ref.size() > 64) return false;
  for (char c : ref) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) return false;
  }
  return true;
}

// The store and its -wal, -shm and -journal files: created 0600 when missing (SQLite gives
// its side files the database's mode), tightened to 0600 when looser. They hold private tool
// results and the labels the taint is derived from.
Status make_private_files(const std::filesystem::path& db) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::path p = db;
    p += suffix;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      if (*suffix != '\0') continue;  // SQLite creates side files with the database's mode
      int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0 && errno != EEXIST) {
        return Status::error(fmt::format("cannot create the session store {}: {}", p.string(),
                                         std::strerror(errno)));
      }
      if (fd >= 0) ::close(fd);
      continue;
    }
    if (S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0 && ::chmod(p.c_str(), 0600) != 0) {
      return Status::error(fmt::format("cannot make the session store file {} private (0600): {}",
                                       p.string(), std::strerror(errno)));
    }
  }
  return ok_status();
}

std::atomic<int64_t> g_records_parsed{0};

// What a usage record's call cost: its cost_usd, or nullopt for a call without a price.
std::optional<double> usage_cost(const Record& r) {
  auto it = r.body.find("cost_usd");
  if (it != r.body.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

}  // namespace

int64_t records_parsed_in_process() { return g_records_parsed.load(std::memory_order_relaxed); }

Result<Record> parse_stored(const StoredRecord& stored, std::string_view session_id) {
  g_records_parsed.fetch_add(1, std::memory_order_relaxed);
  Record r;
  r.seq = stored.seq;
  r.at_ms = stored.at_ms;
  r.kind = stored.kind;
  auto where_it = [&] { return fmt::format("session {}, record {}", session_id, stored.seq); };
  // A body nested past the limit would overflow the stack of whoever copies it.
  if (json_depth(stored.body, kDefaultMaxJsonDepth) > kDefaultMaxJsonDepth) {
    return check_json_depth(stored.body, kDefaultMaxJsonDepth, where_it());
  }
  // Parsed without exceptions on the common path; a bad body is parsed again for the message.
  r.body = Json::parse(stored.body.begin(), stored.body.end(), nullptr, false);
  std::string where;
  if (r.body.is_discarded() || !r.body.is_object()) where = where_it();
  if (r.body.is_discarded()) {
    auto again = parse_json(stored.body, where);
    return again.ok() ? Status::error(where + ": unreadable body") : again.status();
  }
  if (!r.body.is_object()) {
    return Status::error(
        fmt::format("{}: the body is {}, not an object", where, json_type_name(r.body)));
  }
  return r;
}

Json summary_to_json(const SessionSummary& s) {
  auto cost = s.cost();
  return Json{{"id", s.id},
              {"started_at", iso8601_utc(s.started_ms)},
              {"updated_at", iso8601_utc(s.updated_ms)},
              {"title", s.title},
              {"records", s.records},
              {"turns", s.turns},
              {"cost_usd", cost ? Json(*cost) : Json(nullptr)},
              {"unpriced_calls", s.unpriced_calls},
              {"untrusted", s.untrusted},
              {"work_tree", s.work_tree}};
}

void summarize(const std::vector<Record>& records, SessionSummary* out) {
  out->records = static_cast<int64_t>(records.size());
  out->turns = 0;
  out->cost_usd = 0;
  out->priced_calls = 0;
  out->unpriced_calls = 0;
  out->untrusted = false;
  for (const Record& r : records) {
    out->untrusted = out->untrusted || r.untrusted_result();
    if (r.kind != RecordKind::kUsage) continue;
    ++out->turns;
    if (std::optional<double> cost = usage_cost(r)) {
      out->cost_usd += *cost;
      ++out->priced_calls;
    } else {
      ++out->unpriced_calls;
    }
  }
}

// ---- Session ----

Session::Session(SessionStore* store, SessionLock lock, std::string id, std::string title,
                 int64_t started_ms, std::vector<StoredRecord> log)
    : store_(store),
      lock_(std::move(lock)),
      id_(std::move(id)),
      title_(std::move(title)),
      started_ms_(started_ms),
      log_(std::move(log)) {
  // The labels and totals are read from the log once, here; append() keeps them. Only the
  // records that can change them are parsed (a cheap text test spares the other results).
  std::lock_guard<std::mutex> guard(mu_);
  for (const StoredRecord& r : log_) {
    untrusted_ = untrusted_ || r.untrusted;
    const bool labelled_private =
        r.kind == RecordKind::kToolResult && r.body.find("\"private\"") != std::string::npos;
    if (!labelled_private && r.kind != RecordKind::kUsage) continue;
    auto parsed = parse(r);
    if (!parsed) {
      // A label that cannot be read counts as private: never read as clean. An unreadable
      // usage record is a call of unknown cost.
      if (labelled_private) private_ = true;
      if (r.kind == RecordKind::kUsage) ++usage_.unpriced_calls;
      continue;
    }
    count_locked(*parsed);
  }
}

Result<Record> Session::parse(const StoredRecord& stored) const {
  return parse_stored(stored, id_);
}

void Session::count_locked(const Record& r) {
  untrusted_ = untrusted_ || r.untrusted_result();
  private_ = private_ || r.private_result();
  if (r.kind != RecordKind::kUsage) return;
  if (auto it = r.body.find("usage"); it != r.body.end()) {
    if (auto u = usage_from_json(*it, "usage"); u.ok()) usage_.usage += *u;
  }
  if (std::optional<double> cost = usage_cost(r)) {
    usage_.cost_usd += *cost;
    ++usage_.priced_calls;
  } else {
    ++usage_.unpriced_calls;
  }
}

Result<int64_t> Session::append(Record record) {
  std::lock_guard<std::mutex> lock(mu_);
  record.seq = log_.empty() ? 1 : log_.back().seq + 1;
  record.at_ms = now_unix_ms();
  StoredRecord stored{record.seq, record.at_ms, record.kind, record.untrusted_result(),
                      dump_json(record.body)};
  {
    std::lock_guard<std::mutex> db_lock(store_->mu_);
    auto ticket = store_->append_locked(id_, record, stored);
    if (!ticket) {
      return ticket.status().prefixed(fmt::format("appending record {} ({}) to session {}",
                                                  record.seq, record_kind_name(record.kind), id_));
    }
    last_commit_ = *ticket;
  }
  log_.push_back(std::move(stored));
  count_locked(record);
  if (observer_) observer_(record);
  return record.seq;
}

Result<std::vector<Record>> Session::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Record> out;
  out.reserve(log_.size());
  for (const StoredRecord& r : log_) {
    auto parsed = parse(r);
    if (!parsed) return parsed.status();
    out.push_back(std::move(*parsed));
  }
  return out;
}

int64_t Session::record_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(log_.size());
}

bool Session::untrusted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return untrusted_;
}

bool Session::private_data() const {
  std::lock_guard<std::mutex> lock(mu_);
  return private_;
}

Session::UsageTotals Session::usage_totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

Result<std::vector<Message>> Session::conversation() const {
  std::lock_guard<std::mutex> lock(mu_);
  // Only the records the conversation is made of are parsed, one at a time.
  ConversationBuilder builder;
  for (const StoredRecord& r : log_) {
    if (r.kind != RecordKind::kUserMessage && r.kind != RecordKind::kAssistantMessage &&
        r.kind != RecordKind::kToolResult && r.kind != RecordKind::kCompaction) {
      continue;
    }
    auto parsed = parse(r);
    if (!parsed) return parsed.status();
    MECHA_RETURN_IF_ERROR(builder.add(*parsed).prefixed(fmt::format("session {}", id_)));
  }
  return builder.finish();
}

void Session::set_commit_observer(std::function<void(const Record&)> observer) {
  std::lock_guard<std::mutex> lock(mu_);
  observer_ = std::move(observer);
}

Status Session::sync() {
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = last_commit_;
  }
  return store_->sync_.sync_through(ticket).prefixed(fmt::format("syncing session {}", id_));
}

// ---- SessionStore ----

SessionStore::SessionStore(std::filesystem::path path, std::string work_tree, Database db)
    : path_(std::move(path)), work_tree_(std::move(work_tree)), db_(std::move(db)), wal_(path_) {}

Status SessionStore::prepare_sync() {
  return wal_.open().prefixed(
      fmt::format("preparing to sync the session store {}", path_.string()));
}

Status SessionStore::sync() {
  return sync_.sync_all().prefixed(fmt::format("syncing the session store {}", path_.string()));
}

int64_t SessionStore::statements_prepared() {
  std::lock_guard<std::mutex> guard(mu_);
  return db_.statements_prepared();
}

Result<std::unique_ptr<SessionStore>> SessionStore::open(const std::filesystem::path& path,
                                                         std::string work_tree) {
  if (path.has_parent_path() && !std::filesystem::is_directory(path.parent_path())) {
    MECHA_RETURN_IF_ERROR(make_private_dir(path.parent_path())
                              .prefixed(fmt::format("session store {}", path.string())));
  }
  MECHA_RETURN_IF_ERROR(make_private_files(path));
  auto db = Database::open(path, kBusyTimeoutMs);
  if (!db) return db.status();
  std::string where = fmt::format("session store {}", path.string());
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA journal_mode=WAL").prefixed(where));
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL").prefixed(where));
  // The last connection to close would copy the WAL back into the database and fsync it: a
  // few milliseconds at the end of every run, for nothing the next reader needs (it reads the
  // WAL, which the step's sync barrier already made durable). SQLite's automatic checkpoint
  // still folds the WAL in as it grows. Only a cost is saved, so a refusal is not an error.
  sqlite3_db_config(db->handle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // Each process that opens the store first replays its -wal file (SQLite's recovery reads
  // and checksums every frame), so a short run pays for the WAL's length. A quarter of
  // SQLite's default checkpoint threshold keeps that under a millisecond; the checkpoints
  // it adds (about one per dozen short runs) cost less than the replays they save.
  MECHA_RETURN_IF_ERROR(db->exec("PRAGMA wal_autocheckpoint=256").prefixed(where));
  auto version = db->user_version();
  if (!version) return version.status().prefixed(where);
  if (*version > kSchemaVersion) {
    return Status::error(
        fmt::format("{}: written by a newer mecha (schema version {}, this one "
                    "reads {})",
                    where, *version, kSchemaVersion));
  }
  // Only a new store takes the write lock: opening one to read never waits for a writer.
  if (*version < kSchemaVersion) {
    auto tx = Transaction::begin(*db);
    if (!tx) return tx.status().prefixed(where);
    // Read again under the write lock: another process may have migrated meanwhile.
    version = db->user_version();
    if (!version) return version.status().prefixed(where);
    if (*version < 1) MECHA_RETURN_IF_ERROR(db->exec(kSessionSchema).prefixed(where));
    if (*version < 2) MECHA_RETURN_IF_ERROR(db->exec(kSchemaV2).prefixed(where));
    MECHA_RETURN_IF_ERROR(
        db->exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion)).prefixed(where));
    MECHA_RETURN_IF_ERROR(tx->commit().prefixed(where));
  }
  // WAL mode made the -wal and -shm files; SQLite gives them the database's mode (0600).
  MECHA_RETURN_IF_ERROR(make_private_files(path));
  return std::unique_ptr<SessionStore>(
      new SessionStore(path, std::move(work_tree), std::move(*db)));
}

std::filesystem::path SessionStore::lock_file(std::string_view id) const {
  std::filesystem::path dir = path_;
  dir += "-locks";
  return dir / (std::string(id) + ".lock");
}

Result<std::unique_ptr<Session>> SessionStore::create(std::string_view title_text) {
  const int64_t started = now_unix_ms();
  std::string title = make_title(title_text);
  Status last = Status::error("could not find a free session id");
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string id = new_session_id(started);
    auto lock = SessionLock::acquire(lock_file(id), id);
    if (!lock) {  // most likely another process creating this very id: draw again
      last = lock.status();
      continue;
    }
    std::lock_guard<std::mutex> guard(mu_);
    auto st = db_.prepare_cached(
        "INSERT OR IGNORE INTO sessions(id, started_ms, updated_ms, title, work_tree) "
        "VALUES(?, ?, ?, ?, ?)");
    if (!st) return st.status();
    st->bind(1, id);
    st->bind(2, started);
    st->bind(3, started);
    st->bind(4, title);
    st->bind(5, work_tree_);
    MECHA_RETURN_IF_ERROR(st->run().prefixed("creating a session"));
    if (db_.changes() == 0) continue;  // the id is taken
    const uint64_t ticket = sync_.committed();
    auto session = std::unique_ptr<Session>(
        new Session(this, std::move(*lock), id, title, started, std::vector<StoredRecord>{}));
    session->last_commit_ = ticket;  // the session's row, synced with its first records
    return session;
  }
  return last.prefixed("creating a session");
}

Result<std::unique_ptr<Session>> SessionStore::open_session(std::string_view id) {
  if (!valid_id_ref(id)) return Status::usage(fmt::format("no session {}", id));
  auto lock = SessionLock::acquire(lock_file(id), std::string(id));
  if (!lock) return lock.status();
  std::lock_guard<std::mutex> guard(mu_);
  auto sum = summary_locked(id);
  if (!sum) return sum.status();  // the lock, going away, removes its file
  auto log = read_log_locked(id);
  if (!log) return log.status();
  return std::unique_ptr<Session>(
      new Session(this, std::move(*lock), sum->id, sum->title, sum->started_ms, std::move(*log)));
}

Result<std::string> SessionStore::resolve(std::string_view ref) {
  std::lock_guard<std::mutex> guard(mu_);
  if (ref == "last") {
    auto st = db_.prepare_cached(
        "SELECT id FROM sessions WHERE ?1 = '' OR work_tree = ?1 "
        "ORDER BY updated_ms DESC, started_ms DESC, id DESC LIMIT 1");
    if (!st) return st.status();
    st->bind(1, work_tree_);
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) {
      if (work_tree_.empty()) {
        return Status::usage(fmt::format("there are no sessions in {} yet", path_.string()));
      }
      return Status::usage(fmt::format("there are no sessions of the work tree {} in {} yet",
                                       work_tree_, path_.string()));
    }
    return std::string(st->column_text(0));
  }
  if (!valid_id_ref(ref)) {
    return Status::usage(fmt::format(
        "\"{}\" is not a session id (ids look like 20261129-193012-k3f9; or use \"last\")", ref));
  }
  // '~' sorts after every character of an id, so this is "starts with ref".
  auto st = db_.prepare_cached("SELECT id FROM sessions WHERE id >= ?1 AND id < ?1 || '~' LIMIT 3");
  if (!st) return st.status();
  st->bind(1, ref);
  std::vector<std::string> found;
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    std::string id(st->column_text(0));
    if (id == ref) return id;
    found.push_back(std::move(id));
  }
  if (found.empty()) {
    return Status::usage(fmt::format("no session {} in {}", ref, path_.string()));
  }
  if (found.size() > 1) {
    return Status::usage(fmt::format("session id prefix {} is ambiguous: it matches {}, {}{}", ref,
                                     found[0], found[1], found.size() > 2 ? " and more" : ""));
  }
  return found[0];
}

Result<std::vector<SessionSummary>> SessionStore::list(std::optional<std::string> work_tree) {
  std::lock_guard<std::mutex> guard(mu_);
  auto st =
      db_.prepare_cached(fmt::format("SELECT {} FROM sessions WHERE ?1 IS NULL OR work_tree = ?1 "
                                     "ORDER BY started_ms DESC, id DESC",
                                     kSummaryColumns));
  if (!st) return st.status();
  if (work_tree) {
    st->bind(1, *work_tree);
  } else {
    st->bind_null(1);
  }
  std::vector<SessionSummary> out;
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    out.push_back(read_summary(*st));
  }
  return out;
}

Result<SessionSummary> SessionStore::summary(std::string_view id) {
  std::lock_guard<std::mutex> guard(mu_);
  return summary_locked(id);
}

Result<SessionSummary> SessionStore::summary_locked(std::string_view id) {
  auto st =
      db_.prepare_cached(fmt::format("SELECT {} FROM sessions WHERE id = ?", kSummaryColumns));
  if (!st) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row) return row.status();
  if (!*row) return Status::usage(fmt::format("no session {} in {}", id, path_.string()));
  return read_summary(*st);
}

Result<std::vector<Record>> SessionStore::read_records(std::string_view id) {
  std::lock_guard<std::mutex> guard(mu_);
  auto sum = summary_locked(id);
  if (!sum) return sum.status();
  auto log = read_log_locked(id);
  if (!log) return log.status();
  std::vector<Record> out;
  out.reserve(log->size());
  for (const StoredRecord& r : *log) {
    auto parsed = parse_stored(r, id);
    if (!parsed) return parsed.status();
    out.push_back(std::move(*parsed));
  }
  return out;
}

Result<std::vector<StoredRecord>> SessionStore::read_log_locked(std::string_view id) {
  auto st = db_.prepare_cached(
      "SELECT seq, at_ms, kind, untrusted, body FROM records WHERE session_id = ? ORDER BY seq");
  if (!st) return st.status();
  st->bind(1, id);
  std::vector<StoredRecord> out;
  if (int64_t n = count_records_locked(id); n > 0) out.reserve(static_cast<size_t>(n));
  while (true) {
    auto row = st->step();
    if (!row) return row.status();
    if (!*row) break;
    StoredRecord& r = out.emplace_back();
    r.seq = st->column_int(0);
    r.at_ms = st->column_int(1);
    if (r.seq != static_cast<int64_t>(out.size())) {
      return Status::error(fmt::format(
          "session {}, record {}: expected record {} (the log has a gap)", id, r.seq, out.size()));
    }
    auto kind = record_kind_from_name(st->column_text(2));
    if (!kind) return kind.status().prefixed(fmt::format("session {}, record {}", id, r.seq));
    r.kind = *kind;
    r.untrusted = st->column_int(3) != 0;
    r.body = std::string(st->column_text(4));
  }
  return out;
}

int64_t SessionStore::count_records_locked(std::string_view id) {
  auto st = db_.prepare_cached("SELECT records FROM sessions WHERE id = ?");
  if (!st) return 0;
  st->bind(1, id);
  auto row = st->step();
  return row.ok() && *row ? st->column_int(0) : 0;
}

Result<uint64_t> SessionStore::append_locked(const std::string& id, const Record& r,
                                             const StoredRecord& stored) {
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.status();
  auto ins = db_.prepare_cached(
      "INSERT INTO records(session_id, seq, at_ms, kind, body, untrusted) "
      "VALUES(?, ?, ?, ?, ?, ?)");
  if (!ins) return ins.status();
  ins->bind(1, id);
  ins->bind(2, r.seq);
  ins->bind(3, r.at_ms);
  ins->bind(4, record_kind_name(r.kind));
  ins->bind(5, stored.body);
  ins->bind(6, static_cast<int64_t>(stored.untrusted ? 1 : 0));
  MECHA_RETURN_IF_ERROR(ins->run());

  SessionSummary delta;
  summarize({r}, &delta);
  auto upd = db_.prepare_cached(
      // updated_ms is kept strictly increasing across the store, so "last" is the session
      // written last even when two writes fall in one millisecond.
      "UPDATE sessions SET records = records + 1, "
      "updated_ms = MAX(?, (SELECT MAX(updated_ms) FROM sessions) + 1), turns = turns + ?, "
      "cost_usd = cost_usd + ?, priced_calls = priced_calls + ?, "
      "unpriced_calls = unpriced_calls + ?, untrusted = MAX(untrusted, ?), "
      // A session created without a title (a daemon's) takes its first prompt's.
      "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?");
  if (!upd) return upd.status();
  std::string title;
  if (r.kind == RecordKind::kUserMessage) {
    if (auto m = r.body.find("message"); m != r.body.end()) {
      if (auto message = message_from_json(*m, "message")) title = make_title(message->text());
    }
  }
  upd->bind(1, r.at_ms);
  upd->bind(2, delta.turns);
  upd->bind(3, delta.cost_usd);
  upd->bind(4, delta.priced_calls);
  upd->bind(5, delta.unpriced_calls);
  upd->bind(6, static_cast<int64_t>(delta.untrusted ? 1 : 0));
  upd->bind(7, title);
  upd->bind(8, id);
  MECHA_RETURN_IF_ERROR(upd->run());
  if (db_.changes() != 1) return Status::error("the session was removed");
  MECHA_RETURN_IF_ERROR(tx->commit());
  return sync_.committed();
}

Status SessionStore::remove(std::string_view id) {
  if (!valid_id_ref(id)) return Status::usage(fmt::format("no session {}", id));
  auto lock = SessionLock::acquire(lock_file(id), std::string(id));
  if (!lock) return lock.status();
  std::lock_guard<std::mutex> guard(mu_);
  auto tx = Transaction::begin(db_);
  if (!tx) return tx.status();
  auto del = db_.prepare_cached("DELETE FROM sessions WHERE id = ?");
  if (!del) return del.status();
  del->bind(1, id);
  MECHA_RETURN_IF_ERROR(del->run());
  if (db_.changes() == 0)
    return Status::usage(fmt::format("no session {} in {}", id, path_.string()));
  auto recs = db_.prepare_cached("DELETE FROM records WHERE session_id = ?");
  if (!recs) return recs.status();
  recs->bind(1, id);
  MECHA_RETURN_IF_ERROR(recs->run());
  MECHA_RETURN_IF_ERROR(tx->commit());
  const uint64_t ticket = sync_.committed();
  return sync_.sync_through(ticket).prefixed(fmt::format("removing session {}", id));
}

}  // namespace mecha::store
