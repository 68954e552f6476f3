// libFuzzer target over HTML to text (tools/html_text.h, tools/html_parse.h): any bytes, as a
// page of each content type, must give text or a refusal naming the URL, never crash; the
// depth estimate must never leave out more than it reads, and what it keeps must be within
// its depth by its own count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/json_limits.h"
#include "tools/html_parse.h"
#include "tools/html_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mecha::tools;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  const std::string url = "https://fuzz.example/a/b.html";
  for (std::string_view type : {"text/html", "text/html; charset=iso-8859-1", "", "text/plain"}) {
    auto page = page_text(type, body, url);
    if (!page.ok()) {
      if (page.message().find(url) == std::string::npos) __builtin_trap();
      continue;
    }
    if (mecha::replace_invalid_utf8(page->text) != page->text) __builtin_trap();
    if (mecha::replace_invalid_utf8(page->title) != page->title) __builtin_trap();
  }
  // A small depth, so that short inputs reach it.
  WithinDepth shallow = within_depth(body, 4);
  if (shallow.dropped_tags > 0) {
    if (shallow.html.size() >= body.size()) __builtin_trap();
    if (within_depth(shallow.html, 4).dropped_tags != 0) __builtin_trap();
  } else if (!shallow.html.empty()) {
    __builtin_trap();
  }
  return 0;
}
