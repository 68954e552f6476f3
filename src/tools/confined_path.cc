#include "tools/confined_path.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "guard/path_model.h"
#include "guard/policy.h"
#include "tools/protected_paths.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

// Components of a path, without empty ones ("a//b/" is a, b). "." and ".." are kept.
std::vector<std::string> split(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) out.emplace_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

// When `components` (of an absolute path) begin with the root's own components, the rest;
// the leading part may contain "." but no "..", which could mean something else there.
std::optional<std::vector<std::string>> beneath(const std::vector<std::string>& components,
                                                const std::vector<std::string>& root) {
  size_t i = 0, r = 0;
  while (r < root.size()) {
    if (i == components.size()) return std::nullopt;
    if (components[i] == ".") {
      ++i;
      continue;
    }
    if (components[i] != root[r]) return std::nullopt;
    ++i;
    ++r;
  }
  return std::vector<std::string>(components.begin() + static_cast<long>(i), components.end());
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// The user's own places that a tree holding the home (mecha started in ~, or above it)
// would otherwise open to the file tools: the policy's default secret locations (keys,
// tokens, shell startup files, mecha's own config and state) for reads and writes, and for
// writes Claude Code's user settings too, whose hooks run on this machine. Only places that
// the tree holds count: a tree inside one (a user's work on their own dotfiles) is theirs.
// The place, as the list names it, or nullopt.
std::optional<std::string> users_own_place(const fs::path& resolved, const std::string& root,
                                           Access access) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') return std::nullopt;
  const std::string path = resolved.string();
  auto held = [&](const std::string& p) { return p != root && guard::within(p, root); };
  std::vector<std::string> places = guard::default_secrets();
  if (access == Access::kWrite) places.insert(places.end(), {"~/.claude", "~/.claude.json"});
  for (const auto& place : places) {
    const std::string p = guard::expand_home(place, home);
    if (guard::first_glob(p) == std::string::npos) {
      if (guard::within(path, p) && held(p)) return place;
      continue;
    }
    // A pattern: the path or one of the folders above it.
    for (fs::path at = resolved; !at.empty() && at != at.root_path(); at = at.parent_path())
      if (::fnmatch(p.c_str(), at.c_str(), FNM_PATHNAME) == 0 && held(at.string())) return place;
  }
  return std::nullopt;
}

PathResult<ConfinedPath> problem(std::string rule, std::string message) {
  PathResult<ConfinedPath> r;
  r.problem = {std::move(rule), std::move(message)};
  return r;
}

std::string shown(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '\0') {
      out += "\\0";
    } else {
      out += c;
    }
  }
  if (out.size() > 200) out = out.substr(0, 200) + "...";
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

}  // namespace

Result<WorkTree> WorkTree::open(const fs::path& root) {
  UniqueFd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::error(
        fmt::format("cannot open the work tree {}: {}", root.string(), std::strerror(errno)));
  }
  return WorkTree(root, std::move(fd));
}

PathResult<ConfinedPath> WorkTree::resolve(std::string_view path, Access access) const {
  const std::string root = root_.string();
  if (path.empty()) return problem("", "the path is empty");
  if (path.find('\0') != std::string_view::npos) {
    return problem(std::string(kConfinementRule),
                   fmt::format("refused: the path '{}' contains a NUL byte (work tree {})",
                               shown(path), root));
  }
  if (path.size() > kMaxPathBytes) {
    return problem(std::string(kConfinementRule),
                   fmt::format("refused: the path is {} bytes long, over the limit of {} (work "
                               "tree {})",
                               path.size(), kMaxPathBytes, root));
  }
  const std::string input(path);
  const std::vector<std::string> root_parts = split(root);
  auto outside = [&](const fs::path& where, const std::string& via, const fs::path& left) {
    // A path that leaves and comes back (tree/../tree/x) is named by where it left.
    fs::path shown_where = where.lexically_normal();
    if (beneath(split(shown_where.string()), root_parts)) shown_where = left.lexically_normal();
    std::string where_text = shown_where.string();
    if (where_text.size() > 1 && where_text.back() == '/') where_text.pop_back();
    return problem(std::string(kConfinementRule),
                   fmt::format("refused: '{}' resolves{} to {}, outside the work tree {}; the "
                               "file tools only reach files inside the work tree",
                               shown(input), via, where_text, root));
  };

  std::deque<std::string> todo;
  if (path.front() == '/') {
    std::vector<std::string> parts = split(path);
    auto rest = beneath(parts, root_parts);
    if (!rest) {
      // It may name the tree through a symlink elsewhere (/tmp -> /private/tmp); the
      // canonical form only picks the starting point, the walk below still checks.
      std::error_code ec;
      fs::path canonical = fs::weakly_canonical(fs::path(input), ec);
      if (!ec) rest = beneath(split(canonical.string()), root_parts);
      if (!rest) return outside(ec ? fs::path(input) : canonical, "", fs::path(input));
    }
    todo.assign(rest->begin(), rest->end());
  } else {
    auto parts = split(path);
    todo.assign(parts.begin(), parts.end());
  }

  struct Dir {
    std::string name;
    UniqueFd fd;
  };
  std::vector<Dir> dirs;  // directories entered below the root, each checked
  auto current_fd = [&] { return dirs.empty() ? fd_.get() : dirs.back().fd.get(); };
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& d : dirs) out.push_back(d.name);
    return out;
  };
  auto here = [&] {
    fs::path p = root_;
    for (const auto& d : dirs) p /= d.name;
    return p;
  };
  auto rest_of = [&](fs::path p) {
    for (const auto& t : todo) p /= t;
    return p;
  };
  std::string via;  // the last symlink followed, for messages
  int symlinks = 0;

  ConfinedPath out;
  auto finish = [&](std::string leaf, UniqueFd parent, std::vector<std::string> missing,
                    bool exists, const struct stat* st) -> PathResult<ConfinedPath> {
    std::vector<std::string> rel = names();
    for (const auto& m : missing) rel.push_back(m);
    if (leaf != ".") rel.push_back(leaf);
    out.relative = join(rel);
    out.resolved = root_;
    for (const auto& r : rel) out.resolved /= r;
    out.leaf = std::move(leaf);
    out.parent = std::move(parent);
    out.missing_dirs = std::move(missing);
    out.exists = exists;
    if (st) out.st = *st;
    if (auto place = users_own_place(out.resolved, root, access)) {
      return problem(std::string(kProtectedPathRule),
                     fmt::format("refused: '{}' resolves to {}, inside {}, one of the user's "
                                 "own places (secrets, or what mecha and other agents trust); "
                                 "the file tools do not open it, even in a work tree that "
                                 "holds it ({})",
                                 input, out.resolved.string(), *place, root));
    }
    if (access == Access::kWrite) {
      for (const auto& r : rel) {
        if (same_name(r, ".git")) {
          return problem(std::string(kProtectedPathRule),
                         fmt::format("refused: '{}' resolves to {}, inside a .git directory of "
                                     "the work tree {}; git's internals are not written by the "
                                     "file tools",
                                     input, out.resolved.string(), root));
        }
      }
      if (!rel.empty() && same_name(rel.front(), ".mecha")) {
        return problem(std::string(kProtectedPathRule),
                       fmt::format("refused: '{}' resolves to {}, inside .mecha/ of the work "
                                   "tree {}, which holds mecha's own config and sessions",
                                   input, out.resolved.string(), root));
      }
      if (!rel.empty() && protected_in_tree(rel.front())) {
        return problem(std::string(kProtectedPathRule),
                       fmt::format("refused: '{}' resolves to {}, and {} in the work tree {} "
                                   "configures a program that runs code on this machine (an "
                                   "editor, a shell, git, an agent, MCP servers); it is "
                                   "read-only to the agent, in the file tools as in the sandbox",
                                   input, out.resolved.string(), rel.front(), root));
      }
    }
    PathResult<ConfinedPath> r;
    r.value = std::move(out);
    return r;
  };

  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == ".") continue;
    if (name.size() > kMaxNameBytes) {
      return problem(std::string(kConfinementRule),
                     fmt::format("refused: a component of '{}' is {} bytes long, over the "
                                 "limit of {} (work tree {})",
                                 shown(input), name.size(), kMaxNameBytes, root));
    }
    if (name == "..") {
      if (dirs.empty()) return outside(rest_of(root_ / ".."), via, root_.parent_path());
      dirs.pop_back();
      continue;
    }
    UniqueFd fd(::openat(current_fd(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      const fs::path missing_path = here() / name;
      if (err != ENOENT) {
        return problem(
            "", fmt::format("cannot open {}: {}", missing_path.string(), std::strerror(err)));
      }
      // Not there: the rest names things to be created, which ".." cannot be part of.
      std::vector<std::string> missing{name};
      for (auto& t : todo) {
        if (t == ".") continue;
        if (t == ".." || t.size() > kMaxNameBytes) {
          return problem("", fmt::format("{} does not exist", missing_path.string()));
        }
        missing.push_back(t);
      }
      std::string leaf = missing.back();
      missing.pop_back();
      UniqueFd parent = dirs.empty() ? fd_.duplicate() : dirs.back().fd.duplicate();
      return finish(std::move(leaf), std::move(parent), std::move(missing), false, nullptr);
    }
    struct stat st;
    if (::fstatat(fd.get(), "", &st, AT_EMPTY_PATH) != 0) {
      return problem(
          "", fmt::format("cannot stat {}: {}", (here() / name).string(), std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      if (++symlinks > kMaxSymlinks) {
        return problem("", fmt::format("cannot resolve '{}': more than {} symbolic links", input,
                                       kMaxSymlinks));
      }
      std::string target(kMaxPathBytes + 1, '\0');
      ssize_t n = ::readlinkat(fd.get(), "", target.data(), target.size());
      if (n < 0) {
        return problem("", fmt::format("cannot read the symlink {}: {}", (here() / name).string(),
                                       std::strerror(errno)));
      }
      target.resize(static_cast<size_t>(n));
      const fs::path link = here() / name;
      via = fmt::format(" through the symlink {} -> {}", link.string(), target);
      std::vector<std::string> parts = split(target);
      if (!target.empty() && target.front() == '/') {
        auto rest = beneath(parts, root_parts);
        if (!rest) return outside(rest_of(fs::path(target)), via, fs::path(target));
        dirs.clear();
        parts = std::move(*rest);
      }
      todo.insert(todo.begin(), parts.begin(), parts.end());
      continue;
    }
    bool more = false;
    for (const auto& t : todo) more = more || t != ".";
    if (S_ISDIR(st.st_mode) && more) {
      dirs.push_back({name, std::move(fd)});
      continue;
    }
    if (more) {
      return problem("", fmt::format("{} is not a directory", (here() / name).string()));
    }
    UniqueFd parent = dirs.empty() ? fd_.duplicate() : dirs.back().fd.duplicate();
    return finish(name, std::move(parent), {}, true, &st);
  }
  // The walk ended on a directory already entered (a trailing "." or "..") or the root.
  struct stat st;
  if (dirs.empty()) {
    ::fstatat(fd_.get(), "", &st, AT_EMPTY_PATH);
    return finish(".", fd_.duplicate(), {}, true, &st);
  }
  std::string leaf = dirs.back().name;
  ::fstatat(dirs.back().fd.get(), "", &st, AT_EMPTY_PATH);
  dirs.pop_back();
  return finish(leaf, dirs.empty() ? fd_.duplicate() : dirs.back().fd.duplicate(), {}, true, &st);
}

Result<UniqueFd> open_checked(const ConfinedPath& p) {
  // O_NONBLOCK: a FIFO planted in the tree must not hang the open.
  UniqueFd fd(
      ::openat(p.parent.get(), p.leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    if (errno == ELOOP) {
      return Status::error(
          fmt::format("{} became a symlink after it was checked; not opened", p.resolved.string()));
    }
    return Status::error(
        fmt::format("cannot open {}: {}", p.resolved.string(), std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return Status::error(
        fmt::format("cannot stat {}: {}", p.resolved.string(), std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode))
    return Status::error(fmt::format("{} is a directory", p.resolved.string()));
  if (!S_ISREG(st.st_mode)) {
    return Status::error(fmt::format("{} is not a regular file", p.resolved.string()));
  }
  ::fcntl(fd.get(), F_SETFL, 0);
  return fd;
}

Status create_missing_dirs(ConfinedPath& p) {
  for (const auto& name : p.missing_dirs) {
    if (::mkdirat(p.parent.get(), name.c_str(), 0777) != 0 && errno != EEXIST) {
      return Status::error(fmt::format("cannot create the directory {} in {}: {}", name,
                                       p.resolved.parent_path().string(), std::strerror(errno)));
    }
    UniqueFd next(
        ::openat(p.parent.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return Status::error(fmt::format(
          "cannot open the directory {} in {}: {}", name, p.resolved.parent_path().string(),
          errno == ENOTDIR || errno == ELOOP ? "it is not a directory (or became a symlink)"
                                             : std::strerror(errno)));
    }
    p.parent = std::move(next);
  }
  p.missing_dirs.clear();
  return ok_status();
}

}  // namespace mecha::tools
