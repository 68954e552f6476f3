// libFuzzer target over the wire decoder: any byte stream, cut into lines by FrameReader in
// pieces of any size and each line decoded strictly, must give frames or error frames,
// never a crash; a frame that decodes must encode again, and that line must decode too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wire/codec.h"
#include "wire/frame_reader.h"

namespace {

void decode_and_reencode(std::string_view line) {
  static const mecha::wire::Limits limits{4096, 64};
  mecha::wire::Decoded d = mecha::wire::decode_frame(line, limits);
  if (!d.ok()) {
    if (d.error.message.empty()) __builtin_trap();  // a refusal always says why
    (void)mecha::wire::encode_frame(mecha::wire::Frame(d.error));
    return;
  }
  std::string again = mecha::wire::encode_frame(*d.frame);
  again.pop_back();  // the newline
  mecha::wire::Decoded back = mecha::wire::decode_frame(again, {});
  if (!back.ok()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the size of the reads the stream arrives in.
  const size_t piece = 1 + data[0] % 64;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  mecha::wire::FrameReader reader(4096);
  for (size_t at = 0; at < stream.size(); at += piece) {
    reader.feed(stream.substr(at, piece));
    while (auto line = reader.next()) {
      if (!line->oversize) decode_and_reencode(line->text);
    }
  }
  decode_and_reencode(stream);
  return 0;
}
