// Copying and removing trees of files on the host, for work trees the model has had its
// hands on: nothing here follows a symlink, and a folder the run made unwritable or
// unreadable does not stop a removal.
#pragma once

#include <sys/stat.h>

#include <filesystem>

#include "base/result.h"

namespace mecha::batch {

// Copies the one entry `from` (whose lstat is `st`) to `to`, which must not exist: a folder
// is made (empty, with its mode plus the owner's access, so its copy can be filled), a
// regular file is copied with its mode and modification time, a symlink is copied as a
// symlink. Other kinds of file are skipped.
Status copy_entry(const std::filesystem::path& from, const std::filesystem::path& to,
                  const struct stat& st);

// Copies the files, folders and symlinks under `from` into `to` (created when missing),
// keeping modes and never following a symlink; other kinds of file are skipped.
Status copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Removes `path` and everything under it without following symlinks, making folders the
// run left unwritable writable first. A missing path is not an error.
Status remove_tree(const std::filesystem::path& path);

}  // namespace mecha::batch
