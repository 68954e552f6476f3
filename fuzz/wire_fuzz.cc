// libFuzzer target over the wire decoder: any byte stream, cut into lines by FrameReader and
// decoded, must give frames or error frames without crashing, hanging or throwing; every
// frame decoded, fitted within the limits and encoded again must decode again; every error
// frame must encode to a line that decodes (its message may quote ill-formed bytes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "wire/codec.h"
#include "wire/frame_fit.h"
#include "wire/frame_reader.h"

namespace {

void must_decode(const std::string& line, const mecha::wire::Limits& limits) {
  if (line.empty() || line.back() != '\n') __builtin_trap();
  const std::string_view body(line.data(), line.size() - 1);
  if (!mecha::wire::decode_frame(body, limits).ok()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mecha::wire::Limits limits{2048, 16};
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mecha::wire::FrameReader reader(limits.max_frame_bytes);
  // Fed in two pieces, so a line cut across reads is exercised too.
  reader.feed(bytes.substr(0, size / 2));
  reader.feed(bytes.substr(size / 2));
  reader.feed("\n");
  while (auto line = reader.next()) {
    if (line->oversize) continue;
    mecha::wire::Decoded d = mecha::wire::decode_frame(line->text, limits);
    if (!d.ok()) {
      if (d.error.code.empty()) __builtin_trap();  // a refusal always says which check
      must_decode(mecha::wire::encode_frame(d.error), mecha::wire::Limits{});
      continue;
    }
    for (const std::string& out : mecha::wire::fit_frame(*d.frame, limits)) {
      must_decode(out, limits);
    }
  }
  return 0;
}
