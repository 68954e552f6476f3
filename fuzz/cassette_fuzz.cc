// libFuzzer target over the cassette reader: any text must be read as a cassette or refused
// with an error naming the place, never crash; a cassette that reads must replay its first
// line for "main" and encode it again as a cassette line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "providers/cassette.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cassette = mecha::providers::CassetteProvider::parse(text, "fuzz.jsonl");
  if (!cassette.ok()) {
    if (cassette.message().rfind("fuzz.jsonl", 0) != 0) __builtin_trap();  // names the file
    return 0;
  }
  mecha::providers::CompletionRequest request;
  request.messages.push_back(mecha::Message::user_text("go"));
  auto response = (*cassette)->complete(request, nullptr);
  if (response.ok()) {
    (void)mecha::dump_json(mecha::providers::cassette_line_json("main", *response));
  }
  return 0;
}
