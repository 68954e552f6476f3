// libFuzzer target over the plain HTTP transport's parsers: any bytes, read as a response
// head and as a chunked body, must give a value or an error, never a crash; a chunked body
// fed in pieces of any size must decode exactly as when fed whole.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "providers/plain_http.h"

namespace {

struct Decoded {
  bool ok = true;
  bool done = false;
  size_t used = 0;
  std::string out;
};

Decoded decode(std::string_view body, size_t piece) {
  mecha::providers::ChunkedDecoder d;
  Decoded r;
  for (size_t at = 0; at < body.size() && !d.done(); at += piece) {
    auto n = d.feed(body.substr(at, piece), r.out);
    if (!n.ok()) {
      r.ok = false;
      return r;
    }
    r.used += *n;
  }
  r.done = d.done();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the size of the pieces the body arrives in.
  const size_t piece = 1 + data[0] % 16;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)mecha::providers::parse_response_head(bytes);
  (void)mecha::providers::parse_plain_url(bytes);
  const Decoded whole = decode(bytes, bytes.size() + 1);
  const Decoded pieces = decode(bytes, piece);
  if (whole.ok != pieces.ok) __builtin_trap();
  if (whole.ok && (whole.done != pieces.done || whole.out != pieces.out)) __builtin_trap();
  if (whole.ok && whole.done && whole.used != pieces.used) __builtin_trap();
  return 0;
}
