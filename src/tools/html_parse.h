// HtmlParse: gumbo's parse of a page a stranger wrote, bounded in depth, memory and time.
//
// Why: gumbo has no limits, and its tree builder is worse than quadratic in the nesting of
// a page, as each tag scans the stack of open elements: 20,000 nested <div> take gumbo 3 s,
// 150,000 (750 KB) minutes, and nothing in gumbo polls a cancel token or a clock. Two
// bounds, one before gumbo and one inside it:
//
//  1. Before: within_depth() estimates, in one linear pass, how deep each tag would be, and
//     leaves out every start tag that would nest deeper than HtmlParseLimits::max_depth
//     (Default: 512, the depth past which Blink's parser stops nesting too), with a space in
//     its place: what such an element held stays, one level up, so no text is lost.
//     ParsedHtml says how many tags were left out. The estimate follows the HTML rules that
//     keep ordinary pages shallow (void elements, elements whose end tag may be left out, a
//     new <a> closing an open one, raw text in <script>, <style>, <textarea>, <title>), so a
//     real page keeps all its tags; it cannot follow every rule of tree building (gumbo may
//     nest more deeply than it counts, reopening formatting elements), so it is not the
//     only bound.
//  2. Inside: gumbo allocates through our allocator, for every node and buffer. That is
//     where the parse is stopped: when it has used HtmlParseLimits::max_bytes_per_input_byte
//     times the input's size (at least min_arena_bytes), when the cancel token is cancelled,
//     or when the deadline passes (polled every few allocations; gumbo allocates for every
//     token, so a parse cannot run long without asking). A stopped parse unwinds with
//     longjmp out of gumbo's C frames (no C++ object with a destructor lives between the
//     setjmp and the longjmp), and all its memory, owned by the arena, is freed at once.
//
// Thread-safe: no shared state; each parse has its own arena.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/cancel.h"
#include "base/clock.h"
#include "base/result.h"

struct GumboInternalOutput;

namespace mecha::tools {

// When a conversion of a page must stop: its run was cancelled, or its deadline passed.
struct HtmlStop {
  const CancelToken* cancel = nullptr;  // null: never cancelled
  const mecha::Clock* clock = nullptr;  // null: no deadline
  std::chrono::steady_clock::time_point deadline{};
  // What the deadline is, for the message: "[web] timeout_s (30 s)".
  std::string deadline_name = "the deadline";

  // OK; Status::cancelled() once the token is; else, past the deadline, the error
  // "turning the HTML into text took longer than <deadline_name>".
  Status check() const;
};

struct HtmlParseLimits {
  int max_depth = 512;                   // Default: 512 levels of elements.
  size_t max_bytes_per_input_byte = 32;  // Default: 32 (real pages take 7 to 13).
  size_t min_arena_bytes = 64 << 20;     // Default: 64 MiB, for small pages.
};

// `html` with a space for each start tag that would nest deeper than `max_depth` by the
// estimate of promise 1. Read again, the result has no tag to leave out.
struct WithinDepth {
  std::string html;         // "" when no tag was left out: `html` itself is within depth
  size_t dropped_tags = 0;  // the start tags left out
};
WithinDepth within_depth(std::string_view html, int max_depth);

// One page's parse tree, with the memory that holds it.
class ParsedHtml {
 public:
  // Parses `html` (UTF-8) within `limits` (promise 1), stopping as `stop` says and at the
  // memory budget (promise 2). Errors: Status::cancelled, the deadline's message, or
  // "turning the HTML into text needs more than N MiB, the limit for a page of M bytes".
  static Result<std::unique_ptr<ParsedHtml>> parse(std::string_view html, const HtmlStop& stop,
                                                   const HtmlParseLimits& limits = {});
  ~ParsedHtml();
  ParsedHtml(const ParsedHtml&) = delete;
  ParsedHtml& operator=(const ParsedHtml&) = delete;

  const GumboInternalOutput& output() const { return *output_; }
  // The start tags left out because they nest too deep (promise 1); usually 0.
  size_t dropped_tags() const { return dropped_tags_; }

 private:
  class Arena;
  ParsedHtml();

  std::string html_;  // the page without its dropped tags, when there were any
  std::unique_ptr<Arena> arena_;
  const GumboInternalOutput* output_ = nullptr;
  size_t dropped_tags_ = 0;
};

}  // namespace mecha::tools
