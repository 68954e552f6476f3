// open_store: the session store a `--store` value names.
//
//   postgresql://... or postgres://...   a PostgreSQL database (postgres_backend.h)
//   anything else                        the SQLite file at that path (sqlite_backend.h)
//
// Errors name the store (the URL without its password) and what went wrong: a malformed URL,
// a server that cannot be reached, a role without the rights it needs.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/session_store.h"

namespace mecha::store {

// `work_tree` as SessionStore::open() says.
Result<std::unique_ptr<SessionStore>> open_store(std::string_view spec, std::string work_tree = "");

}  // namespace mecha::store
