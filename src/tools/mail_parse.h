// MailParse: one mail (RFC 5322 text, as a Maildir file holds it) made readable: its main
// headers and the text of its body. Mail is hostile input (anyone can send it), so the
// parse is bounded and never fails: what it cannot read it keeps as it is, with a note.
//
// Promises:
//  1. Headers are unfolded; From, To, Subject, Date and Message-ID are kept, RFC 2047
//     encoded words (=?charset?B?...?= and ?Q?) decoded to UTF-8. Control characters in a
//     header value (a decoded CR or LF included) become spaces, so a value is one line.
//  2. The body is the first text/plain part of the MIME tree (nested multiparts walked
//     iteratively, at most kMaxParts parts and kMaxDepth levels), not an attachment; else the
//     first text/html part reduced to text (tags stripped, common entities decoded); else
//     the raw body. Base64 and quoted-printable are decoded. Charsets utf-8, us-ascii and
//     latin-1 (iso-8859-1, windows-1252 read as latin-1) are converted to UTF-8; any other
//     is kept as it is with a note naming it. The result is always valid UTF-8.
//  3. Attachments are not shown; each is named in a note with its type.
//  4. A body longer than max_body_bytes is cut with a note saying how much was left out.
//  5. Time is linear in the mail's size: no search runs from each of many positions to the
//     end of the text (an entity's ';' is looked for in its next 10 bytes, an encoded word's
//     end with searches that never read the same bytes twice), and the MIME walk reads each
//     level of nesting once (at most kMaxDepth times the mail).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mecha::tools {

struct MailHeaders {
  std::string from, to, subject, date, message_id;
};

struct ParsedMail {
  MailHeaders headers;
  std::string body;
  std::vector<std::string> notes;  // what was left out or kept undecoded, for the reader
};

inline constexpr int kMaxParts = 200;
inline constexpr int kMaxDepth = 20;

// Only the headers (promise 1): for listings, which read the start of each file.
MailHeaders parse_mail_headers(std::string_view raw);

ParsedMail parse_mail(std::string_view raw, size_t max_body_bytes);

// RFC 2047: `value` with its encoded words decoded to UTF-8 (promise 1, without the
// control-character cleanup).
std::string decode_encoded_words(std::string_view value);

std::string decode_base64(std::string_view in);
std::string decode_quoted_printable(std::string_view in);
std::string encode_base64(std::string_view in);

// Text of an HTML document, crudely: scripts and styles dropped, tags removed, block tags
// turned into line breaks, entities &amp; &lt; &gt; &quot; &apos; &nbsp; &#N; &#xN; decoded.
std::string html_to_text(std::string_view html);

}  // namespace mecha::tools
