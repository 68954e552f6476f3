// Markdown for the web page: a model's reply, rendered to HTML on the server with cmark, so
// the browser is handed markup that is already safe and never parses Markdown itself.
//
// Promised for every input (empty, huge, invalid UTF-8, deeply nested):
//   - raw HTML is never passed through: HTML blocks and inline HTML become comments
//     (cmark's safe mode), and javascript:, vbscript:, file: and data: URLs (other than
//     data:image/png, gif, jpeg, webp, which cmark allows) are dropped from href and src;
//   - invalid UTF-8 is replaced with U+FFFD, so the output is valid UTF-8;
//   - no crash and no recursion on the input's depth (cmark walks the tree iteratively, and
//     so does the defanging).
// Not promised: linear time. Defanging is linear, but cmark 0.30.2's parser is quadratic on
// some inputs (`![[]()` repeated: 0.1 s for 64 KB, 2.6 s for 256 KB, 80 s for 1 MB), so the
// caller bounds the size of what it renders.
//
// A reply written while the turn was untrusted (it read a web page, a file, a tool's output)
// may carry a prompt injection's links, and an image URL with data in its query string is
// an exfiltration channel that fires as soon as the page shows it. Such a reply is
// defanged: nothing in its HTML makes the browser fetch or navigate anywhere. The reader
// still sees every URL, as inline code, and can copy it by hand.
//
// Thread-safety: a pure function with no shared state; call it from any thread.
#pragma once

#include <string>
#include <string_view>

namespace mecha::gateway {

// Renders CommonMark `markdown` to an HTML fragment (no <html> or <body>).
//
// untrusted = false: cmark's HTML, safe mode: links are <a href>, images <img src>.
// untrusted = true: no <a> and no <img> in the output. Then
//   - a link [text](url "title") becomes `text <code>url</code>`; an autolink <url>, whose
//     text is its URL, becomes `<code>url</code>` alone;
//   - an image ![alt](url) becomes `alt <code>url</code>`; a link or image inside alt is
//     read into it as plain text, URL included: ![a ![b](u)](v) -> `a b u <code>v</code>`;
//   - reference links and images likewise, with the URL of their definition;
//   - titles are dropped, and an empty URL leaves only the text.
std::string render_markdown(std::string_view markdown, bool untrusted);

}  // namespace mecha::gateway
