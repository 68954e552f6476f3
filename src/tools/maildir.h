// Maildir: read access to a mailbox in the Maildir format (new/ for mail nobody has looked at,
// cur/ for the rest, flags after ":2," in the file name, S meaning seen). Reading never
// changes the mailbox: no file is moved or renamed, so reading does not mark mail read.
//
// A message's id is its file's unique name (the part before ':'). An id that comes from the
// model is checked before it is used: no '/', no NUL, not "." or "..", no "..", at most 255
// bytes, and it must name a regular file directly in new/ or cur/ (a symlink is refused), so
// an id cannot reach a file outside the mailbox.
//
// Sizes are bounded: a listing reads at most kHeaderBytes of each file; a message read reads
// at most kMaxMailBytes and says so when there was more.
//
// Thread-safety: a Maildir holds only its path; use it from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"
#include "tools/mail_parse.h"

namespace mecha::tools {

struct MailSummary {
  std::string id;
  bool unread = false;  // in new/, or in cur/ without the S flag
  MailHeaders headers;
};

struct MailMessage {
  std::string id;
  bool unread = false;
  ParsedMail mail;
};

class Maildir {
 public:
  static constexpr size_t kHeaderBytes = 64 * 1024;
  static constexpr size_t kMaxMailBytes = 4 * 1024 * 1024;
  static constexpr size_t kMaxBodyBytes = 100 * 1024;

  explicit Maildir(std::filesystem::path root) : root_(std::move(root)) {}

  // Newest first (by delivery time, the file's modification time), at most `limit`; only
  // unread mail when `unread_only`. An error names the mailbox when it has no new/ or cur/.
  Result<std::vector<MailSummary>> list(size_t limit, bool unread_only) const;

  // The message `id`, parsed. An invalid id, or one that names no message, is an error that
  // says which.
  Result<MailMessage> read(const std::string& id) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

// Whether `id` may be looked up at all (the checks of the header comment, before the files).
Status check_mail_id(const std::string& id);

}  // namespace mecha::tools
