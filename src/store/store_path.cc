#include "store/store_path.h"

#include "base/state_dir.h"

namespace mecha::store {

Result<std::filesystem::path> default_store_path() {
  auto dir = user_state_dir();
  if (!dir) return dir.status();
  return *dir / "sessions.db";
}

std::filesystem::path legacy_store_path(const std::filesystem::path& work_tree) {
  return work_tree / ".mecha" / "sessions.db";
}

}  // namespace mecha::store
