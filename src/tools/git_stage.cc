#include "tools/git_stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "base/state_dir.h"
#include "base/unique_fd.h"
#include "tools/git_metadata.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

// Folders of `.git` whose regular files are copied into the stage and carried back.
constexpr const char* kCopiedFolders[] = {"refs", "logs"};
// What a command may not leave at the stage's top, where the sandbox's own git would obey it
// in later commands: the control files of a repository and a linked work tree.
constexpr const char* kControl[] = {"config", "config.worktree", "commondir", "gitdir", "hooks",
                                    "info",   "modules"};

int64_t ns(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

bool is_in(std::string_view name, const auto& list) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// Copies regular file `name` of folder `from` to `name` of folder `to` (replacing it by a
// rename, so that a reader sees the old or the new file whole). Never follows a link.
Status copy_file_at(int from, int to, const std::string& name, const std::string& shown) {
  UniqueFd in(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st;
  if (!in.valid() || ::fstat(in.get(), &st) != 0)
    return Status::error(fmt::format("{} cannot be read: {}", shown, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Status::error(fmt::format("{} is not a regular file", shown));
  const std::string tmp = fmt::format(".{}.mecha-{}", name, ::getpid());
  UniqueFd out(::openat(to, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                        st.st_mode & 0666));
  if (!out.valid())
    return Status::error(fmt::format("{} cannot be written: {}", shown, std::strerror(errno)));
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::unlinkat(to, tmp.c_str(), 0);
      return Status::error(fmt::format("{} cannot be read: {}", shown, std::strerror(errno)));
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out.get(), buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        const int err = errno;
        ::unlinkat(to, tmp.c_str(), 0);
        return Status::error(fmt::format("{} cannot be written: {}", shown, std::strerror(err)));
      }
      done += w;
    }
  }
  out.reset();
  if (::renameat(to, tmp.c_str(), to, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(to, tmp.c_str(), 0);
    return Status::error(fmt::format("{} cannot be replaced: {}", shown, std::strerror(err)));
  }
  return ok_status();
}

// Opens (making it, and the folders on the way, when `make`) folder `rel` below `top`.
UniqueFd folder_at(const fs::path& top, const std::string& rel, bool make) {
  UniqueFd fd(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  size_t start = 0;
  while (fd.valid() && start < rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    const std::string part = rel.substr(start, end - start);
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    UniqueFd next(::openat(fd.get(), part.c_str(), flags));
    if (!next.valid() && errno == ENOENT && make && ::mkdirat(fd.get(), part.c_str(), 0755) == 0)
      next = UniqueFd(::openat(fd.get(), part.c_str(), flags));
    fd = std::move(next);
    start = end + 1;
  }
  return fd;
}

std::pair<std::string, std::string> split(const std::string& rel) {
  const auto slash = rel.rfind('/');
  if (slash == std::string::npos) return {"", rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

// When `to` (of size `to_size`) is what `from` begins with, appends the rest of `from` to it
// and returns true: how git itself writes a reflog, and no rename (which on ext4 waits for
// the new file's blocks when it replaces another).
bool appended(int from_dir, int to_dir, const std::string& name, off_t to_size) {
  UniqueFd in(::openat(from_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  UniqueFd out(
      ::openat(to_dir, name.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat in_st, out_st;
  if (!in.valid() || !out.valid() || ::fstat(in.get(), &in_st) != 0 ||
      ::fstat(out.get(), &out_st) != 0 || !S_ISREG(in_st.st_mode) || !S_ISREG(out_st.st_mode) ||
      out_st.st_size != to_size || in_st.st_size <= to_size)
    return false;
  std::string head(static_cast<size_t>(to_size), '\0'), have(static_cast<size_t>(to_size), '\0');
  if (::pread(in.get(), head.data(), head.size(), 0) != to_size ||
      ::pread(out.get(), have.data(), have.size(), 0) != to_size || head != have)
    return false;
  std::string rest(static_cast<size_t>(in_st.st_size - to_size), '\0');
  if (::pread(in.get(), rest.data(), rest.size(), to_size) != static_cast<ssize_t>(rest.size()))
    return false;
  return ::write(out.get(), rest.data(), rest.size()) == static_cast<ssize_t>(rest.size());
}

// Copies `rel` from `from_top` to `to_top`, or removes it there when it is gone from
// `from_top`. `to_size`: its size in `to_top` as last seen (-1: absent).
Status carry(const fs::path& from_top, const fs::path& to_top, const std::string& rel, bool present,
             const std::string& shown, int64_t to_size = -1) {
  auto [dir, leaf] = split(rel);
  if (!present) {
    UniqueFd to = folder_at(to_top, dir, false);
    if (to.valid() && ::unlinkat(to.get(), leaf.c_str(), 0) != 0 && errno != ENOENT)
      return Status::error(fmt::format("{} cannot be removed: {}", shown, std::strerror(errno)));
    return ok_status();
  }
  UniqueFd from = folder_at(from_top, dir, false);
  UniqueFd to = folder_at(to_top, dir, true);
  if (!from.valid() || !to.valid())
    return Status::error(
        fmt::format("{}: its folder cannot be opened: {}", shown, std::strerror(errno)));
  if (to_size > 0 && rel.rfind("logs/", 0) == 0 && appended(from.get(), to.get(), leaf, to_size))
    return ok_status();
  return copy_file_at(from.get(), to.get(), leaf, shown);
}

bool same_bytes(const fs::path& a, const fs::path& b, const std::string& rel) {
  auto [dir, leaf] = split(rel);
  UniqueFd da = folder_at(a, dir, false), db = folder_at(b, dir, false);
  if (!da.valid() || !db.valid()) return false;
  UniqueFd fa(::openat(da.get(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  UniqueFd fb(::openat(db.get(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fa.valid() || !fb.valid()) return false;
  char x[16384], y[16384];
  for (;;) {
    const ssize_t n = ::read(fa.get(), x, sizeof x);
    const ssize_t m = ::read(fb.get(), y, sizeof y);
    if (n != m || n < 0) return false;
    if (n == 0) return true;
    if (std::memcmp(x, y, static_cast<size_t>(n)) != 0) return false;
  }
}

}  // namespace

const std::vector<std::string>& GitStage::data_files() {
  static const std::vector<std::string> files = {
      "HEAD",           "ORIG_HEAD",   "FETCH_HEAD",       "MERGE_HEAD",  "MERGE_MSG",
      "MERGE_MODE",     "AUTO_MERGE",  "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
      "COMMIT_EDITMSG", "TAG_EDITMSG", "SQUASH_MSG",       "index",       "packed-refs"};
  return files;
}

Result<std::unique_ptr<GitStage>> GitStage::create(const fs::path& git_dir,
                                                   const fs::path& parent) {
  struct stat st;
  if (::lstat((git_dir / "objects").c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error(fmt::format("{} has no objects folder", git_dir.string()));
  MECHA_RETURN_IF_ERROR(make_private_dir(parent));
  std::string templ = (parent / "git-stage-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    return Status::error(
        fmt::format("cannot make a folder in {}: {}", parent.string(), std::strerror(errno)));
  std::unique_ptr<GitStage> stage(new GitStage(git_dir, templ));
  UniqueFd git(::open(git_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd top(::open(templ.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!git.valid() || !top.valid())
    return Status::error(fmt::format("cannot open {}: {}", git_dir.string(), std::strerror(errno)));
  stage->binds_.push_back({templ, git_dir.string(), SandboxBind::Kind::kWritable});
  const int list_fd = ::dup(git.get());
  DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
  if (d == nullptr) {
    if (list_fd >= 0) ::close(list_fd);
    return Status::error(fmt::format("cannot list {}: {}", git_dir.string(), std::strerror(errno)));
  }
  std::vector<std::pair<std::string, bool>> entries;  // name, is a folder
  while (const struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (::fstatat(git.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISLNK(st.st_mode)) continue;  // not shown in the stage at all
    entries.emplace_back(name, S_ISDIR(st.st_mode));
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end());
  for (const auto& [name, folder] : entries) {
    const std::string source = (git_dir / name).string();
    if (name == "objects") {
      ::mkdirat(top.get(), name.c_str(), 0755);
      stage->binds_.push_back({source, source, SandboxBind::Kind::kWritable});
      stage->mounted_.push_back(name);
    } else if (folder && is_in(name, kCopiedFolders)) {
      continue;  // copied below, by the first sync
    } else if (!folder && is_in(name, data_files())) {
      continue;  // likewise
    } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) {
      continue;  // a lock of a git running on the host: not the sandbox's
    } else {
      if (folder) {
        ::mkdirat(top.get(), name.c_str(), 0755);
      } else {
        UniqueFd f(::openat(top.get(), name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
      }
      stage->binds_.push_back({source, source, SandboxBind::Kind::kReadOnly});
      stage->mounted_.push_back(name);
    }
  }
  for (const char* folder : kCopiedFolders) ::mkdirat(top.get(), folder, 0755);
  // Everything of the user's .git is new to the stage: the first sync copies it in.
  stage->git_seen_.clear();
  stage->stage_seen_ = stage->list(stage->stage_);
  for (const auto& [rel, seen] : stage->list(git_dir)) {
    if (Status s = carry(git_dir, stage->stage_, rel, true, ".git/" + rel); !s.ok()) return s;
  }
  stage->stage_seen_ = stage->list(stage->stage_);
  stage->git_seen_ = stage->list(git_dir);
  return stage;
}

GitStage::~GitStage() { (void)remove_beneath(stage_.parent_path(), stage_.filename().string()); }

std::map<std::string, GitStage::Seen> GitStage::list(const fs::path& top) const {
  std::map<std::string, Seen> out;
  UniqueFd fd(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return out;
  struct stat st;
  auto note = [&](int dir, const char* name, const std::string& rel) {
    if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      out[rel] = Seen{static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
                      ns(st.st_mtim), ns(st.st_ctim)};
  };
  for (const std::string& name : data_files()) note(fd.get(), name.c_str(), name);
  for (const char* folder : kCopiedFolders) {
    std::vector<std::string> gits;  // none are expected in refs/ or logs/
    walk_folders(
        top, folder, 200000,
        [&](const std::string& rel, int dir_fd) {
          // A description of its own: the walk reads the folder through dir_fd.
          const int list_fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
          if (d == nullptr) {
            if (list_fd >= 0) ::close(list_fd);
            return;
          }
          while (const struct dirent* e = ::readdir(d)) {
            if (e->d_name[0] == '.') continue;  // ., .., and our own temporaries
            note(dir_fd, e->d_name, rel + "/" + e->d_name);
          }
          ::closedir(d);
        },
        gits);
  }
  return out;
}

GitStage::Report GitStage::sync() {
  Report report;
  // The stage is the sandbox's .git mount: a command may have taken its rights away.
  ::chmod(stage_.c_str(), 0700);
  UniqueFd top(::open(stage_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top.valid()) {
    report.failures.push_back(fmt::format("the sandbox's .git ({}) cannot be opened: {}",
                                          stage_.string(), std::strerror(errno)));
    return report;
  }
  // Control files planted at the stage's top: only the sandbox's git would read them, but a
  // planted config or commondir would turn it against the tree in later commands.
  for (const char* name : kControl) {
    if (std::find(mounted_.begin(), mounted_.end(), name) != mounted_.end()) continue;
    struct stat st;
    if (::fstatat(top.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (Status s = remove_beneath(stage_, name); s.ok()) {
      report.removed.push_back(std::string(".git/") + name);
    } else {
      report.failures.push_back(s.message());
    }
  }
  // A link in place of a folder of objects/ would lead the host's git to write objects
  // wherever it points.
  if (UniqueFd objects = folder_at(git_, "objects", false); objects.valid()) {
    const int list_fd = ::dup(objects.get());
    if (DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr) {
      std::vector<std::string> links;
      while (const struct dirent* e = ::readdir(d)) {
        struct stat st;
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || std::strcmp(e->d_name, "..") == 0))
          continue;
        if (::fstatat(objects.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
          links.push_back(e->d_name);
      }
      ::closedir(d);
      for (const std::string& l : links) {
        if (::unlinkat(objects.get(), l.c_str(), 0) == 0) {
          report.removed.push_back(".git/objects/" + l);
        } else {
          report.failures.push_back(fmt::format("{} could not be removed: {}",
                                                (git_ / "objects" / l).string(),
                                                std::strerror(errno)));
        }
      }
    } else if (list_fd >= 0) {
      ::close(list_fd);
    }
  }

  const auto stage_now = list(stage_);
  const auto git_now = list(git_);
  std::set<std::string> keys;
  for (const std::map<std::string, Seen>* m :
       {&stage_now, &git_now, static_cast<const std::map<std::string, Seen>*>(&stage_seen_),
        static_cast<const std::map<std::string, Seen>*>(&git_seen_)})
    for (const auto& [k, v] : *m) keys.insert(k);
  auto state = [](const std::map<std::string, Seen>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? Seen{} : it->second;
  };
  // What each side holds once this sync is done: as listed, but for what was carried.
  std::map<std::string, Seen> stage_after = stage_now, git_after = git_now;
  auto restat = [](const fs::path& top, const std::string& k, std::map<std::string, Seen>& m) {
    struct stat st;
    if (::lstat((top / k).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      m[k] = Seen{static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
                  ns(st.st_mtim), ns(st.st_ctim)};
    } else {
      m.erase(k);
    }
  };
  for (const std::string& k : keys) {
    const Seen s_now = state(stage_now, k), g_now = state(git_now, k);
    const bool s_changed = !(s_now == state(stage_seen_, k));
    const bool g_changed = !(g_now == state(git_seen_, k));
    const bool s_present = s_now.size >= 0, g_present = g_now.size >= 0;
    Status s = ok_status();
    if (s_changed && g_changed) {
      if (s_present == g_present && (!s_present || same_bytes(stage_, git_, k))) continue;
      report.conflicts.push_back(".git/" + k);
      s = carry(git_, stage_, k, g_present, ".git/" + k);
      restat(stage_, k, stage_after);
    } else if (s_changed) {
      s = carry(stage_, git_, k, s_present, (git_ / k).string(), g_now.size);
      restat(git_, k, git_after);
    } else if (g_changed) {
      s = carry(git_, stage_, k, g_present, ".git/" + k, s_now.size);
      restat(stage_, k, stage_after);
    }
    if (!s.ok()) report.failures.push_back(s.message());
  }
  stage_seen_ = std::move(stage_after);
  git_seen_ = std::move(git_after);
  return report;
}

}  // namespace mecha::tools
