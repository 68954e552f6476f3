#include "cli/run_session.h"

#include <unistd.h>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "store/open_store.h"
#include "store/postgres_url.h"
#include "store/store_path.h"

namespace mecha::cli {

Result<std::filesystem::path> store_path_for(const std::string& store_flag) {
  if (store::is_postgres_url(store_flag)) return std::filesystem::path(store_flag);
  if (!store_flag.empty()) return std::filesystem::absolute(store_flag);
  auto path = store::default_store_path();
  if (!path) return path.status();
  MECHA_RETURN_IF_ERROR(make_private_dir(path->parent_path()));
  return path;
}

Result<std::filesystem::path> file_taint_path_for(const std::filesystem::path& store_path) {
  if (!store::is_postgres_url(store_path.string())) return store_path;
  return store_path_for("");
}

std::string legacy_store_note(const std::filesystem::path& work_tree,
                              const std::filesystem::path& store_path) {
  const std::filesystem::path old = store::legacy_store_path(work_tree);
  std::error_code ec;
  if (!std::filesystem::exists(old, ec) || old == store_path) return "";
  return fmt::format(
      "mecha: note: {old} is a session store of an older mecha, inside the work tree where "
      "sandboxed commands could rewrite it, so its sessions are not imported: their untrusted "
      "and private labels cannot be vouched for. Sessions are now kept in {store}. To read the "
      "old ones: mecha sessions list --store {old}; to stop this note, move {old} (with its "
      "-wal, -shm and -locks) out of the tree or delete it.\n",
      fmt::arg("old", old.string()), fmt::arg("store", store::shown_store(store_path.string())));
}

Result<RunStores> open_run_stores(const std::filesystem::path& store_path,
                                  const std::filesystem::path& work_tree) {
  RunStores stores;
  auto sessions = store::open_store(store_path.string(), work_tree.string());
  if (!sessions) return sessions.status();
  MECHA_RETURN_IF_ERROR((*sessions)->prepare_sync());
  stores.sessions = std::move(*sessions);
  // Files this run writes while it holds untrusted content are marked there, and files marked
  // there are untrusted to read (DESIGN.md, security model 1). It connects when a file tool
  // first asks: a run that touches no file pays nothing for it.
  auto taint_path = file_taint_path_for(store_path);
  if (!taint_path) return taint_path.status();
  stores.file_taint = store::FileTaint::open_on_first_use(*taint_path);
  return stores;
}

Result<std::unique_ptr<RunSession>> RunSession::start(std::unique_ptr<store::SessionStore> store,
                                                      const std::string& resume,
                                                      const std::string& prompt, Json run_info) {
  Result<std::unique_ptr<store::Session>> session = Status::error("unset");
  if (resume.empty()) {
    session = store->create(prompt);
  } else {
    auto id = store->resolve(resume);
    if (!id) return id.status();
    session = store->open_session(*id);
  }
  if (!session) return session.status();
  run_info["pid"] = static_cast<int64_t>(getpid());
  run_info["resumed"] = !resume.empty();
  std::unique_ptr<RunSession> rs(new RunSession(std::move(store), std::move(*session)));
  auto seq = rs->session_->append(store::Record::run_start(std::move(run_info)));
  if (!seq) return seq.status();
  seq = rs->session_->append(store::Record::user_message(Message::user_text(prompt)));
  if (!seq) return seq.status();
  return rs;
}

Status RunSession::finish(const agent::Outcome& o) {
  auto seq = session_->append(store::Record::run_end(agent::run_end_body(o, *session_)));
  if (!seq) return seq.status();
  // The run's last records reach the disk before it reports its end.
  return session_->sync();
}

}  // namespace mecha::cli
