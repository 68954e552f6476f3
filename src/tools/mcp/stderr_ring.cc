#include "tools/mcp/stderr_ring.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/json_limits.h"

namespace mecha::mcp {

StderrRing::StderrRing(size_t capacity, const std::filesystem::path& log_file)
    : capacity_(capacity) {
  if (log_file.empty()) return;
  int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  log_ = ::fdopen(fd, "a");
  if (log_ == nullptr) ::close(fd);
}

StderrRing::~StderrRing() {
  if (log_ != nullptr) std::fclose(log_);
}

void StderrRing::add(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (log_ != nullptr) {
    std::fwrite(bytes.data(), 1, bytes.size(), log_);
    std::fflush(log_);
  }
  if (bytes.size() >= capacity_) {
    kept_.assign(bytes.substr(bytes.size() - capacity_));
    dropped_ = true;
    return;
  }
  kept_.append(bytes);
  if (kept_.size() > capacity_) {
    kept_.erase(0, kept_.size() - capacity_);
    dropped_ = true;
  }
}

std::string StderrRing::tail() const {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    text = kept_;
    if (dropped_) {
      // Start at a whole line: the cut one is half a sentence.
      size_t nl = text.find('\n');
      if (nl != std::string::npos && nl + 1 < text.size()) text.erase(0, nl + 1);
    }
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  return replace_invalid_utf8(text);
}

}  // namespace mecha::mcp
