#include "store/open_store.h"

#include "store/postgres_backend.h"
#include "store/postgres_url.h"

namespace mecha::store {

Result<std::unique_ptr<SessionStore>> open_store(std::string_view spec, std::string work_tree) {
  if (!is_postgres_url(spec)) return SessionStore::open(std::string(spec), std::move(work_tree));
  auto backend = PostgresBackend::open(spec);
  if (!backend) return backend.status();
  return SessionStore::with_backend(std::move(*backend), std::move(work_tree));
}

}  // namespace mecha::store
