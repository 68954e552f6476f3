// Outbox: the messages SendMessage was asked to send, kept for a person to approve
// (seed 000: sends are staged in an outbox). Every message is recorded here before anything
// else happens to it; its status then says what became of it:
//   held      waiting for a person (`mecha outbox approve N` or an approval in chat/serve);
//             `reason` says why it was held
//   sent      delivered; `decided` is when
//   rejected  a person said no
//   failed    delivery was tried and failed; `reason` is the error
//
// A SQLite file of its own ([messaging] outbox, else outbox.db in the state directory), 0600
// with its side files, in a 0700 folder: the model's sandbox never sees it, and nothing a
// model runs can approve a message.
//
// Invariants:
//   1. Messages are never deleted; ids are never reused.
//   2. set_status with `from` changes the status only when it is still `from`, in one
//      statement: two people approving at once deliver once.
//   3. A message's content (recipient, subject, body) is never changed: nothing here updates
//      it, and add() seals it (content_seal, kept beside it). unchanged() tells whether a row
//      still holds what was sealed, so an approval delivers exactly what was held and shown,
//      and a row changed behind the outbox's back (the file edited) is refused, not sent.
//
// Thread-safety: one mutex guards the connection; any thread may call any method.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/sqlite.h"

namespace mecha::store {

enum class OutboxStatus { kHeld, kSent, kRejected, kFailed };

std::string_view outbox_status_name(OutboxStatus s);

struct OutboxMessage {
  int64_t id = 0;          // assigned by add()
  int64_t created_ms = 0;  // assigned by add()
  std::string session;     // the session whose run asked; "" when none
  std::string agent;       // the agent that asked ("main", a subagent's name)
  std::string to;
  std::string subject;
  std::string body;
  OutboxStatus status = OutboxStatus::kHeld;
  std::string reason;
  std::optional<int64_t> decided_ms;  // when it was sent, rejected or failed
  // content_seal() of to, subject and body when add() recorded them (invariant 3). Messages
  // recorded before seals existed were sealed when their outbox was first opened by a mecha
  // that seals.
  std::string seal;

  // Whether the content is still what was sealed (invariant 3).
  bool unchanged() const;
};

// SHA-256, as 64 hex digits, of a message's recipient, subject and body, each preceded by its
// length, so that no two different contents share a seal.
std::string content_seal(std::string_view to, std::string_view subject, std::string_view body);

class Outbox {
 public:
  // Opens (creating when absent) the outbox at `path`; its folder is created 0700.
  static Result<std::unique_ptr<Outbox>> open(const std::filesystem::path& path);

  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Records `m` (its id, created_ms and seal are ignored; the seal is made here) and returns
  // its id.
  Result<int64_t> add(const OutboxMessage& m);
  // nullopt when no message has that id.
  Result<std::optional<OutboxMessage>> get(int64_t id);
  // Oldest first; only those of `only` when given.
  Result<std::vector<OutboxMessage>> list(std::optional<OutboxStatus> only = std::nullopt);
  // Sets the status, reason and (but for held) the decision time. With `from`, only a message
  // whose status is still `from` changes (invariant 2). False when nothing changed.
  Result<bool> set_status(int64_t id, OutboxStatus to, const std::string& reason,
                          std::optional<OutboxStatus> from = std::nullopt);

  const std::filesystem::path& path() const { return path_; }

 private:
  Outbox(std::filesystem::path path, Database db) : path_(std::move(path)), db_(std::move(db)) {}

  std::filesystem::path path_;
  std::mutex mu_;
  Database db_;  // guarded by mu_
};

// Where the outbox is: `configured` ([messaging] outbox) when set, else outbox.db in the
// private state directory (created 0700).
Result<std::filesystem::path> outbox_path(const std::optional<std::filesystem::path>& configured);

}  // namespace mecha::store
