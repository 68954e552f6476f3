#include "config/trust_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/sha256.h"
#include "base/state_dir.h"

namespace mecha::config {
namespace {

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Result<std::filesystem::path> TrustStore::default_file() {
  auto dir = user_state_dir();
  if (!dir) return dir.status();
  return *dir / "trusted-configs";
}

Result<TrustStore> TrustStore::load(const std::filesystem::path& file) {
  TrustStore store(file);
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    if (errno == ENOENT) return store;
    return Status::error(
        fmt::format("cannot read the trust records {}: {}", file.string(), std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 0022) != 0) {
    return Status::error(fmt::format(
        "the trust records {} are not a regular file of yours closed to others' writes; "
        "nothing is trusted until it is (chmod 600 {})",
        file.string(), shell_quoted(file.string())));
  }
  std::ifstream in(file, std::ios::binary);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line.size() < 67 || !is_hex64(std::string_view(line).substr(0, 64)) ||
        line.compare(64, 2, "  ") != 0 || line[66] != '/') {
      return Status::error(fmt::format(
          "{}:{}: a trust record is \"<sha256>  <absolute path>\"; run mecha trust --list, or "
          "remove the line",
          file.string(), n));
    }
    store.records_.push_back({line.substr(0, 64), line.substr(66)});
  }
  return store;
}

TrustVerdict TrustStore::check(const std::string& canonical_path, const std::string& sha256) const {
  bool seen = false;
  for (const auto& r : records_) {
    if (r.path != canonical_path) continue;
    if (r.sha256 == sha256) return TrustVerdict::kTrusted;
    seen = true;
  }
  return seen ? TrustVerdict::kChanged : TrustVerdict::kUntrusted;
}

Status TrustStore::trust(const std::string& canonical_path, const std::string& sha256) {
  if (canonical_path.find('\n') != std::string::npos || !canonical_path.starts_with('/')) {
    return Status::error(
        fmt::format("cannot trust {}: only an absolute path without a line break can be recorded",
                    canonical_path));
  }
  std::erase_if(records_, [&](const TrustRecord& r) { return r.path == canonical_path; });
  records_.push_back({sha256, canonical_path});
  return save();
}

Result<bool> TrustStore::revoke(const std::string& canonical_path) {
  size_t before = records_.size();
  std::erase_if(records_, [&](const TrustRecord& r) { return r.path == canonical_path; });
  if (records_.size() == before) return false;
  MECHA_RETURN_IF_ERROR(save());
  return true;
}

Status TrustStore::save() const {
  MECHA_RETURN_IF_ERROR(make_private_dir(file_.parent_path()));
  std::string text;
  for (const auto& r : records_) text += r.sha256 + "  " + r.path + "\n";
  std::filesystem::path tmp = file_;
  tmp += fmt::format(".{}.tmp", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Status::error(
        fmt::format("cannot write the trust records {}: {}", tmp.string(), std::strerror(errno)));
  }
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), file_.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::error(fmt::format("cannot write the trust records {}: {}", file_.string(), why));
  }
  return ok_status();
}

FileIdentity identify(const std::filesystem::path& file, std::string_view content) {
  // Symlinks are not resolved: a tree whose .mecha (or config.toml) links to a file trusted
  // for another tree must not inherit that trust.
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(file, ec);
  return {(ec ? file : abs).lexically_normal().string(), sha256_hex(content)};
}

std::string shell_quoted(const std::string& path) {
  bool safe = !path.empty() && std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+,:@%", c) != nullptr;
  });
  if (safe) return path;
  std::string out = "'";
  for (char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace mecha::config
