#include "cli/batch/work_tree.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/file_text.h"
#include "base/sha256.h"
#include "base/subprocess.h"
#include "base/text.h"
#include "base/unique_fd.h"
#include "cli/batch/tree_files.h"

extern char** environ;

namespace mecha::batch {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
// Long enough for a large repository's checkout or `git add`, short enough that a tree the
// run filled with something git chokes on (a FIFO, a huge sparse file) does not hang the batch.
constexpr std::chrono::minutes kGitTimeout{5};

// The environment git runs in: the caller's without GIT_* (a GIT_DIR or GIT_INDEX_FILE of
// the user's shell must not redirect the batch's commands), plus `extra`.
std::vector<std::string> git_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GIT_", 4) != 0) env.emplace_back(*e);
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  env.emplace_back("GIT_CONFIG_NOSYSTEM=1");
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// The options that keep git from running anything a tree could name.
const std::vector<std::string>& safe_config() {
  static const std::vector<std::string> args = {
      "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "diff.external=",
      "-c", "diff.noprefix=false",      "-c", "protocol.allow=never"};
  return args;
}

struct GitCall {
  GitCall(std::vector<std::string> a, std::vector<std::string> e = {})
      : args(std::move(a)), env(std::move(e)) {}
  std::vector<std::string> args;  // after `git` and the safe config
  std::vector<std::string> env;   // extra NAME=VALUE
  size_t cap = 1 << 20;           // stdout bytes kept
  bool* truncated = nullptr;      // set when stdout passed cap (then it was stopped)
};

Result<std::string> git(const GitCall& call) {
  SubprocessOptions o;
  o.argv = {"git"};
  o.argv.insert(o.argv.end(), safe_config().begin(), safe_config().end());
  o.argv.insert(o.argv.end(), call.args.begin(), call.args.end());
  o.env = git_environment(call.env);
  o.timeout = kGitTimeout;
  std::string out;
  bool cut = false;
  o.on_stdout = [&](std::string_view chunk) {
    size_t room = call.cap - out.size();
    out.append(chunk.substr(0, room));
    if (chunk.size() > room) cut = true;
    return !cut;
  };
  auto r = run_subprocess(o);
  std::string shown = "git " + (call.args.empty() ? std::string() : call.args.front());
  if (!r) return r.status().prefixed(shown);
  if (cut && call.truncated) {
    *call.truncated = true;
    return out;
  }
  if (r->timed_out)
    return Status::error(
        fmt::format("{}: took longer than {} minutes", shown, kGitTimeout.count()));
  if (r->exit_code != 0) {
    std::string err(trimmed_tail(r->err.text(), 2000));
    return Status::error(fmt::format(
        "{} failed ({}): {}", shown,
        r->signal ? fmt::format("signal {}", r->signal) : fmt::format("exit {}", r->exit_code),
        err));
  }
  return out;
}

// Holds an exclusive flock for its lifetime. On a file in the cache: baselines are made once
// per cache, whichever process or thread gets there first. On a repository's git dir: what
// changes its worktree registrations is done one at a time (see RepoLock below).
class HeldFlock {
 public:
  static Result<HeldFlock> take(const fs::path& file) {
    return take_fd(UniqueFd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)), file);
  }
  static Result<HeldFlock> take_folder(const fs::path& dir) {
    return take_fd(UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), dir);
  }

 private:
  static Result<HeldFlock> take_fd(UniqueFd fd, const fs::path& what) {
    if (!fd.valid()) return errno_status("opening " + what.string());
    while (::flock(fd.get(), LOCK_EX) != 0)
      if (errno != EINTR) return errno_status("locking " + what.string());
    return HeldFlock(std::move(fd));
  }
  explicit HeldFlock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it lets go
};

// While git adds a worktree it reads every registration in the repository, and dies on one
// half written; it takes no lock of its own. So every mecha process and thread adds and
// removes registrations under one flock on the repository's git dir (each open of it is a
// lock of its own, so threads exclude each other too). Where the filesystem has no flock
// the work goes on unlocked, as it would with git alone.
class RepoLock {
 public:
  explicit RepoLock(const fs::path& git_dir) {
    if (auto lock = HeldFlock::take_folder(git_dir)) lock_ = std::move(*lock);
  }

 private:
  std::optional<HeldFlock> lock_;
};

std::string first_line(std::string_view s) {
  size_t end = s.find_first_of("\r\n");
  return std::string(s.substr(0, end));
}

// Sets the mtime of every regular file under `dir` to a different whole second, the first a
// minute ago and the rest before it.
Status date_in_the_past(const fs::path& dir) {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t i = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    struct timespec t = {now.tv_sec - 60 - i++, 0};
    const struct timespec times[2] = {t, t};
    if (::utimensat(AT_FDCWD, it->path().c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
      return errno_status("setting the time of " + it->path().string());
  }
  if (ec) return Status::error(fmt::format("reading {}: {}", dir.string(), ec.message()));
  return ok_status();
}

// Removes the repository's registrations of a worktree at `tree` (what a killed run left).
void forget_worktree(const RepoLock&, const fs::path& git_dir, const fs::path& tree) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(git_dir / "worktrees", ec)) {
    auto where = read_file_text(entry.path() / "gitdir");
    if (where && fs::path(first_line(*where)) == tree / ".git") (void)remove_tree(entry.path());
  }
}

// Removes the registrations of worktrees under `ours` that a killed `git worktree add` left
// half written: still locked (git locks a worktree while adding it, and mecha never does),
// or without its common dir. git is mecha's child and dies with it, so one killed batch can
// leave such a registration, on which every later add in the repository would die. With
// the repository's lock held, no add of mecha's is under way to be mistaken for one.
void forget_half_written(const RepoLock&, const fs::path& git_dir,
                         const std::vector<fs::path>& ours) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(git_dir / "worktrees", ec)) {
    auto where = read_file_text(entry.path() / "gitdir");
    if (!where) continue;
    fs::path tree = fs::path(first_line(*where)).lexically_normal();
    bool mine = std::any_of(ours.begin(), ours.end(), [&](const fs::path& root) {
      auto rel = tree.lexically_relative(root);
      return !rel.empty() && *rel.begin() != "..";
    });
    if (!mine) continue;
    struct stat st {};
    bool locked = ::lstat((entry.path() / "locked").c_str(), &st) == 0;
    bool no_common = ::stat((entry.path() / "commondir").c_str(), &st) != 0 || st.st_size == 0;
    if (locked || no_common) (void)remove_tree(entry.path());
  }
}

// Beside each spare, the record of the repository its worktree is registered in.
fs::path spare_record(const fs::path& spare) {
  fs::path record = spare;
  record += ".repo";
  return record;
}

Status note_spare(const fs::path& spare, const fs::path& git_dir) {
  return write_file_atomically(spare_record(spare), git_dir.string() + "\n");
}

}  // namespace

WorkTrees::WorkTrees(fs::path cache, fs::path trees, size_t spares)
    : cache_(fs::absolute(cache).lexically_normal()),
      trees_(fs::absolute(trees).lexically_normal()),
      max_spares_(spares) {}

WorkTrees::~WorkTrees() {
  std::lock_guard lock(mu_);
  for (const WorkTree& t : spares_) (void)remove(t);
  spares_.clear();
  if (!spare_dir_.empty()) (void)remove_tree(spare_dir_);
}

void WorkTrees::remove_stale_spares() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache_, ec)) {
    if (entry.path().filename().string().rfind("spares-", 0) != 0) continue;
    UniqueFd fd(::open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its owner lives
    // Each spare's record names its repository (mecha's own file: the runs never see this
    // folder); the worktree there whose way back is the spare goes with it.
    for (const auto& record : fs::directory_iterator(entry.path(), ec)) {
      if (record.path().extension() != ".repo") continue;
      auto text = read_file_text(record.path());
      fs::path git_dir = text ? fs::path(first_line(*text)) : fs::path();
      fs::path spare = record.path();
      spare.replace_extension();
      if (git_dir.is_absolute()) forget_worktree(RepoLock(git_dir), git_dir, spare);
    }
    (void)remove_tree(entry.path());
  }
}

Status WorkTrees::open_spares() {
  if (!spare_dir_.empty()) return ok_status();
  remove_stale_spares();
  // Made under another name and renamed once locked, so no process ever sees it unlocked.
  std::string made = (cache_ / "new-spares-XXXXXX").string();
  if (::mkdtemp(made.data()) == nullptr) return errno_status("creating " + made);
  UniqueFd fd(::open(made.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  fs::path name = cache_ / fs::path(made).filename().string().substr(4);
  if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 ||
      ::rename(made.c_str(), name.c_str()) != 0) {
    Status s = errno_status("setting up " + name.string());
    ::rmdir(made.c_str());
    return s;
  }
  spare_dir_ = std::move(name);
  spare_lock_ = std::move(fd);
  return ok_status();
}

Status WorkTrees::release(WorkTree tree) {
  if (!tree.stamp || max_spares_ == 0) return remove(tree);
  std::optional<WorkTree> evicted;
  bool kept = false;
  {
    std::lock_guard lock(mu_);
    if (open_spares().ok()) {
      fs::path to = spare_dir_ / std::to_string(spare_names_++);
      if (!tree.worktree_git_dir.empty()) {
        // Written before the move, so a process killed at any point leaves a spare its
        // successor can remove with its worktree; the registration's way back to the tree is
        // the spare, so `git worktree prune` leaves it be.
        (void)note_spare(to, tree.baseline->git_dir);
        (void)write_file_atomically(tree.worktree_git_dir / "gitdir",
                                    (to / ".git").string() + "\n");
      }
      if (::rename(tree.path.c_str(), to.c_str()) == 0) {
        tree.path = to;
        if (spares_.size() >= max_spares_) {
          // The spare kept longest goes: no task has wanted its baseline since.
          evicted = std::move(spares_.front());
          spares_.erase(spares_.begin());
        }
        spares_.push_back(std::move(tree));
        kept = true;
      }
    }
  }
  if (evicted) return drop_spare(*evicted);
  return kept ? ok_status() : remove(tree);
}

Status WorkTrees::drop_spare(const WorkTree& spare) {
  Status s = remove(spare);
  std::error_code ec;
  fs::remove(spare_record(spare.path), ec);
  return s;
}

Status WorkTrees::put_right(WorkTree& tree) {
  const Baseline& b = *tree.baseline;
  MECHA_RETURN_IF_ERROR(
      tree.stamp->restore(tree.path, [&](const std::string& rel, const fs::path& to) -> Status {
        if (rel == ".git" && !tree.dot_git.empty()) return write_file_atomically(to, tree.dot_git);
        fs::path from = b.files / rel;
        struct stat st {};
        if (::lstat(from.c_str(), &st) != 0) return errno_status("reading " + from.string());
        return copy_entry(from, to, st);
      }));
  if (tree.worktree_git_dir.empty()) return ok_status();
  // The worktree's own folder as `git worktree add` left it: a detached HEAD at the
  // baseline, the baseline's index, and the way back to the tree; nothing else of the run's.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(tree.worktree_git_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name != "commondir" && name != "gitdir" && name != "logs" && name != "HEAD")
      MECHA_RETURN_IF_ERROR(remove_tree(entry.path()));
  }
  if (ec) return Status::error("reading " + tree.worktree_git_dir.string() + ": " + ec.message());
  MECHA_RETURN_IF_ERROR(write_file_atomically(tree.worktree_git_dir / "HEAD", b.treeish + "\n"));
  fs::copy_file(b.index, tree.worktree_git_dir / "index", ec);
  if (ec) return Status::error("copying the index into " + tree.worktree_git_dir.string());
  return point_back(tree);
}

Status WorkTrees::point_back(const WorkTree& tree) {
  if (tree.worktree_git_dir.empty()) return ok_status();
  return write_file_atomically(tree.worktree_git_dir / "gitdir",
                               (tree.path / ".git").string() + "\n");
}

Result<fs::path> WorkTrees::shadow_repo() {
  fs::path repo = cache_ / "shadow.git";
  auto lock = HeldFlock::take(cache_ / "shadow.lock");
  if (!lock) return lock.status();
  if (fs::exists(repo / "HEAD")) return repo;
  auto made = git({{"init", "-q", "--bare", repo.string()}});
  if (!made) return made.status();
  return repo;
}

Result<std::shared_ptr<const Baseline>> WorkTrees::make_repo_baseline(const Task& task) {
  std::string ref = task.ref.empty() ? "HEAD" : task.ref;
  auto git_dir =
      git({{"-C", task.repo, "rev-parse", "--path-format=absolute", "--git-common-dir"}});
  if (!git_dir) return git_dir.status().prefixed(fmt::format("repo {}", task.repo));
  auto commit = git({{"-C", task.repo, "rev-parse", "--verify", "--quiet", "--end-of-options",
                      ref + "^{commit}"}});
  if (!commit || first_line(*commit).empty())
    return Status::error(fmt::format("repo {}: no commit named '{}'", task.repo, ref));
  auto b = std::make_shared<Baseline>();
  b->git_dir = first_line(*git_dir);
  b->treeish = first_line(*commit);
  b->repo = task.repo;
  b->git_env = {"GIT_OBJECT_DIRECTORY=" + (cache_ / "objects").string(),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + (b->git_dir / "objects").string()};
  fs::path home = cache_ / ("commit-" + b->treeish);
  b->files = home / "files";
  b->index = home / "index";
  auto lock = HeldFlock::take(cache_ / ("commit-" + b->treeish + ".lock"));
  if (!lock) return lock.status();
  if (fs::exists(home / "ready")) return std::shared_ptr<const Baseline>(b);
  MECHA_RETURN_IF_ERROR(remove_tree(home));
  std::error_code ec;
  fs::create_directories(b->files, ec);
  fs::create_directories(cache_ / "objects", ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", home.string(), ec.message()));
  std::vector<std::string> env = {"GIT_INDEX_FILE=" + b->index.string()};
  std::vector<std::string> where = {"--git-dir=" + b->git_dir.string(),
                                    "--work-tree=" + b->files.string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), where.begin(), where.end());
    return GitCall{std::move(args), env};
  };
  if (auto r = git(with({"read-tree", b->treeish})); !r) return r.status();
  if (auto r = git(with({"checkout-index", "-a", "-f"})); !r) return r.status();
  // A checkout's files all have this second's mtime, as the index written with them does, so
  // git would take every entry for racily clean and hash every file of every tree's diff.
  // Dated in the past, each a different second (so `cp -p` of one same-size file onto
  // another still shows), and the index refreshed, they are vouched for by size and mtime.
  MECHA_RETURN_IF_ERROR(date_in_the_past(b->files));
  if (auto r = git(with({"update-index", "-q", "--refresh"})); !r) return r.status();
  MECHA_RETURN_IF_ERROR(write_file_atomically(home / "ready", b->treeish + "\n"));
  return std::shared_ptr<const Baseline>(b);
}

Result<std::shared_ptr<const Baseline>> WorkTrees::make_dir_baseline(const Task& task) {
  auto shadow = shadow_repo();
  if (!shadow) return shadow.status();
  auto b = std::make_shared<Baseline>();
  b->git_dir = *shadow;
  std::error_code ec;
  if (task.dir.empty()) {
    b->files = cache_ / "empty";
    fs::create_directories(b->files, ec);
    b->treeish = kEmptyTree;
    return std::shared_ptr<const Baseline>(b);
  }
  if (!fs::is_directory(task.dir, ec))
    return Status::error(fmt::format("dir {}: not a folder", task.dir));
  b->files = task.dir;
  std::string key = sha256_hex(fs::absolute(task.dir).string()).substr(0, 16);
  fs::path home = cache_ / ("dir-" + key);
  b->index = home / "index";
  auto lock = HeldFlock::take(cache_ / ("dir-" + key + ".lock"));
  if (!lock) return lock.status();
  if (auto done = read_file_text(home / "ready"); done && !first_line(*done).empty()) {
    b->treeish = first_line(*done);
    return std::shared_ptr<const Baseline>(b);
  }
  MECHA_RETURN_IF_ERROR(remove_tree(home));
  fs::create_directories(home, ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", home.string(), ec.message()));
  GitCall add{{"--git-dir=" + b->git_dir.string(), "--work-tree=" + task.dir, "add", "-A", "."},
              {"GIT_INDEX_FILE=" + b->index.string()}};
  // `add .` names the work tree as cwd-relative: run from inside it.
  add.args.insert(add.args.begin(), {"-C", task.dir});
  if (auto r = git(add); !r) return r.status().prefixed(fmt::format("dir {}", task.dir));
  GitCall write{{"--git-dir=" + b->git_dir.string(), "write-tree"},
                {"GIT_INDEX_FILE=" + b->index.string()}};
  auto tree = git(write);
  if (!tree) return tree.status();
  b->treeish = first_line(*tree);
  MECHA_RETURN_IF_ERROR(write_file_atomically(home / "ready", b->treeish + "\n"));
  return std::shared_ptr<const Baseline>(b);
}

Result<std::shared_ptr<const Baseline>> WorkTrees::baseline_for(const Task& task) {
  const std::string key = task.source_key();
  {
    std::lock_guard lock(mu_);
    for (auto& [k, b] : baselines_)
      if (k == key) return b;
  }
  auto made = task.repo.empty() ? make_dir_baseline(task) : make_repo_baseline(task);
  if (!made) return made.status();
  std::lock_guard lock(mu_);
  // Another thread may have made it meanwhile: one object per baseline, as spares are
  // matched to tasks by it.
  for (auto& [k, b] : baselines_)
    if (k == key) return b;
  baselines_.emplace_back(key, *made);
  return *made;
}

Result<WorkTree> WorkTrees::make(const Task& task) {
  std::error_code ec;
  fs::create_directories(cache_, ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", cache_.string(), ec.message()));
  auto baseline = baseline_for(task);
  if (!baseline) return baseline.status();
  WorkTree tree;
  tree.baseline = *baseline;
  tree.path = trees_ / task.id;
  fs::create_directories(trees_, ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", trees_.string(), ec.message()));
  // What a killed earlier run of this task left.
  MECHA_RETURN_IF_ERROR(remove_tree(tree.path));
  std::optional<WorkTree> spare;
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(spares_.begin(), spares_.end(),
                           [&](const WorkTree& t) { return t.baseline == *baseline; });
    if (it != spares_.end()) {
      spare = std::move(*it);
      spares_.erase(it);
    }
  }
  if (spare) {
    fs::path record = spare_record(spare->path);
    // A killed earlier run of this task may have left its worktree's registration too, with
    // its way back to this path, which the spare is about to take.
    if (!spare->worktree_git_dir.empty()) {
      const fs::path& git_dir = spare->baseline->git_dir;
      forget_worktree(RepoLock(git_dir), git_dir, tree.path);
    }
    if (::rename(spare->path.c_str(), tree.path.c_str()) == 0) {
      spare->path = tree.path;
      if (put_right(*spare).ok()) {
        fs::remove(record, ec);
        return std::move(*spare);
      }
    }
    // Whatever stopped it, a new tree is made the long way.
    (void)remove(*spare);
    fs::remove(record, ec);
  }
  return make_new(*baseline, tree.path);
}

Result<WorkTree> WorkTrees::make_new(std::shared_ptr<const Baseline> baseline,
                                     const fs::path& path) {
  std::error_code ec;
  WorkTree tree;
  tree.baseline = std::move(baseline);
  tree.path = path;
  const Baseline& b = *tree.baseline;
  if (!b.repo.empty()) {
    std::vector<std::string> add = {"-C",     b.repo,          "worktree", "add",
                                    "-q",     "--no-checkout", "--detach", tree.path.string(),
                                    b.treeish};
    auto added = [&] {
      RepoLock lock(b.git_dir);
      auto first = git({add});
      if (first) return first;
      // A run killed while its tree was being added leaves the registration behind, locked,
      // which neither add nor prune will touch, and on which any add dies: forget it (and
      // any other of ours a killed add left), then add again.
      forget_worktree(lock, b.git_dir, tree.path);
      forget_half_written(lock, b.git_dir, {trees_, cache_});
      return git({add});
    }();
    if (!added) return added.status().prefixed(fmt::format("repo {}", b.repo));
    auto dot_git = read_file_text(tree.path / ".git");
    if (!dot_git) return dot_git.status();
    std::string line = first_line(*dot_git);
    if (line.rfind("gitdir: ", 0) != 0)
      return Status::error("git worktree add: unexpected " + (tree.path / ".git").string());
    tree.worktree_git_dir = line.substr(8);
    tree.dot_git = std::move(*dot_git);
    fs::copy_file(b.index, tree.worktree_git_dir / "index", fs::copy_options::overwrite_existing,
                  ec);
    if (ec)
      return Status::error(fmt::format("copying the index into {}: {}",
                                       tree.worktree_git_dir.string(), ec.message()));
  }
  MECHA_RETURN_IF_ERROR(copy_tree(b.files, tree.path));
  if (max_spares_ > 0) {
    auto stamp = TreeStamp::take(tree.path);
    if (stamp) tree.stamp = std::make_shared<TreeStamp>(std::move(*stamp));
  }
  return tree;
}

Status WorkTrees::prepare_spare(const Task& task) {
  std::error_code ec;
  fs::create_directories(cache_, ec);
  if (ec) return Status::error(fmt::format("creating {}: {}", cache_.string(), ec.message()));
  auto baseline = baseline_for(task);
  if (!baseline) return baseline.status();
  fs::path path;
  {
    std::lock_guard lock(mu_);
    if (spares_.size() >= max_spares_) return ok_status();
    MECHA_RETURN_IF_ERROR(open_spares());
    path = spare_dir_ / std::to_string(spare_names_++);
  }
  if (!(*baseline)->repo.empty()) MECHA_RETURN_IF_ERROR(note_spare(path, (*baseline)->git_dir));
  auto tree = make_new(*baseline, path);
  if (!tree) {
    (void)remove_tree(path);
    if (!(*baseline)->repo.empty()) {
      const fs::path& git_dir = (*baseline)->git_dir;
      forget_worktree(RepoLock(git_dir), git_dir, path);
    }
    fs::remove(spare_record(path), ec);
    return tree.status();
  }
  {
    std::lock_guard lock(mu_);
    if (spares_.size() < max_spares_) {
      spares_.push_back(std::move(*tree));
      return ok_status();
    }
  }
  return drop_spare(*tree);
}

Result<Diff> WorkTrees::diff(const WorkTree& tree, size_t cap) {
  // Every entry the very one the tree was handed out with: nothing to ask git.
  TreeStamp::Comparison compared;
  if (tree.stamp) compared = tree.stamp->compare(tree.path);
  if (compared.unchanged) return Diff{};
  const Baseline& b = *tree.baseline;
  // A scratch index beside the tree, outside it, seeded with the baseline's (git then only
  // hashes what the index cannot vouch for).
  fs::path index = trees_ / (tree.path.filename().string() + ".diff-index");
  std::error_code ec;
  fs::remove(index, ec);
  if (!b.index.empty()) {
    fs::copy_file(b.index, index, ec);
    if (ec) return Status::error(fmt::format("copying {}: {}", b.index.string(), ec.message()));
  }
  std::vector<std::string> env = b.git_env;
  env.push_back("GIT_INDEX_FILE=" + index.string());
  std::vector<std::string> where = {"-C", tree.path.string(), "--git-dir=" + b.git_dir.string(),
                                    "--work-tree=" + tree.path.string()};
  auto call = [&](std::vector<std::string> args) {
    args.insert(args.begin(), where.begin(), where.end());
    return GitCall{std::move(args), env};
  };
  Diff d;
  // The copies carry their baseline's sizes and mtimes, so with only those two compared
  // (inode and ctime differ in every copy) git hashes just the files the run touched.
  auto added = git(call({"-c", "core.checkStat=minimal", "-c", "core.trustctime=false", "add", "-A",
                         "--ignore-errors", "."}));
  if (!added) return added.status().prefixed("the diff of " + tree.path.string());
  // A file rewritten and given back its size and mtime passed for untouched there. The
  // stamp's walk above knew it was not: those are added again with git's full check, whose
  // inode and ctime differ from the index's, so git hashes them.
  if (!compared.disguised.empty()) {
    fs::path list = trees_ / (tree.path.filename().string() + ".diff-paths");
    std::string nul_separated;
    for (const std::string& p : compared.disguised) nul_separated += p + '\0';
    MECHA_RETURN_IF_ERROR(write_file_atomically(list, nul_separated));
    auto again = git(call({"--literal-pathspecs", "add", "--ignore-errors",
                           "--pathspec-from-file=" + list.string(), "--pathspec-file-nul"}));
    fs::remove(list, ec);
    if (!again) return again.status().prefixed("the diff of " + tree.path.string());
  }
  GitCall show = call({"diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
                       "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", b.treeish});
  show.cap = cap;
  show.truncated = &d.truncated;
  auto patch = git(show);
  fs::remove(index, ec);
  if (!patch) return patch.status().prefixed("the diff of " + tree.path.string());
  d.patch = std::move(*patch);
  return d;
}

Status WorkTrees::remove(const WorkTree& tree) {
  MECHA_RETURN_IF_ERROR(remove_tree(tree.path));
  if (!tree.worktree_git_dir.empty()) {
    // Only a folder git itself would have made for this worktree.
    if (tree.worktree_git_dir.parent_path().filename() == "worktrees") {
      RepoLock lock(tree.baseline->git_dir);
      MECHA_RETURN_IF_ERROR(remove_tree(tree.worktree_git_dir));
    }
  }
  return ok_status();
}

}  // namespace mecha::batch
