#include "tools/tree_boundary.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "base/process_state.h"
#include "base/state_dir.h"
#include "base/strict_json.h"
#include "guard/path_model.h"
#include "tools/protected_paths.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> inode_of(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_ino);
}

// What a repository the run made keeps at its top: what git reads as data only.
bool kept_in_repository(const std::string& name) {
  if (name == "objects" || name == "refs" || name == "logs") return true;
  const auto& data = GitStage::data_files();
  return std::find(data.begin(), data.end(), name) != data.end();
}

std::vector<std::string> protected_at_top(const fs::path& tree) {
  std::vector<std::string> out;
  for (std::string_view name : protected_place_names())
    if (inode_of(tree / name)) out.emplace_back(name);
  return out;
}

}  // namespace

void BoundaryReport::add(BoundaryReport other) {
  for (auto& r : other.removed) removed.push_back(std::move(r));
  for (auto& f : other.failures) failures.push_back(std::move(f));
  for (auto& n : other.notes) notes.push_back(std::move(n));
}

Result<std::shared_ptr<TreeBoundary>> TreeBoundary::open(const fs::path& tree, Options options) {
  std::shared_ptr<TreeBoundary> b(new TreeBoundary(tree));
  b->options_ = std::move(options);
  std::lock_guard<std::mutex> lock(b->mu_);
  std::vector<std::string> gits;
  bool complete = false;
  if (auto m = TreeMonitor::start(tree, b->options_.max_watched_folders); m.ok()) {
    b->monitor_ = std::move(*m);
    gits = b->monitor_->initial_gits();
    complete = !b->monitor_->degraded();
  }
  if (!complete) {
    GitScan scan = scan_git_metadata(tree, b->options_.scan);
    if (!scan.complete) {
      b->pending_.notes.push_back(fmt::format(
          "the walk for git repositories in {} stopped ({}): repositories beyond it are not "
          "kept read-only",
          tree.string(), scan.stopped));
    }
    gits = std::move(scan.found);
  }
  for (const std::string& rel : gits)
    if (auto ino = inode_of(tree / rel)) b->known_[rel] = Entry{*ino};
  for (const std::string& name : protected_at_top(tree))
    if (auto ino = inode_of(tree / name)) b->known_[name] = Entry{*ino};

  const fs::path git = tree / ".git";
  struct stat st;
  if (::lstat(git.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (std::string hooks = hooks_path_in_tree(tree.string(), (git / "config").string());
        !hooks.empty() && inode_of(hooks))
      b->hooks_paths_.push_back(hooks);
    // A `.git` with no object database is no repository git would commit to: read-only.
    if (!b->options_.stage_parent.empty() && inode_of(git / "objects")) {
      auto stage = GitStage::create(git, b->options_.stage_parent);
      if (stage.ok()) {
        b->stage_ = std::move(*stage);
      } else {
        b->pending_.notes.push_back(
            fmt::format("the repository's .git is read-only in the sandbox ({}): git cannot "
                        "commit there",
                        stage.message()));
      }
    }
  }
  if (b->options_.masks) {
    SandboxMasks::Found found = b->options_.masks->find(tree, b->options_.max_mask_entries);
    for (auto& [path, mask] : found.masks) b->masked_[path] = mask;
    if (!found.complete) {
      b->pending_.notes.push_back(fmt::format(
          "the paths the deny rules name were looked for in the first {} entries only: beyond "
          "them the rules hold for the file tools, not for what Bash runs",
          b->options_.max_mask_entries));
    }
  }
  if (!b->options_.markers.empty()) {
    if (Status s = b->write_marker(); !s.ok()) b->pending_.notes.push_back(s.message());
  }
  if (b->monitor_) {
    b->stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (b->stop_.valid()) {
      b->watcher_ = std::thread([raw = b.get()] { raw->watch_loop(); });
    }
  }
  return b;
}

TreeBoundary::~TreeBoundary() {
  if (watcher_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(stop_.get(), &one, sizeof one);
    watcher_.join();
  }
}

void TreeBoundary::watch_loop() {
  for (;;) {
    int monitor_fd;
    {
      std::lock_guard<std::mutex> lock(mu_);
      monitor_fd = monitor_->fd();
    }
    struct pollfd fds[2] = {{monitor_fd, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      std::lock_guard<std::mutex> lock(mu_);
      handle(monitor_->drain());
    }
  }
}

void TreeBoundary::handle(const TreeMonitor::Changes& changes) {
  if (changes.lost) walk_needed_ = true;
  for (const std::string& rel : changes.touched) {
    if (active_ > 0) {
      if (written_.size() < TreeMonitor::kMaxTouched) {
        written_.insert(rel);
      } else {
        written_lost_ = true;
      }
    }
  }
  // What a deny rule names, made now: masked from the next sandbox start on.
  if (options_.masks) {
    for (const auto* list : {&changes.touched, &changes.folders}) {
      for (const std::string& rel : *list) {
        const std::string path = (tree_ / rel).string();
        if (auto m = options_.masks->mask_for(path); m != SandboxMasks::Mask::kNone)
          masked_[path] = m;
      }
    }
  }
  if (active_ > 0 && changes.touched_lost) written_lost_ = true;
  std::vector<std::string> candidates = changes.gits;
  for (const std::string& name : changes.top_level)
    if (protected_in_tree(name)) candidates.push_back(name);
  for (const std::string& rel : candidates) {
    if (active_ > 0) {
      check(rel, false);
    } else if (auto ino = inode_of(tree_ / rel)) {
      // Nothing of the run is alive: someone else made it. Protected from now on.
      known_[rel] = Entry{*ino};
    }
  }
}

void TreeBoundary::check(const std::string& rel, bool settled) {
  struct stat st;
  if (::lstat((tree_ / rel).c_str(), &st) != 0) return;
  if (auto it = known_.find(rel);
      it != known_.end() && it->second.ino == static_cast<uint64_t>(st.st_ino))
    return;
  const auto slash = rel.rfind('/');
  const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
  if (is_git_name(leaf) && S_ISDIR(st.st_mode)) {
    // A repository the run made: what git only reads stays, what it obeys goes, after each
    // command (settle). Not while its git may still be writing it: `git init` or a clone
    // would fail half way.
    created_.insert(rel);
    return;
  }
  remove(rel, settled);
}

void TreeBoundary::remove(const std::string& rel, bool settled) {
  if (Status s = remove_beneath(tree_, rel); s.ok()) {
    retry_.erase(rel);
    if (std::find(pending_.removed.begin(), pending_.removed.end(), rel) == pending_.removed.end())
      pending_.removed.push_back(rel);
  } else if (settled) {
    retry_.erase(rel);
    pending_.failures.push_back(s.message());
    failures_.push_back(s.message());
  } else {
    retry_.insert(rel);
  }
}

void TreeBoundary::strip(const std::string& rel, bool settled) {
  std::vector<std::string> drop;
  {
    UniqueFd fd = open_folder_beneath(tree_, rel);
    if (!fd.valid()) return;
    const int list_fd = ::openat(fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
    if (d == nullptr) {
      if (list_fd >= 0) ::close(list_fd);
      return;
    }
    while (const struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st;
      if (::fstatat(fd.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      const bool folder = S_ISDIR(st.st_mode);
      const bool data_folder = name == "objects" || name == "refs" || name == "logs";
      const bool keep =
          folder ? data_folder : S_ISREG(st.st_mode) && kept_in_repository(name) && !data_folder;
      if (!keep) drop.push_back(rel + "/" + name);
    }
    ::closedir(d);
  }
  // Links below refs/ and logs/ (a reflog is appended through one), and in place of a
  // folder of objects/ (objects would be written where it points).
  for (const char* folder : {"refs", "logs", "objects"}) {
    const std::string top = rel + "/" + folder;
    std::vector<std::string> gits;
    const bool objects = std::strcmp(folder, "objects") == 0;
    walk_folders(
        tree_, top, 100000,
        [&](const std::string& dir, int dir_fd) {
          if (objects && dir != top) return;
          const int list_fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
          if (d == nullptr) {
            if (list_fd >= 0) ::close(list_fd);
            return;
          }
          while (const struct dirent* e = ::readdir(d)) {
            struct stat st;
            if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
            if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
              drop.push_back(dir + "/" + e->d_name);
          }
          ::closedir(d);
        },
        gits);
  }
  for (const std::string& r : drop) remove(r, settled);
}

void TreeBoundary::walk_all(bool settled) {
  GitScan scan = scan_git_metadata(tree_, options_.scan);
  for (const std::string& rel : scan.found) check(rel, settled);
  for (const std::string& name : protected_at_top(tree_)) check(name, settled);
  if (!scan.complete) {
    const std::string why = fmt::format("the walk of {} for git repositories the run made {}",
                                        tree_.string(), scan.stopped);
    if (!monitor_ || monitor_->degraded()) {
      // Nothing else saw the part of the tree the walk did not reach.
      pending_.failures.push_back(why +
                                  ", and the tree could not be watched either: what the "
                                  "run left there is not known");
      failures_.push_back(pending_.failures.back());
    } else {
      pending_.notes.push_back(why + "; the watch on every folder saw nothing there");
    }
  }
  for (const std::string& rel : scan.unread) {
    pending_.failures.push_back(fmt::format(
        "{} cannot be read, so what the run left in it is not known", (tree_ / rel).string()));
    failures_.push_back(pending_.failures.back());
  }
}

void TreeBoundary::settle(bool settled) {
  if (monitor_) handle(monitor_->drain());
  if (!monitor_ || walk_needed_ || monitor_->degraded()) {
    walk_all(settled);
    walk_needed_ = false;
  }
  for (const std::string& rel : std::set<std::string>(created_)) strip(rel, settled);
  for (const std::string& rel : std::set<std::string>(retry_)) check(rel, settled);
  // A repository the run made at the top, stripped: staged from the next command on, so that
  // git in the sandbox keeps committing to it while its control files stay the stage's.
  if (settled && !stage_ && created_.count(".git") && !options_.stage_parent.empty()) {
    if (auto stage = GitStage::create(tree_ / ".git", options_.stage_parent); stage.ok()) {
      stage_ = std::move(*stage);
      created_.erase(".git");
      if (auto ino = inode_of(tree_ / ".git")) known_[".git"] = Entry{*ino};
    }
  }
  if (stage_) {
    GitStage::Report r = stage_->sync();
    for (auto& x : r.removed) pending_.removed.push_back(std::move(x));
    for (auto& c : r.conflicts)
      pending_.notes.push_back(fmt::format(
          "{} was changed by git on the host and in the sandbox: the host's version is kept", c));
    for (auto& f : r.failures) {
      failures_.push_back(f);
      pending_.failures.push_back(std::move(f));
    }
  }
  std::sort(pending_.removed.begin(), pending_.removed.end());
}

std::vector<SandboxBind> TreeBoundary::binds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return binds_locked();
}

std::vector<SandboxBind> TreeBoundary::binds_locked() const {
  // The folders between the tree and what a mask holds, each bound on itself before anything
  // else, so that they are mount points: a mount moves with the folder it is in, so a folder
  // that could be renamed would carry the masked file to a name no rule names (readable from
  // the next sandbox on), and leave its old place free for a new file (an Edit rule undone).
  std::vector<SandboxBind> out = pinned_folders_locked();
  if (stage_) {
    std::vector<SandboxBind> staged = stage_->binds();
    out.insert(out.end(), staged.begin(), staged.end());
  }
  for (const auto& [rel, entry] : known_) {
    if (stage_ && rel == ".git") continue;
    const fs::path p = tree_ / rel;
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st)) continue;
    fs::path target = p;
    if (fs::is_symlink(st)) {
      // A link is bound where it leads, when that is in the tree (elsewhere is read-only).
      target = fs::weakly_canonical(p, ec);
      if (ec || !guard::within(target.string(), tree_.string()) || !fs::exists(target, ec))
        continue;
    }
    out.push_back({target.string(), target.string(), SandboxBind::Kind::kReadOnly});
  }
  for (const std::string& h : hooks_paths_) out.push_back({h, h, SandboxBind::Kind::kReadOnly});
  for (const auto& [path, mask] : masked_) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;
    if (mask == SandboxMasks::Mask::kHidden) {
      out.push_back({"", path, SandboxBind::Kind::kHidden});
    } else {
      out.push_back({path, path, SandboxBind::Kind::kReadOnly});
    }
  }
  return out;
}

std::vector<SandboxBind> TreeBoundary::pinned_folders_locked() const {
  std::set<std::string> folders;
  for (const auto& [path, mask] : masked_) {
    // Elsewhere all is read-only already.
    if (path == tree_.string() || !guard::within(path, tree_.string())) continue;
    for (fs::path p = fs::path(path).parent_path(); p != tree_ && p.has_relative_path();
         p = p.parent_path()) {
      if (!folders.insert(p.string()).second) break;  // and so are those above it
    }
  }
  std::vector<SandboxBind> out;
  for (const std::string& f : folders) {  // sorted: a folder before those inside it
    struct stat st;
    // Never a link: bwrap would follow it to wherever it leads.
    if (::lstat(f.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    out.push_back({f, f, SandboxBind::Kind::kWritable});
  }
  return out;
}

Status TreeBoundary::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failures_.empty()) {
    return Status::error(
        fmt::format("the sandbox will not start: the run left something in the work tree that host "
                    "programs would obey and it could not be removed ({})",
                    failures_.front()));
  }
  if (monitor_) handle(monitor_->drain());
  ++active_;
  return ok_status();
}

BoundaryReport TreeBoundary::end() {
  std::lock_guard<std::mutex> lock(mu_);
  // Settled when the process that ended was the run's last one alive.
  settle(active_ <= 1);
  if (active_ > 0) --active_;
  return std::exchange(pending_, BoundaryReport{});
}

void TreeBoundary::end_quietly() {
  std::lock_guard<std::mutex> lock(mu_);
  if (monitor_) handle(monitor_->drain());
  if (active_ > 0) --active_;
}

BoundaryReport TreeBoundary::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  // What the events say was made while a process of the run was alive is the run's; then,
  // whatever they said, one whole walk with nothing of the run alive.
  settle(true);
  active_ = 0;
  walk_all(true);
  std::sort(pending_.removed.begin(), pending_.removed.end());
  pending_.removed.erase(std::unique(pending_.removed.begin(), pending_.removed.end()),
                         pending_.removed.end());
  if (!marker_.empty()) {
    std::error_code ec;
    fs::remove(marker_, ec);
  }
  finished_ = true;
  return std::exchange(pending_, BoundaryReport{});
}

TreeBoundary::Written TreeBoundary::take_written() {
  std::lock_guard<std::mutex> lock(mu_);
  if (monitor_) handle(monitor_->drain());
  Written w;
  w.whole_tree = written_lost_ || !monitor_;
  w.paths.assign(written_.begin(), written_.end());
  written_.clear();
  written_lost_ = false;
  return w;
}

bool TreeBoundary::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !failures_.empty();
}

Status TreeBoundary::write_marker() const {
  MECHA_RETURN_IF_ERROR(make_private_dir(options_.markers));
  auto self = process_state(::getpid());
  Json j = {{"tree", tree_.string()},
            {"pid", ::getpid()},
            {"start_ticks", self ? self->start_ticks : 0},
            {"stage", stage_ ? stage_->dir().string() : ""}};
  Json known = Json::array();
  for (const auto& [rel, entry] : known_) known.push_back(rel);
  j["protected"] = std::move(known);
  const fs::path path =
      options_.markers / fmt::format("run-{}-{}.json", ::getpid(), self ? self->start_ticks : 0);
  std::ofstream out(path, std::ios::trunc);
  out << j.dump() << "\n";
  out.close();
  if (!out)
    return Status::error(
        fmt::format("cannot write {}: a run killed now would not be repaired by "
                    "the next one",
                    path.string()));
  const_cast<TreeBoundary*>(this)->marker_ = path;
  return ok_status();
}

BoundaryReport TreeBoundary::repair_dead_runs(const fs::path& tree, const fs::path& markers,
                                              GitScanLimits limits) {
  BoundaryReport report;
  std::error_code ec;
  if (!fs::is_directory(markers, ec)) return report;
  for (const auto& entry : fs::directory_iterator(markers, ec)) {
    const fs::path path = entry.path();
    if (path.extension() != ".json") continue;
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("tree") || !j["tree"].is_string())
      continue;
    if (j["tree"].get<std::string>() != tree.string()) continue;
    const pid_t pid = j.contains("pid") && j["pid"].is_number_integer() ? j["pid"].get<pid_t>() : 0;
    const unsigned long long ticks =
        j.contains("start_ticks") && j["start_ticks"].is_number_unsigned()
            ? j["start_ticks"].get<unsigned long long>()
            : 0;
    if (auto state = process_state(pid); state && state->alive() && state->start_ticks == ticks)
      continue;  // that run is still going
    std::vector<std::string> known;
    if (j.contains("protected") && j["protected"].is_array())
      for (const Json& p : j["protected"])
        if (p.is_string()) known.push_back(p.get<std::string>());
    auto is_known = [&](const std::string& rel) {
      return std::find(known.begin(), known.end(), rel) != known.end();
    };
    std::vector<std::string> left;
    GitScan scan = scan_git_metadata(tree, limits);
    for (const std::string& rel : scan.found)
      if (!is_known(rel)) left.push_back(rel);
    for (const std::string& name : protected_at_top(tree))
      if (!is_known(name)) left.push_back(name);
    for (const std::string& rel : left) {
      if (Status s = remove_beneath(tree, rel); s.ok()) {
        report.removed.push_back(rel);
      } else {
        report.failures.push_back(s.message());
      }
    }
    if (!scan.complete) report.notes.push_back("the walk for what it left " + scan.stopped);
    if (j.contains("stage") && j["stage"].is_string() && !j["stage"].get<std::string>().empty()) {
      const fs::path stage = j["stage"].get<std::string>();
      (void)remove_beneath(stage.parent_path(), stage.filename().string());
    }
    report.notes.push_back(fmt::format(
        "an earlier run in {} (process {}) ended without checking the tree{}", tree.string(), pid,
        left.empty() ? "; it left nothing a host program would obey"
                     : fmt::format("; removed what it left that host programs would obey: {}",
                                   fmt::join(left, ", "))));
    fs::remove(path, ec);
  }
  return report;
}

Result<std::shared_ptr<TreeBoundary>> BoundarySlot::open(
    const fs::path& tree, std::shared_ptr<const SandboxMasks> masks) {
  std::lock_guard<std::mutex> lock(mu_);
  if (boundary_) return boundary_;
  auto state = private_state_dir();
  if (!state.ok())
    return Status::error(
        fmt::format("the sandbox's boundary needs mecha's state directory: {}", state.message()));
  TreeBoundary::Options options;
  options.stage_parent = *state / "stages";
  options.markers = *state / "runs";
  options.masks = std::move(masks);
  auto opened = TreeBoundary::open(tree, std::move(options));
  if (!opened.ok()) return opened.status();
  boundary_ = std::move(*opened);
  return boundary_;
}

std::shared_ptr<TreeBoundary> BoundarySlot::get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return boundary_;
}

namespace {
std::mutex& slot_mu() {
  static std::mutex mu;
  return mu;
}
}  // namespace

BoundarySlot& boundary_slot(ToolContext& ctx) {
  // Calls of one run may run at once: the first makes the slot.
  std::lock_guard<std::mutex> lock(slot_mu());
  if (!ctx.boundary) ctx.boundary = std::make_shared<BoundarySlot>();
  return *ctx.boundary;
}

Result<std::shared_ptr<TreeBoundary>> tree_boundary(ToolContext& ctx) {
  return boundary_slot(ctx).open(ctx.work_tree, ctx.masks);
}

std::shared_ptr<TreeBoundary> existing_tree_boundary(const ToolContext& ctx) {
  std::shared_ptr<BoundarySlot> slot;
  {
    std::lock_guard<std::mutex> lock(slot_mu());
    slot = ctx.boundary;
  }
  return slot ? slot->get() : nullptr;
}

std::string boundary_note(const BoundaryReport& report, bool foreground) {
  std::string out;
  const char* what = foreground ? "the command" : "the background command";
  if (!report.removed.empty()) {
    out += fmt::format(
        "\nThe sandbox removed what {} created in protected places: {}. They configure "
        "programs that run code on the host (git, editors, shells, mecha); commands may not "
        "write them.",
        what, fmt::join(report.removed, ", "));
  }
  if (!report.failures.empty()) {
    out += fmt::format(
        "\nThe sandbox could not undo what {} did in protected places ({}): no further command "
        "runs in this run, and the run ends with an error.",
        what, fmt::join(report.failures, "; "));
  }
  for (const std::string& n : report.notes) out += "\nNote: " + n + ".";
  return out;
}

}  // namespace mecha::tools
