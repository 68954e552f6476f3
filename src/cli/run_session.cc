#include "cli/run_session.h"

#include <unistd.h>

namespace mecha::cli {

std::filesystem::path store_path_for(const std::filesystem::path& work_tree,
                                     const std::string& store_flag) {
  if (!store_flag.empty()) return std::filesystem::absolute(store_flag);
  return work_tree / ".mecha" / "sessions.db";
}

Result<std::unique_ptr<RunSession>> RunSession::start(const std::filesystem::path& store_path,
                                                      const std::string& resume,
                                                      const std::string& prompt, Json run_info) {
  auto store = store::SessionStore::open(store_path);
  if (!store) return store.status();
  Result<std::unique_ptr<store::Session>> session = Status::error("unset");
  if (resume.empty()) {
    session = (*store)->create(prompt);
  } else {
    auto id = (*store)->resolve(resume);
    if (!id) return id.status();
    session = (*store)->open_session(*id);
  }
  if (!session) return session.status();
  run_info["pid"] = static_cast<int64_t>(getpid());
  run_info["resumed"] = !resume.empty();
  std::unique_ptr<RunSession> rs(new RunSession(std::move(*store), std::move(*session)));
  auto seq = rs->session_->append(store::Record::run_start(std::move(run_info)));
  if (!seq) return seq.status();
  seq = rs->session_->append(store::Record::user_message(Message::user_text(prompt)));
  if (!seq) return seq.status();
  return rs;
}

Status RunSession::finish(const agent::Outcome& o) {
  auto seq = session_->append(store::Record::run_end(agent::run_end_body(o, *session_)));
  return seq.status();
}

}  // namespace mecha::cli
