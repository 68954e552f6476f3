#include "store/outbox.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "base/sha256.h"
#include "base/state_dir.h"
#include "store/private_files.h"
#include "store/record.h"
#include "store/session_store.h"

namespace mecha::store {
namespace {

constexpr const char* kOutboxSchema = R"sql(
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created INTEGER NOT NULL,
  session TEXT NOT NULL,
  agent TEXT NOT NULL,
  recipient TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  decided INTEGER
);
)sql";

// Version 1 seals each message's content (invariant 3); rows from before it are sealed then.
constexpr const char* kOutboxSchemaV1 =
    "ALTER TABLE outbox ADD COLUMN content_sha256 TEXT NOT NULL DEFAULT ''";
constexpr int64_t kOutboxSchemaVersion = 1;

constexpr const char* kOutboxColumns =
    "id, created, session, agent, recipient, subject, body, status, reason, decided, "
    "content_sha256";

std::optional<OutboxStatus> status_named(std::string_view name) {
  for (OutboxStatus s :
       {OutboxStatus::kHeld, OutboxStatus::kSent, OutboxStatus::kRejected, OutboxStatus::kFailed}) {
    if (outbox_status_name(s) == name) return s;
  }
  return std::nullopt;
}

Result<OutboxMessage> row(const Statement& st, const std::filesystem::path& path) {
  OutboxMessage m;
  m.id = st.column_int(0);
  m.created_ms = st.column_int(1);
  m.session = std::string(st.column_text(2));
  m.agent = std::string(st.column_text(3));
  m.to = std::string(st.column_text(4));
  m.subject = std::string(st.column_text(5));
  m.body = std::string(st.column_text(6));
  auto status = status_named(st.column_text(7));
  if (!status) {
    return Status::error(fmt::format("outbox {}: message {} has an unknown status '{}'",
                                     path.string(), m.id, st.column_text(7)));
  }
  m.status = *status;
  m.reason = std::string(st.column_text(8));
  if (!st.column_is_null(9)) m.decided_ms = st.column_int(9);
  m.seal = std::string(st.column_text(10));
  return m;
}

// Brings an outbox to kOutboxSchemaVersion, once, whichever process comes first.
Status migrate(Database& db) {
  auto version = db.user_version();
  if (!version) return version.status();
  if (*version > kOutboxSchemaVersion) {
    return Status::error(
        fmt::format("written by a newer mecha (schema version {}, this one "
                    "reads {})",
                    *version, kOutboxSchemaVersion));
  }
  if (*version == kOutboxSchemaVersion) return ok_status();
  auto tx = Transaction::begin(db);
  if (!tx) return tx.status();
  version = db.user_version();  // another process may have done it meanwhile
  if (!version) return version.status();
  if (*version < 1) {
    MECHA_RETURN_IF_ERROR(db.exec(kOutboxSchemaV1));
    auto rows = db.prepare("SELECT id, recipient, subject, body FROM outbox");
    if (!rows) return rows.status();
    std::vector<std::pair<int64_t, std::string>> seals;
    for (;;) {
      auto has = rows->step();
      if (!has) return has.status();
      if (!*has) break;
      seals.emplace_back(
          rows->column_int(0),
          content_seal(rows->column_text(1), rows->column_text(2), rows->column_text(3)));
    }
    for (const auto& [id, seal] : seals) {
      auto set = db.prepare("UPDATE outbox SET content_sha256 = ? WHERE id = ?");
      if (!set) return set.status();
      set->bind(1, seal);
      set->bind(2, id);
      MECHA_RETURN_IF_ERROR(set->run());
    }
    MECHA_RETURN_IF_ERROR(db.exec(fmt::format("PRAGMA user_version = {}", kOutboxSchemaVersion)));
  }
  return tx->commit();
}

}  // namespace

std::string content_seal(std::string_view to, std::string_view subject, std::string_view body) {
  std::string framed;
  for (std::string_view part : {to, subject, body}) {
    framed += std::to_string(part.size());
    framed += ':';
    framed += part;
  }
  return sha256_hex(framed);
}

bool OutboxMessage::unchanged() const {
  return !seal.empty() && seal == content_seal(to, subject, body);
}

std::string_view outbox_status_name(OutboxStatus s) {
  switch (s) {
    case OutboxStatus::kHeld:
      return "held";
    case OutboxStatus::kSent:
      return "sent";
    case OutboxStatus::kRejected:
      return "rejected";
    case OutboxStatus::kFailed:
      return "failed";
  }
  return "held";
}

Result<std::unique_ptr<Outbox>> Outbox::open(const std::filesystem::path& path) {
  const std::string where = fmt::format("outbox {}", path.string());
  auto db = open_private_database(path, kBusyTimeoutMs, where);
  if (!db) return db.status();
  MECHA_RETURN_IF_ERROR(db->exec(kOutboxSchema).prefixed(where));
  MECHA_RETURN_IF_ERROR(migrate(*db).prefixed(where));
  MECHA_RETURN_IF_ERROR(make_private_files(path).prefixed(where));
  return std::unique_ptr<Outbox>(new Outbox(path, std::move(*db)));
}

Result<int64_t> Outbox::add(const OutboxMessage& m) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(
      "INSERT INTO outbox (created, session, agent, recipient, subject, body, status, reason, "
      "decided, content_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!st) return st.status();
  st->bind(1, now_unix_ms());
  st->bind(2, m.session);
  st->bind(3, m.agent);
  st->bind(4, m.to);
  st->bind(5, m.subject);
  st->bind(6, m.body);
  st->bind(7, outbox_status_name(m.status));
  st->bind(8, m.reason);
  if (m.decided_ms) {
    st->bind(9, *m.decided_ms);
  } else {
    st->bind_null(9);
  }
  st->bind(10, content_seal(m.to, m.subject, m.body));
  MECHA_RETURN_IF_ERROR(st->run().prefixed(fmt::format("outbox {}", path_.string())));
  auto id = db_.prepare("SELECT last_insert_rowid()");
  if (!id) return id.status();
  auto has = id->step();
  if (!has) return has.status();
  return id->column_int(0);
}

Result<std::optional<OutboxMessage>> Outbox::get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(fmt::format("SELECT {} FROM outbox WHERE id = ?", kOutboxColumns));
  if (!st) return st.status();
  st->bind(1, id);
  auto has = st->step();
  if (!has) return has.status();
  if (!*has) return std::optional<OutboxMessage>();
  auto m = row(*st, path_);
  if (!m) return m.status();
  return std::optional<OutboxMessage>(std::move(*m));
}

Result<std::vector<OutboxMessage>> Outbox::list(std::optional<OutboxStatus> only) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(
      only ? fmt::format("SELECT {} FROM outbox WHERE status = ? ORDER BY id", kOutboxColumns)
           : fmt::format("SELECT {} FROM outbox ORDER BY id", kOutboxColumns));
  if (!st) return st.status();
  if (only) st->bind(1, outbox_status_name(*only));
  std::vector<OutboxMessage> out;
  for (;;) {
    auto has = st->step();
    if (!has) return has.status();
    if (!*has) break;
    auto m = row(*st, path_);
    if (!m) return m.status();
    out.push_back(std::move(*m));
  }
  return out;
}

Result<bool> Outbox::set_status(int64_t id, OutboxStatus to, const std::string& reason,
                                std::optional<OutboxStatus> from) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st =
      db_.prepare(from ? "UPDATE outbox SET status = ?, reason = ?, decided = ? WHERE id = "
                         "? AND status = ?"
                       : "UPDATE outbox SET status = ?, reason = ?, decided = ? WHERE id = ?");
  if (!st) return st.status();
  st->bind(1, outbox_status_name(to));
  st->bind(2, reason);
  if (to == OutboxStatus::kHeld) {
    st->bind_null(3);
  } else {
    st->bind(3, now_unix_ms());
  }
  st->bind(4, id);
  if (from) st->bind(5, outbox_status_name(*from));
  MECHA_RETURN_IF_ERROR(st->run().prefixed(fmt::format("outbox {}", path_.string())));
  return db_.changes() > 0;
}

Result<std::filesystem::path> outbox_path(const std::optional<std::filesystem::path>& configured) {
  if (configured) return *configured;
  auto dir = private_state_dir();
  if (!dir) return dir.status();
  return *dir / "outbox.db";
}

}  // namespace mecha::store
