// UniqueFd: an owned file descriptor, closed when it goes away. Move-only.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace mecha {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Gives up ownership without closing (for a descriptor closed by hand).
  int release_unclosed() { return std::exchange(fd_, -1); }
  // Another descriptor for the same open file (close-on-exec); invalid when that fails.
  UniqueFd duplicate() const { return UniqueFd(fd_ >= 0 ? ::fcntl(fd_, F_DUPFD_CLOEXEC, 0) : -1); }

 private:
  int fd_ = -1;
};

}  // namespace mecha
