// What a fetched body says, as text a model reads: HTML turned into Markdown-like text with
// gumbo (an HTML5 parser, so broken markup is read as browsers read it), plain text, JSON and
// XML as they are, every charset converted to UTF-8, and anything else refused with a note.
//
// Promises:
//  1. The charset is the Content-Type header's, else the page's <meta charset> or
//     http-equiv Content-Type (in its first 1024 bytes), else a byte-order mark's, else
//     UTF-8. ISO-8859-1 and ASCII labels are read as windows-1252, as browsers do. A byte
//     that is not valid in the charset becomes U+FFFD; the result is always valid UTF-8.
//  2. HTML keeps the title, headings (#), paragraphs, lists (- and 1.), links as
//     [text](absolute URL, resolved against the page's URL or its <base href>), <pre> as a
//     fenced block, inline <code> in backticks, and table rows as | cells |. <head> (but the
//     title), script, style, noscript, template, svg, iframe, object and form controls are
//     dropped. The walk is iterative: deep nesting costs memory, never stack.
//  3. PDFs, images, audio, video, archives, application/octet-stream, any other type that is
//     not text, and a body holding NUL bytes are refused: an error naming the content type.
//
// Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::tools {

struct PageText {
  std::string title;  // "" when the page has none
  std::string text;
};

// `body` as served with `content_type` (the header's value, "" if none) from `url`.
Result<PageText> page_text(std::string_view content_type, std::string_view body,
                           const std::string& url);

// The charset `body` is in (promise 1), lowercase: "utf-8", "windows-1252", "shift_jis", ...
std::string charset_of(std::string_view content_type, std::string_view body);

// `bytes` in `charset` as UTF-8, a bad byte as U+FFFD. An unknown charset is read as UTF-8.
std::string to_utf8(std::string_view bytes, const std::string& charset);

// HTML (UTF-8) as text (promise 2), links resolved against `url`.
PageText html_to_text(std::string_view html, const std::string& url);

// `ref` made absolute against `base` (an absolute http(s) URL), as a browser reads an href.
std::string resolve_url(const std::string& base, std::string_view ref);

}  // namespace mecha::tools
