// StderrRing: the last bytes a server wrote on stderr, kept for error messages, and
// optionally every byte appended to a log file.
//
// Thread-safe.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace mecha::mcp {

class StderrRing {
 public:
  // Keeps the last `capacity` bytes. When `log_file` is not empty, appends everything to
  // it (created 0600); a log that cannot be opened is skipped, the ring still works.
  explicit StderrRing(size_t capacity, const std::filesystem::path& log_file = {});
  ~StderrRing();
  StderrRing(const StderrRing&) = delete;
  StderrRing& operator=(const StderrRing&) = delete;

  void add(std::string_view bytes);
  // The kept bytes, starting at a line boundary when bytes were dropped, made valid UTF-8,
  // trailing whitespace trimmed.
  std::string tail() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::string kept_;
  bool dropped_ = false;
  std::FILE* log_ = nullptr;
};

}  // namespace mecha::mcp
