#include "tools/maildir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "base/json_limits.h"
#include "base/unique_fd.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string id;
  bool unread = false;
  fs::path path;
  fs::file_time_type mtime;
};

std::string id_of(const std::string& file_name) { return file_name.substr(0, file_name.find(':')); }

bool seen_flag(const std::string& file_name) {
  size_t info = file_name.find(":2,");
  return info != std::string::npos && file_name.find('S', info + 3) != std::string::npos;
}

// The regular files directly in new/ and cur/ (dot files are a client's own, skipped).
Result<std::vector<Entry>> entries(const fs::path& root) {
  std::vector<Entry> out;
  bool any_dir = false;
  for (const char* sub : {"new", "cur"}) {
    std::error_code ec;
    fs::directory_iterator it(root / sub, ec);
    if (ec) continue;
    any_dir = true;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.') continue;
      std::error_code sec;
      if (!it->is_regular_file(sec) || it->is_symlink(sec)) continue;
      Entry e;
      e.id = id_of(name);
      e.unread = std::string_view(sub) == "new" || !seen_flag(name);
      e.path = it->path();
      e.mtime = it->last_write_time(sec);
      out.push_back(std::move(e));
    }
  }
  if (!any_dir) {
    return Status::error(
        fmt::format("{} is not a Maildir (it has no readable new/ or cur/); check [mail] maildir",
                    root.string()));
  }
  return out;
}

// At most `max` bytes of `path`, never through a symlink; `more` says whether the file held more.
Result<std::string> read_prefix(const fs::path& path, size_t max, bool* more) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  }
  std::string out;
  out.resize(max + 1);
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  *more = got > max;
  out.resize(std::min(got, max));
  return out;
}

}  // namespace

Status check_mail_id(const std::string& id) {
  const std::string shown = replace_invalid_utf8(id.substr(0, 80));
  if (id.empty()) return Status::error("a message id is needed (ReadInbox lists them)");
  if (id.size() > 255)
    return Status::error("message id is longer than 255 bytes: not a message id");
  if (id.find('/') != std::string::npos || id.find('\0') != std::string::npos ||
      id.find("..") != std::string::npos || id == "." || id.find(':') != std::string::npos) {
    return Status::error(fmt::format(
        "'{}' is not a message id: an id is a file name of the mailbox, without '/', '..' or ':' "
        "(ReadInbox lists them)",
        shown));
  }
  return ok_status();
}

Result<std::vector<MailSummary>> Maildir::list(size_t limit, bool unread_only) const {
  auto all = entries(root_);
  if (!all) return all.status();
  std::erase_if(*all, [&](const Entry& e) { return unread_only && !e.unread; });
  std::sort(all->begin(), all->end(), [](const Entry& a, const Entry& b) {
    if (a.mtime != b.mtime) return a.mtime > b.mtime;
    return a.id > b.id;
  });
  std::vector<MailSummary> out;
  for (const Entry& e : *all) {
    if (out.size() >= limit) break;
    bool more = false;
    auto head = read_prefix(e.path, kHeaderBytes, &more);
    if (!head) continue;  // gone since the listing (another client moved it)
    out.push_back(MailSummary{e.id, e.unread, parse_mail_headers(*head)});
  }
  return out;
}

Result<MailMessage> Maildir::read(const std::string& id) const {
  MECHA_RETURN_IF_ERROR(check_mail_id(id));
  auto all = entries(root_);
  if (!all) return all.status();
  auto it = std::find_if(all->begin(), all->end(), [&](const Entry& e) { return e.id == id; });
  if (it == all->end()) {
    return Status::error(
        fmt::format("no message with id '{}' in the mailbox (ReadInbox lists the ids)", id));
  }
  bool more = false;
  auto raw = read_prefix(it->path, kMaxMailBytes, &more);
  if (!raw) return raw.status();
  MailMessage m;
  m.id = id;
  m.unread = it->unread;
  m.mail = parse_mail(*raw, kMaxBodyBytes);
  if (more) {
    m.mail.notes.push_back(
        fmt::format("the mail is larger than {} bytes; only its first {} bytes were read",
                    kMaxMailBytes, kMaxMailBytes));
  }
  return m;
}

}  // namespace mecha::tools
