#include "store/note_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/state_dir.h"
#include "store/private_files.h"
#include "store/record.h"
#include "store/session_store.h"

namespace mecha::store {
namespace {

// The index is external-content: it keeps only the tokens, and reads text and tags from
// `notes` by rowid. The triggers keep the two in step; a note is never updated (invariant 1).
// Tags are one per line (a tag holds no control character), so the tokenizer splits them.
constexpr std::string_view kNoteSchema = R"sql(
CREATE TABLE IF NOT EXISTS notes(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created TEXT NOT NULL,
  text TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '',
  tainted INTEGER NOT NULL DEFAULT 0,
  session TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
  text, tags, content='notes', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO notes_fts(notes_fts, rank) VALUES('rank', 'bm25(1.0, 2.0)');
CREATE TRIGGER IF NOT EXISTS notes_indexed AFTER INSERT ON notes BEGIN
  INSERT INTO notes_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_unindexed AFTER DELETE ON notes BEGIN
  INSERT INTO notes_fts(notes_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_never_updated BEFORE UPDATE ON notes BEGIN
  SELECT RAISE(ABORT, 'notes are never updated: remove one and remember it again');
END;
)sql";

constexpr int64_t kNoteSchemaVersion = 1;
constexpr std::string_view kNoteColumns = "id, created, text, tags, tainted, session";

std::vector<std::string> split_tags(std::string_view joined) {
  std::vector<std::string> tags;
  while (!joined.empty()) {
    size_t nl = joined.find('\n');
    tags.emplace_back(joined.substr(0, nl));
    if (nl == std::string_view::npos) break;
    joined.remove_prefix(nl + 1);
  }
  return tags;
}

Note read_note(const Statement& st) {
  Note n;
  n.id = st.column_int(0);
  n.created = std::string(st.column_text(1));
  n.text = std::string(st.column_text(2));
  n.tags = split_tags(st.column_text(3));
  n.tainted = st.column_int(4) != 0;
  n.session = std::string(st.column_text(5));
  return n;
}

Status check_tags(const std::vector<std::string>& tags) {
  if (tags.size() > NoteStore::kMaxTags) {
    return Status::error(fmt::format("a note has at most {} tags; this one has {}",
                                     NoteStore::kMaxTags, tags.size()));
  }
  for (const std::string& tag : tags) {
    if (tag.empty()) return Status::error("a tag is empty");
    if (tag.size() > NoteStore::kMaxTagBytes) {
      return Status::error(fmt::format("the tag '{}…' is longer than {} bytes", tag.substr(0, 20),
                                       NoteStore::kMaxTagBytes));
    }
    if (std::any_of(tag.begin(), tag.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      return Status::error(
          fmt::format("the tag {} holds a control character",
                      Json(tag).dump(-1, ' ', false, Json::error_handler_t::replace)));
    }
  }
  return ok_status();
}

// Collects what FTS5's tokenizer makes of a query, as the index would see it.
int collect_token(void* ctx, int flags, const char* token, int size, int, int) {
  if ((flags & FTS5_TOKEN_COLOCATED) == 0) {
    static_cast<std::vector<std::string>*>(ctx)->emplace_back(token, static_cast<size_t>(size));
  }
  return SQLITE_OK;
}

std::string quoted_query(std::string_view query) {
  return Json(std::string(query)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

Result<std::filesystem::path> default_notes_path() {
  auto dir = private_state_dir();
  if (!dir) return dir.status();
  return *dir / "notes.db";
}

NoteStore::NoteStore(std::filesystem::path path, Database db)
    : path_(std::move(path)), db_(std::move(db)) {}

Result<std::unique_ptr<NoteStore>> NoteStore::open(const std::filesystem::path& path) {
  const std::string where = fmt::format("note store {}", path.string());
  auto db = open_private_database(path, kBusyTimeoutMs, where);
  if (!db) return db.status();
  auto version = db->user_version();
  if (!version) return version.status().prefixed(where);
  if (*version > kNoteSchemaVersion) {
    return Status::error(
        fmt::format("{}: written by a newer mecha (schema version {}, this one "
                    "reads {})",
                    where, *version, kNoteSchemaVersion));
  }
  if (*version < kNoteSchemaVersion) {
    auto tx = Transaction::begin(*db);
    if (!tx) return tx.status().prefixed(where);
    version = db->user_version();  // another process may have made it meanwhile
    if (!version) return version.status().prefixed(where);
    if (*version < 1) {
      MECHA_RETURN_IF_ERROR(db->exec(kNoteSchema).prefixed(where));
      MECHA_RETURN_IF_ERROR(
          db->exec(fmt::format("PRAGMA user_version = {}", kNoteSchemaVersion)).prefixed(where));
    }
    MECHA_RETURN_IF_ERROR(tx->commit().prefixed(where));
  }
  MECHA_RETURN_IF_ERROR(make_private_files(path).prefixed(where));  // WAL made -wal, -shm
  return std::unique_ptr<NoteStore>(new NoteStore(path, std::move(*db)));
}

Result<int64_t> NoteStore::add(std::string_view text, const std::vector<std::string>& tags,
                               bool tainted, std::string_view session) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::error("the note is empty: there is nothing to remember");
  }
  if (text.size() > kMaxTextBytes) {
    return Status::error(fmt::format("the note is {} bytes; a note holds at most {} bytes (64 KiB)",
                                     text.size(), kMaxTextBytes));
  }
  MECHA_RETURN_IF_ERROR(check_tags(tags));
  std::vector<std::string> kept;
  for (const std::string& t : tags) {
    if (std::find(kept.begin(), kept.end(), t) == kept.end()) kept.push_back(t);
  }
  std::string joined;
  for (const std::string& t : kept) joined += (joined.empty() ? "" : "\n") + t;

  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(
      "INSERT INTO notes(created, text, tags, tainted, session) VALUES(?, ?, ?, ?, ?) "
      "RETURNING id");
  if (!st) return st.status();
  st->bind(1, iso8601_utc(now_unix_ms()));
  st->bind(2, text);
  st->bind(3, joined);
  st->bind(4, int64_t{tainted ? 1 : 0});
  st->bind(5, session);
  auto row = st->step();
  if (!row) return row.status().prefixed("note store: adding a note");
  if (!*row) return Status::error("note store: adding a note returned no id");
  const int64_t id = st->column_int(0);
  auto done = st->step();  // finishes the statement, which commits the insert
  if (!done) return done.status().prefixed("note store: adding a note");
  return id;
}

Result<std::vector<std::string>> NoteStore::query_tokens_locked(std::string_view query) {
  // The one way to reach FTS5's tokenizer: SELECT fts5(?1) hands back its API through a
  // typed pointer, which the Statement wrapper does not bind.
  fts5_api* api = nullptr;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.handle(), "SELECT fts5(?1)", -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return Status::error(fmt::format("note store: FTS5 is missing from this SQLite: {}",
                                     sqlite3_errmsg(db_.handle())));
  }
  sqlite3_bind_pointer(raw, 1, &api, "fts5_api_ptr", nullptr);
  sqlite3_step(raw);
  sqlite3_finalize(raw);
  if (api == nullptr) return Status::error("note store: FTS5 is missing from this SQLite");
  void* user = nullptr;
  fts5_tokenizer tokenizer{};
  if (api->xFindTokenizer(api, "unicode61", &user, &tokenizer) != SQLITE_OK) {
    return Status::error("note store: FTS5 has no unicode61 tokenizer");
  }
  const char* args[] = {"remove_diacritics", "2"};
  Fts5Tokenizer* tok = nullptr;
  if (tokenizer.xCreate(user, args, 2, &tok) != SQLITE_OK) {
    return Status::error("note store: cannot make FTS5's unicode61 tokenizer");
  }
  std::vector<std::string> tokens;
  int rc = tokenizer.xTokenize(tok, &tokens, FTS5_TOKENIZE_QUERY, query.data(),
                               static_cast<int>(query.size()), collect_token);
  tokenizer.xDelete(tok);
  if (rc != SQLITE_OK) {
    return Status::error(fmt::format("note store: cannot read the query {}", quoted_query(query)));
  }
  return tokens;
}

Result<std::vector<Note>> NoteStore::search(std::string_view query, int limit) {
  limit = std::clamp(limit, 1, kMaxLimit);
  std::lock_guard<std::mutex> lock(mu_);
  auto tokens = query_tokens_locked(query);
  if (!tokens) return tokens.status();
  std::vector<std::string> terms;
  for (std::string& t : *tokens) {
    if (std::find(terms.begin(), terms.end(), t) == terms.end()) terms.push_back(std::move(t));
  }
  if (terms.empty()) {
    return Status::error(
        fmt::format("the query {} has no words to search for (give a few words the note holds)",
                    quoted_query(query)));
  }
  if (terms.size() > kMaxQueryTerms) {
    return Status::error(fmt::format("the query {} has {} words; a search takes at most {}",
                                     quoted_query(query), terms.size(), kMaxQueryTerms));
  }
  // Each token as a quoted string ("" inside doubled, though unicode61 keeps no quote).
  std::vector<std::string> quoted;
  for (const std::string& t : terms) {
    std::string q = "\"";
    for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted.push_back(q + "\"");
  }
  // A word held by very many notes ranks next to nothing (bm25's weight falls to zero as it
  // nears half the notes) and costs the most to rank, so it is left out when the query has a
  // rarer word. Counting stops past the bound, so a common word costs little to find out.
  if (quoted.size() > 1) {
    auto df = db_.prepare(
        "SELECT count(*) FROM (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? LIMIT ?)");
    if (!df) return df.status();
    std::vector<std::string> rare;
    for (const std::string& q : quoted) {
      df->reset();
      df->bind(1, q);
      df->bind(2, kCommonWordNotes + 1);
      auto row = df->step();
      if (!row) return row.status().prefixed("note store: counting a word's notes");
      if (*row && df->column_int(0) <= kCommonWordNotes) rare.push_back(q);
    }
    if (!rare.empty()) quoted = std::move(rare);
  }
  // The ids first, ranked inside FTS5, then only the notes kept are read.
  auto st = db_.prepare(
      "SELECT n.id, n.created, n.text, n.tags, n.tainted, n.session FROM (SELECT rowid, rank "
      "FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rank LIMIT ?) AS hit JOIN notes n ON "
      "n.id = hit.rowid ORDER BY hit.rank");
  if (!st) return st.status();
  std::vector<Note> out;
  // Notes holding every word first, then those holding any, each part by bm25: in a store of
  // a few notes bm25 alone would put a note repeating one word before one holding them all.
  auto run = [&](const std::string& match) -> Status {
    st->reset();
    st->bind(1, match);
    st->bind(2, int64_t{limit});
    while (static_cast<int>(out.size()) < limit) {
      auto row = st->step();
      if (!row) {
        return row.status().prefixed(
            fmt::format("note store: searching for {}", quoted_query(query)));
      }
      if (!*row) break;
      Note n = read_note(*st);
      if (std::none_of(out.begin(), out.end(), [&](const Note& o) { return o.id == n.id; })) {
        out.push_back(std::move(n));
      }
    }
    return ok_status();
  };
  MECHA_RETURN_IF_ERROR(run(fmt::format("{}", fmt::join(quoted, " "))));
  if (quoted.size() > 1 && static_cast<int>(out.size()) < limit) {
    MECHA_RETURN_IF_ERROR(run(fmt::format("{}", fmt::join(quoted, " OR "))));
  }
  return out;
}

Result<std::vector<Note>> NoteStore::list(int limit, int offset) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(
      fmt::format("SELECT {} FROM notes ORDER BY id DESC LIMIT ? OFFSET ?", kNoteColumns));
  if (!st) return st.status();
  st->bind(1, int64_t{std::max(limit, 0)});
  st->bind(2, int64_t{std::max(offset, 0)});
  std::vector<Note> out;
  while (true) {
    auto row = st->step();
    if (!row) return row.status().prefixed("note store: listing notes");
    if (!*row) break;
    out.push_back(read_note(*st));
  }
  return out;
}

Result<Note> NoteStore::get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare(fmt::format("SELECT {} FROM notes WHERE id = ?", kNoteColumns));
  if (!st) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row) return row.status().prefixed(fmt::format("note store: reading note {}", id));
  if (!*row) return Status::error(fmt::format("no note {} in {}", id, path_.string()));
  return read_note(*st);
}

Status NoteStore::remove(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare("DELETE FROM notes WHERE id = ?");
  if (!st) return st.status();
  st->bind(1, id);
  MECHA_RETURN_IF_ERROR(st->run().prefixed(fmt::format("note store: removing note {}", id)));
  if (db_.changes() == 0) return Status::error(fmt::format("no note {} in {}", id, path_.string()));
  return ok_status();
}

Result<int64_t> NoteStore::count() {
  std::lock_guard<std::mutex> lock(mu_);
  auto st = db_.prepare("SELECT count(*) FROM notes");
  if (!st) return st.status();
  auto row = st->step();
  if (!row) return row.status().prefixed("note store: counting notes");
  return *row ? st->column_int(0) : 0;
}

}  // namespace mecha::store
