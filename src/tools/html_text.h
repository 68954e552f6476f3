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
//     dropped. The walk is iterative: deep nesting costs memory, never stack. Lists nested
//     deeper than 8 levels are indented as 8.
//  4. The conversion is bounded (tools/html_parse.h): the tags of a page that nest deeper
//     than 512 levels are left out (their text is kept), with a note; a parse that needs more
//     memory than its budget is an error naming it; and it stops, with an error, when the run is
//     cancelled or HtmlStop's deadline passes, inside gumbo's parse as well as in the walk after
//     it.
//  3. PDFs, images, audio, video, archives, application/octet-stream, any other type that is
//     not text, and a body holding NUL bytes are refused: an error naming the content type.
//
// Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "tools/html_parse.h"

namespace mecha::tools {

struct PageText {
  std::string title;  // "" when the page has none
  std::string text;
  std::vector<std::string> notes;  // what was not read, and why (promise 4)
};

// `body` as served with `content_type` (the header's value, "" if none) from `url`,
// converted within `stop` (promise 4).
Result<PageText> page_text(std::string_view content_type, std::string_view body,
                           const std::string& url, const HtmlStop& stop = {});

// The charset `body` is in (promise 1), lowercase: "utf-8", "windows-1252", "shift_jis", ...
std::string charset_of(std::string_view content_type, std::string_view body);

// `bytes` in `charset` as UTF-8, a bad byte as U+FFFD. An unknown charset is read as UTF-8.
std::string to_utf8(std::string_view bytes, const std::string& charset);

// HTML (UTF-8) as text (promises 2 and 4), links resolved against `url`.
Result<PageText> html_to_text(std::string_view html, const std::string& url,
                              const HtmlStop& stop = {});

// `ref` made absolute against `base` (an absolute http(s) URL), as a browser reads an href.
std::string resolve_url(const std::string& base, std::string_view ref);

}  // namespace mecha::tools
