#include "base/sha256.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace mecha {
namespace {

// The FIPS 180-4 example vectors (NIST CSRC "SHA256.pdf", "SHA256_2.pdf") and the long one
// from the NESSIE / FIPS 180-2 appendix.
TEST(Sha256, FipsVectors) {
  struct Case {
    std::string input;
    const char* digest;
  };
  const Case cases[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
       "nopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(sha256_hex(c.input), c.digest) << c.input.substr(0, 40);
  }
}

// Block boundaries: lengths around 55, 56, 64 bytes take the padding's other branch, and
// feeding the input in pieces must give the same digest as feeding it whole.
// (Digests from coreutils' sha256sum.)
TEST(Sha256, PaddingBoundariesAndPieces) {
  const std::pair<size_t, const char*> cases[] = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
  };
  for (const auto& [n, digest] : cases) {
    const std::string input(n, 'x');
    EXPECT_EQ(sha256_hex(input), digest) << n;
    for (size_t piece : {1, 7, 63, 64}) {
      Sha256 s;
      for (size_t at = 0; at < input.size(); at += piece) s.update(input.substr(at, piece));
      std::string hex;
      for (uint8_t b : s.finish()) hex += fmt::format("{:02x}", b);
      EXPECT_EQ(hex, digest) << n << " in pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace mecha
