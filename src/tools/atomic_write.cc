#include "tools/atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "base/unique_fd.h"

namespace mecha::tools {
namespace {

std::string temp_name(const std::string& name) {
  static std::atomic<unsigned> counter{0};
  // Keep the temporary name under NAME_MAX however long the real one is.
  return fmt::format(".{}.mecha-{}-{}.tmp", name.substr(0, 200), ::getpid(), counter++);
}

}  // namespace

Status write_atomically(int dir_fd, const std::string& name, std::string_view data,
                        std::optional<mode_t> mode, const std::string& shown) {
  const std::string tmp = temp_name(name);
  UniqueFd fd(::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       mode ? 0600 : 0666));
  if (!fd.valid()) {
    return Status::error(fmt::format("cannot write {}: creating a temporary file beside it: {}",
                                     shown, std::strerror(errno)));
  }
  auto fail = [&](const char* step) {
    const int err = errno;
    fd.reset();
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return Status::error(fmt::format("cannot write {}: {}: {}", shown, step, std::strerror(err)));
  };
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("writing");
    done += static_cast<size_t>(n);
  }
  if (mode && ::fchmod(fd.get(), *mode & 07777) != 0) return fail("setting its mode");
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (::close(fd.get()) != 0) {
    (void)fd.release_unclosed();
    return fail("closing");
  }
  (void)fd.release_unclosed();
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0)
    return fail("renaming into place");
  // The rename is durable once the directory is.
  UniqueFd dir(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) ::fsync(dir.get());
  return ok_status();
}

}  // namespace mecha::tools
