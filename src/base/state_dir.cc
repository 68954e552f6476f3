#include "base/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace mecha {
namespace {

std::string_view env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string_view() : std::string_view(v);
}

}  // namespace

Result<std::filesystem::path> user_state_dir() {
  return state_dir_for(env("XDG_STATE_HOME"), env("HOME"));
}

Result<std::filesystem::path> state_dir_for(std::string_view xdg_state_home,
                                            std::string_view home) {
  if (xdg_state_home.starts_with('/')) {
    return std::filesystem::path(xdg_state_home).lexically_normal() / "mecha";
  }
  if (home.starts_with('/')) {
    return std::filesystem::path(home).lexically_normal() / ".local" / "state" / "mecha";
  }
  return Status::error(
      "cannot find the user's state directory: set XDG_STATE_HOME or HOME to an absolute path "
      "(or pass --store PATH for the session store)");
}

Status make_private_dir(const std::filesystem::path& dir) {
  // Parents first, each created 0700 when missing; existing parents are left as they are.
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::error(
          fmt::format("cannot create the directory {}: {}", at.string(), std::strerror(errno)));
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return Status::error(fmt::format("cannot read {}: {}", dir.string(), std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    return Status::error(fmt::format(
        "{} is a symbolic link; mecha keeps its state only in a real directory of yours",
        dir.string()));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::error(fmt::format("{} is not a directory", dir.string()));
  }
  if (st.st_uid != ::geteuid()) {
    return Status::error(fmt::format(
        "{} belongs to user id {}, not to you ({}); mecha keeps its state only in a directory "
        "of yours",
        dir.string(), st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 07777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    return Status::error(
        fmt::format("cannot make {} private (mode 0700): {}", dir.string(), std::strerror(errno)));
  }
  return ok_status();
}

Result<std::filesystem::path> private_state_dir() {
  auto dir = user_state_dir();
  if (!dir) return dir.status();
  MECHA_RETURN_IF_ERROR(make_private_dir(*dir));
  return dir;
}

}  // namespace mecha
