// NoteStore: the user's notes, kept for later runs by Remember and found again by Recall
// (tools/memory_tools.h), in one SQLite file with an FTS5 index over each note's text and
// tags. `mecha memory` lists, shows, searches and removes them.
//
// Taint follows data (DESIGN.md, security model 1): a note written while its run held
// untrusted content is stored `tainted`, and whoever recalls it reads an attacker's text.
//
// The file is [memory] file, else notes.db in the user's state directory. It is created
// 0600 (its -wal and -shm files too), and refused when it is a symbolic link, not a regular
// file, or owned by another user: notes decide what later runs believe.
//
// Invariants:
//   1. A note is never updated (a trigger refuses it): its text, tags and taint are those it
//      was written with, until remove() deletes it whole. Nothing clears a taint.
//   2. Ids grow and are never reused, so a removed note's id never names another note.
//   3. A search query is never handed to FTS5 as syntax: it is cut into tokens by the index's
//      own tokenizer, and each token is searched for as a quoted string. No text makes a
//      query fail or match by an operator (OR, NEAR, *, -, column filters).
//
// Thread-safety: one mutex guards the connection; any thread may call any method. Several
// processes may share the file: writers wait for each other up to kBusyTimeoutMs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/sqlite.h"

namespace mecha::store {

struct Note {
  int64_t id = 0;
  std::string created;  // ISO 8601 UTC, to the millisecond
  std::string text;
  std::vector<std::string> tags;
  bool tainted = false;  // written while its run held untrusted content
  std::string session;   // the session that wrote it; empty when none was recorded
  bool operator==(const Note&) const = default;
};

class NoteStore {
 public:
  static constexpr size_t kMaxTextBytes = 64 * 1024;
  static constexpr size_t kMaxTags = 16;
  static constexpr size_t kMaxTagBytes = 64;
  static constexpr size_t kMaxQueryTerms = 32;
  static constexpr int kMaxLimit = 1000;
  // A query word held by more notes than this is left out of the search when another word of
  // the query is held by fewer: it would rank next to nothing, at great cost.
  static constexpr int64_t kCommonWordNotes = 1000;

  // Opens or creates the store at `path`. A missing parent directory is created 0700.
  static Result<std::unique_ptr<NoteStore>> open(const std::filesystem::path& path);

  NoteStore(const NoteStore&) = delete;
  NoteStore& operator=(const NoteStore&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Stores a note and returns its id. Refused: empty text (only white space), text over
  // kMaxTextBytes, more than kMaxTags tags, a tag empty, over kMaxTagBytes or holding a
  // control character. Tags are kept in the order given, duplicates dropped.
  Result<int64_t> add(std::string_view text, const std::vector<std::string>& tags, bool tainted,
                      std::string_view session);
  // The notes that hold any of the query's words: those holding every word first, then the
  // rest, each part ranked by bm25 over text and tags (a tag weighs twice a word of text).
  // Words held by very many notes are left out when a rarer one is there (kCommonWordNotes).
  // An error names a query with no words in it, or one of more than kMaxQueryTerms words.
  // `limit` is clamped to 1..kMaxLimit.
  Result<std::vector<Note>> search(std::string_view query, int limit);
  // The newest `limit` notes after skipping `offset`, newest first.
  Result<std::vector<Note>> list(int limit, int offset);
  // The note with this id; an error naming it when there is none.
  Result<Note> get(int64_t id);
  // Deletes the note; an error naming it when there is none.
  Status remove(int64_t id);
  Result<int64_t> count();

 private:
  NoteStore(std::filesystem::path path, Database db);
  Result<std::vector<std::string>> query_tokens_locked(std::string_view query);

  const std::filesystem::path path_;
  std::mutex mu_;
  Database db_;  // GUARDED_BY(mu_)
};

// The default file: private_state_dir() / "notes.db" (the directory made private).
Result<std::filesystem::path> default_notes_path();

}  // namespace mecha::store
