// Where the session store lives by default: sessions.db in the user's state directory
// (base/state_dir.h), one database for every work tree. Never inside a work tree, where
// commands the model runs could rewrite the log and clear its taint.
#pragma once

#include <filesystem>

#include "base/result.h"

namespace mecha::store {

// user_state_dir() / "sessions.db". Reads the environment; creates nothing.
Result<std::filesystem::path> default_store_path();

// Where stores lived before they left the tree: <work tree>/.mecha/sessions.db. Only read
// to tell the user about it (cli), never opened by default.
std::filesystem::path legacy_store_path(const std::filesystem::path& work_tree);

}  // namespace mecha::store
