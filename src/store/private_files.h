// The files of a SQLite database that holds what the user keeps from the model (notes, the
// outbox): the database and its side files (-wal, -shm, -journal) are regular files of this
// user, never symbolic links, and readable by nobody else.
#pragma once

#include <filesystem>

#include "base/result.h"

namespace mecha::store {

// Creates `db` 0600 when missing and tightens it and any side file to 0600. Refused, naming
// the file: a symbolic link, something that is not a regular file, another user's file.
// Call it before opening the database and again after (WAL mode makes -wal and -shm).
Status make_private_files(const std::filesystem::path& db);

}  // namespace mecha::store
