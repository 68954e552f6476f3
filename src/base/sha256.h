// SHA-256 (FIPS 180-4), for recognising a file's exact content (`mecha trust`).
//
// Written here rather than linked from libcrypto: the release binary loads only libc and
// libm at start, and this is the one digest mecha needs. Checked against the FIPS 180-4
// example vectors in sha256_test.cc.
//
// Thread-safety: a Sha256 belongs to one thread; the free function is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mecha {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest of everything updated so far. REQUIRES: called once; update() no more after.
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The digest of `data` as 64 lowercase hex digits, as sha256sum prints it.
std::string sha256_hex(std::string_view data);

}  // namespace mecha
