#include "store/session_store.h"

#include <fmt/format.h>

#include <atomic>
#include <random>

#include "store/conversation_log.h"
#include "store/record.h"
#include "store/session_backend.h"
#include "store/sqlite_backend.h"

namespace mecha::store {
namespace {

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

std::atomic<int64_t> g_records_parsed{0};

// What a usage record's call cost: its cost_usd, or nullopt for a call without a price.
std::optional<double> usage_cost(const Record& r) {
  auto it = r.body.find("cost_usd");
  if (it != r.body.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

}  // namespace

bool valid_id_ref(std::string_view ref) {
  if (ref.empty() || ref.size() > 64) return false;
  for (char c : ref) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-')) return false;
  }
  return true;
}

Status add_log_row(std::string_view session_id, int64_t seq, int64_t at_ms, std::string_view kind,
                   bool untrusted, std::string body, std::vector<StoredRecord>* out) {
  const int64_t expected = static_cast<int64_t>(out->size()) + 1;
  if (seq != expected) {
    return Status::error(
        fmt::format("session {}, record {}: expected record {} (the log has a gap)", session_id,
                    seq, expected));
  }
  auto parsed_kind = record_kind_from_name(kind);
  if (!parsed_kind) {
    return parsed_kind.status().prefixed(fmt::format("session {}, record {}", session_id, seq));
  }
  out->push_back(StoredRecord{seq, at_ms, *parsed_kind, untrusted, std::move(body)});
  return ok_status();
}

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

Session::Session(SessionStore* store, std::unique_ptr<HeldSessionLock> lock, std::string id,
                 std::string title, int64_t started_ms, std::vector<StoredRecord> log)
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

// The lock goes only after the store's mutex is free of this session (HeldSessionLock of a
// PostgreSQL store speaks to the connection, under that mutex).
Session::~Session() {
  std::lock_guard<std::mutex> guard(store_->mu_);
  lock_.reset();
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

SessionStore::SessionStore(std::unique_ptr<SessionBackend> backend, std::string work_tree)
    : work_tree_(std::move(work_tree)),
      backend_(std::move(backend)),
      name_(backend_->name()),
      sync_([backend = backend_.get()] { return backend->flush(); }) {}

SessionStore::~SessionStore() = default;

std::unique_ptr<SessionStore> SessionStore::with_backend(std::unique_ptr<SessionBackend> backend,
                                                         std::string work_tree) {
  return std::unique_ptr<SessionStore>(new SessionStore(std::move(backend), std::move(work_tree)));
}

Result<std::unique_ptr<SessionStore>> SessionStore::open(const std::filesystem::path& path,
                                                         std::string work_tree) {
  auto backend = SqliteBackend::open(path);
  if (!backend) return backend.status();
  return with_backend(std::move(*backend), std::move(work_tree));
}

Status SessionStore::prepare_sync() {
  return backend_->prepare_flush().prefixed(
      fmt::format("preparing to sync the session store {}", name_));
}

Status SessionStore::sync() {
  return sync_.sync_all().prefixed(fmt::format("syncing the session store {}", name_));
}

int64_t SessionStore::statements_prepared() {
  std::lock_guard<std::mutex> guard(mu_);
  return backend_->statements_prepared();
}

Result<std::unique_ptr<Session>> SessionStore::create(std::string_view title_text) {
  SessionSummary row;
  row.started_ms = now_unix_ms();
  row.updated_ms = row.started_ms;
  row.title = make_title(title_text);
  row.work_tree = work_tree_;
  Status last = Status::error("could not find a free session id");
  for (int attempt = 0; attempt < 8; ++attempt) {
    row.id = new_session_id(row.started_ms);
    std::lock_guard<std::mutex> guard(mu_);
    auto lock = backend_->lock(row.id);
    if (!lock) {  // most likely another process creating this very id: draw again
      last = lock.status();
      continue;
    }
    auto inserted = backend_->insert_session(row);
    if (!inserted) return inserted.status().prefixed("creating a session");
    if (!*inserted) continue;  // the id is taken
    const uint64_t ticket = sync_.committed();
    auto session = std::unique_ptr<Session>(
        new Session(this, std::move(*lock), row.id, row.title, row.started_ms, {}));
    session->last_commit_ = ticket;  // the session's row, synced with its first records
    return session;
  }
  return last.prefixed("creating a session");
}

Result<std::unique_ptr<Session>> SessionStore::open_session(std::string_view id) {
  if (!valid_id_ref(id)) return Status::usage(fmt::format("no session {}", id));
  std::lock_guard<std::mutex> guard(mu_);
  auto lock = backend_->lock(std::string(id));
  if (!lock) return lock.status();
  // On an error below, the lock goes with this frame (the mutex is still held: the
  // backend's unlock runs under it, as ~Session's does).
  auto sum = summary_locked(id);
  if (!sum) return sum.status();
  auto log = backend_->read_log(id);
  if (!log) return log.status();
  return std::unique_ptr<Session>(
      new Session(this, std::move(*lock), sum->id, sum->title, sum->started_ms, std::move(*log)));
}

Result<std::string> SessionStore::resolve(std::string_view ref) {
  std::lock_guard<std::mutex> guard(mu_);
  if (ref == "last") {
    auto last = backend_->last_written(work_tree_);
    if (!last) return last.status();
    if (!*last) {
      if (work_tree_.empty()) {
        return Status::usage(fmt::format("there are no sessions in {} yet", name_));
      }
      return Status::usage(
          fmt::format("there are no sessions of the work tree {} in {} yet", work_tree_, name_));
    }
    return **last;
  }
  if (!valid_id_ref(ref)) {
    return Status::usage(fmt::format(
        "\"{}\" is not a session id (ids look like 20261129-193012-k3f9; or use \"last\")", ref));
  }
  auto found = backend_->ids_starting_with(ref, 3);
  if (!found) return found.status();
  for (const std::string& id : *found) {
    if (id == ref) return id;
  }
  if (found->empty()) return Status::usage(fmt::format("no session {} in {}", ref, name_));
  if (found->size() > 1) {
    return Status::usage(fmt::format("session id prefix {} is ambiguous: it matches {}, {}{}", ref,
                                     (*found)[0], (*found)[1],
                                     found->size() > 2 ? " and more" : ""));
  }
  return (*found)[0];
}

Result<std::vector<SessionSummary>> SessionStore::list(std::optional<std::string> work_tree) {
  std::lock_guard<std::mutex> guard(mu_);
  return backend_->list(work_tree);
}

Result<SessionSummary> SessionStore::summary(std::string_view id) {
  std::lock_guard<std::mutex> guard(mu_);
  return summary_locked(id);
}

Result<SessionSummary> SessionStore::summary_locked(std::string_view id) {
  auto sum = backend_->summary(id);
  if (!sum) return sum.status();
  if (!*sum) return Status::usage(fmt::format("no session {} in {}", id, name_));
  return std::move(**sum);
}

Result<std::vector<Record>> SessionStore::read_records(std::string_view id) {
  std::lock_guard<std::mutex> guard(mu_);
  auto sum = summary_locked(id);
  if (!sum) return sum.status();
  auto log = backend_->read_log(id);
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

Result<uint64_t> SessionStore::append_locked(const std::string& id, const Record& r,
                                             const StoredRecord& stored) {
  SessionSummary delta;
  summarize({r}, &delta);
  std::string title;
  if (r.kind == RecordKind::kUserMessage) {
    if (auto m = r.body.find("message"); m != r.body.end()) {
      if (auto message = message_from_json(*m, "message")) title = make_title(message->text());
    }
  }
  MECHA_RETURN_IF_ERROR(backend_->append(AppendRow{id, stored, delta, title}));
  return sync_.committed();
}

Status SessionStore::remove(std::string_view id) {
  if (!valid_id_ref(id)) return Status::usage(fmt::format("no session {}", id));
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> guard(mu_);
    auto lock = backend_->lock(std::string(id));
    if (!lock) return lock.status();
    auto removed = backend_->remove(id);
    if (!removed) return removed.status();
    if (!*removed) return Status::usage(fmt::format("no session {} in {}", id, name_));
    ticket = sync_.committed();
  }
  return sync_.sync_through(ticket).prefixed(fmt::format("removing session {}", id));
}

}  // namespace mecha::store
