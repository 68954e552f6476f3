// The files of a SQLite database that holds what the user keeps from the model (notes, the
// outbox): the database and its side files (-wal, -shm, -journal) are regular files of this
// user, never symbolic links, and readable by nobody else.
#pragma once

#include <filesystem>

#include <string>

#include "base/result.h"
#include "store/sqlite.h"

namespace mecha::store {

// Creates `db` 0600 when missing and tightens it and any side file to 0600. Refused, naming
// the file: a symbolic link, something that is not a regular file, another user's file.
// Call it before opening the database and again after (WAL mode makes -wal and -shm).
Status make_private_files(const std::filesystem::path& db);

// Opens the database at `path` for what the user keeps private: its folder made private
// (base/state_dir.h) when missing, its files as make_private_files() says, never through a
// symbolic link, in WAL mode with full syncs, waiting up to `busy_timeout_ms` for another
// process. `where` ("note store /path") begins every error. The caller makes its schema and
// calls make_private_files() again (the first write makes the -wal and -shm files).
Result<Database> open_private_database(const std::filesystem::path& path, int busy_timeout_ms,
                                       const std::string& where);

}  // namespace mecha::store
