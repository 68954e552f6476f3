// BoundedOutput: what is kept of a stream that may be arbitrarily long, its first and last
// bytes, and OutputKeeper, which fills one as the bytes arrive. base/subprocess.h captures a
// command's output with it, tools/persistent_shell.h the output of a command run by a shell
// that outlives it.
//
// Thread-safety: plain values; one keeper per stream, used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mecha {

// The first and last bytes of a stream, and how many bytes in between were not kept.
struct BoundedOutput {
  std::string head;
  std::string tail;      // empty unless bytes were dropped
  uint64_t dropped = 0;  // bytes between head and tail that were not kept
  uint64_t total = 0;    // bytes the stream carried

  // head and tail joined; when bytes were dropped, a line between them says how many.
  std::string text() const;
  bool operator==(const BoundedOutput&) const = default;
};

// Keeps the first `cap / 2` and the last `cap - cap / 2` bytes of a stream, in memory
// bounded by about twice the cap whatever the stream's length.
class OutputKeeper {
 public:
  explicit OutputKeeper(size_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

  void add(std::string_view data);
  // What was kept. REQUIRES: called once, after the last add().
  BoundedOutput finish();

 private:
  void trim();

  const size_t head_cap_;
  const size_t tail_cap_;
  BoundedOutput out_;
  std::string tail_;
};

}  // namespace mecha
