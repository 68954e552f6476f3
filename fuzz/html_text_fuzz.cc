// libFuzzer target over HTML to text (tools/html_text.h, tools/html_parse.h): any bytes, as a
// page of each content type, must give text or a refusal naming the URL, never crash; the
// depth estimate must never leave out more than it reads, and what it keeps must be within
// its depth by its own count. A parse is also stopped at a deadline that passes after a
// number of clock readings the first byte picks, so that the longjmp out of gumbo runs from
// many points of its parse, under the sanitizers and the leak checker.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/json_limits.h"
#include "tools/html_parse.h"
#include "tools/html_text.h"

namespace {

// Past the deadline from its `reads`-th reading on.
class ExpiringClock final : public mecha::Clock {
 public:
  explicit ExpiringClock(int reads) : reads_(reads) {}
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::hours(++read_ >= reads_ ? 2 : 0));
  }
  std::chrono::system_clock::time_point wall_now() const override { return {}; }

 private:
  int reads_;
  mutable int read_ = 0;
};

}  // namespace

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
  if (size > 0) {
    ExpiringClock clock(2 + data[0] % 16);
    const HtmlStop stop{.clock = &clock,
                        .deadline = std::chrono::steady_clock::time_point(std::chrono::hours(1)),
                        .deadline_name = "the fuzzer's deadline"};
    auto parsed = ParsedHtml::parse(body, stop, {.max_depth = 16});
    if (!parsed.ok() &&
        parsed.message() != "turning the HTML into text took longer than the fuzzer's deadline") {
      __builtin_trap();
    }
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
