#include "tools/mail_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "base/json_limits.h"
#include "base/text.h"

namespace mecha::tools {
namespace {

constexpr size_t kMaxHeaders = 1000;

// The mail with CRLF line ends made LF (Maildir files may hold either).
std::string normalized(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
    out.push_back(raw[i]);
  }
  return out;
}

struct Entity {
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case name, unfolded value
  std::string_view body;

  const std::string* header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return &v;
    }
    return nullptr;
  }
};

// Headers up to the first empty line, unfolded; the rest is the body. REQUIRES: LF line ends.
Entity split_entity(std::string_view text) {
  Entity e;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = std::min(end + 1, text.size());
    if (line.empty()) {
      e.body = text.substr(pos);
      return e;
    }
    if ((line[0] == ' ' || line[0] == '\t') && !e.headers.empty()) {
      e.headers.back().second += " ";
      e.headers.back().second += trim(line);
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;  // not a header: skipped
    if (e.headers.size() >= kMaxHeaders) continue;
    e.headers.emplace_back(ascii_lower(trim(line.substr(0, colon))),
                           std::string(trim(line.substr(colon + 1))));
  }
  e.body = text.substr(text.size());
  return e;
}

// "type/subtype; name=value; name="quoted value"" -> the lower-case type and the parameters.
struct ContentType {
  std::string type = "text/plain";
  std::vector<std::pair<std::string, std::string>> params;
  std::string param(std::string_view name) const {
    for (const auto& [n, v] : params) {
      if (n == name) return v;
    }
    return "";
  }
};

ContentType parse_content_type(std::string_view value) {
  ContentType ct;
  std::vector<std::string> pieces(1);
  bool quoted = false;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quoted && c == '\\' && i + 1 < value.size()) {
      pieces.back().push_back(value[++i]);
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ';' && !quoted) {
      pieces.emplace_back();
    } else {
      pieces.back().push_back(c);
    }
  }
  std::string type = ascii_lower(trim(pieces[0]));
  if (!type.empty()) ct.type = type;
  for (size_t i = 1; i < pieces.size(); ++i) {
    size_t eq = pieces[i].find('=');
    if (eq == std::string::npos) continue;
    std::string name = ascii_lower(trim(std::string_view(pieces[i]).substr(0, eq)));
    if (!name.empty() && name.back() == '*') name.pop_back();  // RFC 2231: value kept raw
    ct.params.emplace_back(name, std::string(trim(std::string_view(pieces[i]).substr(eq + 1))));
  }
  return ct;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_latin1(std::string_view charset) {
  return charset == "iso-8859-1" || charset == "iso8859-1" || charset == "latin1" ||
         charset == "latin-1" || charset == "windows-1252" || charset == "cp1252" ||
         charset == "iso-8859-15" || charset == "l1";
}

bool is_utf8(std::string_view charset) {
  return charset.empty() || charset == "utf-8" || charset == "utf8" || charset == "us-ascii" ||
         charset == "ascii";
}

// `bytes` in `charset` as UTF-8, or kept (made valid) with a note when the charset is not one
// of the simple ones.
std::string to_utf8(std::string_view bytes, std::string_view charset_in,
                    std::vector<std::string>* notes) {
  const std::string charset = ascii_lower(trim(charset_in));
  if (is_latin1(charset)) {
    std::string out;
    out.reserve(bytes.size());
    for (unsigned char c : bytes) {
      if (c < 0x80) {
        out.push_back(static_cast<char>(c));
      } else {
        out.push_back(static_cast<char>(0xc0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
      }
    }
    return out;
  }
  if (!is_utf8(charset) && notes != nullptr) {
    std::string note = fmt::format("charset {} was not converted; the text is shown as it is",
                                   replace_invalid_utf8(charset.substr(0, 40)));
    if (std::find(notes->begin(), notes->end(), note) == notes->end()) notes->push_back(note);
  }
  return replace_invalid_utf8(bytes);
}

// The first `needle` at or after a position in `s`, for positions that only grow: an answer
// still ahead is reused, so all the searches of one scan read `s` about once. Without it,
// a header of "=?a?B?" repeated would be searched to its end from each of them.
class ForwardFind {
 public:
  ForwardFind(std::string_view s, std::string_view needle) : s_(s), needle_(needle) {}
  size_t at_or_after(size_t from) {
    if (searched_ && from >= from_ && (found_ == std::string_view::npos || found_ >= from)) {
      return found_;
    }
    searched_ = true;
    from_ = from;
    found_ = s_.find(needle_, from);
    return found_;
  }

 private:
  std::string_view s_;
  std::string_view needle_;
  bool searched_ = false;
  size_t from_ = 0;
  size_t found_ = std::string_view::npos;
};

// The encoded words of one header value ("=?charset?B?text?="), found left to right.
class EncodedWords {
 public:
  explicit EncodedWords(std::string_view s)
      : s_(s), question_(s, "?"), close_(s, "?="), space_(s, " ") {}

  // The word at `pos`, decoded, and the index past it. REQUIRES: `pos` only grows from call to
  // call.
  std::optional<std::pair<std::string, size_t>> at(size_t pos) {
    if (s_.compare(pos, 2, "=?") != 0) return std::nullopt;
    const size_t q1 = question_.at_or_after(pos + 2);
    if (q1 == std::string_view::npos || q1 + 2 >= s_.size() || s_[q1 + 2] != '?') {
      return std::nullopt;
    }
    const char enc = static_cast<char>(std::toupper(static_cast<unsigned char>(s_[q1 + 1])));
    const size_t end = close_.at_or_after(q1 + 3);
    if (end == std::string_view::npos || (enc != 'B' && enc != 'Q')) return std::nullopt;
    // A word holds no space.
    if (space_.at_or_after(q1 + 3) < end) return std::nullopt;
    std::string_view charset = s_.substr(pos + 2, q1 - pos - 2);
    if (size_t star = charset.find('*'); star != std::string_view::npos) {
      charset = charset.substr(0, star);  // RFC 2231 language suffix
    }
    std::string_view text = s_.substr(q1 + 3, end - q1 - 3);
    std::string bytes;
    if (enc == 'B') {
      bytes = decode_base64(text);
    } else {
      std::string qp(text);
      std::replace(qp.begin(), qp.end(), '_', ' ');
      bytes = decode_quoted_printable(qp);
    }
    return std::make_pair(to_utf8(bytes, charset, nullptr), end + 2);
  }

 private:
  std::string_view s_;
  ForwardFind question_, close_, space_;
};

// A header value on one line: control characters (a decoded CR or LF) become spaces.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return s;
}

MailHeaders headers_of(const Entity& e) {
  MailHeaders h;
  auto get = [&](std::string_view name) {
    const std::string* v = e.header(name);
    return v ? one_line(decode_encoded_words(*v)) : std::string();
  };
  h.from = get("from");
  h.to = get("to");
  h.subject = get("subject");
  h.date = get("date");
  h.message_id = get("message-id");
  return h;
}

// The parts of a multipart body: what lies between "--boundary" lines, up to "--boundary--".
std::vector<std::string_view> split_multipart(std::string_view body, const std::string& boundary) {
  std::vector<std::string_view> parts;
  const std::string delim = "--" + boundary;
  size_t pos = 0;
  std::optional<size_t> part_start;
  while (pos <= body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.size() >= delim.size() && line.compare(0, delim.size(), delim) == 0) {
      std::string_view rest = line.substr(delim.size());
      if (rest.empty() || rest == "--") {
        if (part_start) {
          // The line break before the delimiter belongs to the delimiter.
          size_t stop = pos > *part_start ? pos - 1 : pos;
          parts.push_back(body.substr(*part_start, stop - *part_start));
          if (parts.size() >= static_cast<size_t>(kMaxParts)) return parts;
        }
        if (rest == "--") return parts;
        part_start = std::min(end + 1, body.size());
      }
    }
    if (end >= body.size()) break;
    pos = end + 1;
  }
  if (part_start && *part_start < body.size()) parts.push_back(body.substr(*part_start));
  return parts;
}

std::string decoded_body(const Entity& e, const ContentType& ct, std::vector<std::string>* notes) {
  const std::string* cte = e.header("content-transfer-encoding");
  const std::string enc = cte ? ascii_lower(trim(*cte)) : "";
  std::string bytes;
  if (enc == "base64") {
    bytes = decode_base64(e.body);
  } else if (enc == "quoted-printable") {
    bytes = decode_quoted_printable(e.body);
  } else {
    bytes = std::string(e.body);
  }
  return to_utf8(bytes, ct.param("charset"), notes);
}

std::string cut_utf8(std::string s, size_t max_bytes, std::vector<std::string>* notes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  notes->push_back(fmt::format("the body was cut at {} bytes; {} more bytes are not shown", cut,
                               s.size() - cut));
  s.resize(cut);
  return s;
}

}  // namespace

std::string decode_base64(std::string_view in) {
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+' || c == '-') {
      v = 62;
    } else if (c == '/' || c == '_') {
      v = 63;
    } else if (c == '=') {
      break;
    } else {
      continue;  // line breaks and stray bytes
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string encode_base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 0x3f]);
  }
  if (i < in.size()) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 0x3f]);
    out.push_back(kAlphabet[(v >> 12) & 0x3f]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 0x3f] : '=');
    out.push_back('=');
  }
  return out;
}

std::string decode_quoted_printable(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c != '=') {
      out.push_back(c);
      continue;
    }
    // A soft line break: '=' at the end of a line (trailing blanks allowed).
    size_t j = i + 1;
    while (j < in.size() && (in[j] == ' ' || in[j] == '\t')) ++j;
    if (j < in.size() && in[j] == '\n') {
      i = j;
      continue;
    }
    if (j + 1 < in.size() && in[j] == '\r' && in[j + 1] == '\n') {
      i = j + 1;
      continue;
    }
    if (j >= in.size()) break;
    if (i + 2 < in.size() && hex_value(in[i + 1]) >= 0 && hex_value(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
      i += 2;
    } else {
      out.push_back(c);  // a stray '=' is kept
    }
  }
  return out;
}

std::string decode_encoded_words(std::string_view value) {
  std::string out;
  std::string pending_space;  // blanks after an encoded word: dropped if another follows
  bool after_word = false;
  EncodedWords words(value);
  size_t i = 0;
  while (i < value.size()) {
    if (auto word = words.at(i)) {
      if (!after_word) out += pending_space;
      pending_space.clear();
      out += word->first;
      i = word->second;
      after_word = true;
      continue;
    }
    char c = value[i++];
    if (after_word && (c == ' ' || c == '\t')) {
      pending_space.push_back(c);
      continue;
    }
    out += pending_space;
    pending_space.clear();
    after_word = false;
    out.push_back(c);
  }
  out += pending_space;
  return replace_invalid_utf8(out);
}

std::string html_to_text(std::string_view html) {
  static constexpr std::string_view kBlockTags[] = {"br", "p",  "div",        "li",  "tr", "h1",
                                                    "h2", "h3", "h4",         "h5",  "h6", "table",
                                                    "ul", "ol", "blockquote", "pre", "hr"};
  std::string raw;
  size_t i = 0;
  while (i < html.size()) {
    char c = html[i];
    if (c == '<') {
      if (html.compare(i, 4, "<!--") == 0) {
        size_t end = html.find("-->", i + 4);
        i = end == std::string_view::npos ? html.size() : end + 3;
        continue;
      }
      size_t j = i + 1;
      if (j < html.size() && html[j] == '/') ++j;
      size_t name_start = j;
      while (j < html.size() && std::isalnum(static_cast<unsigned char>(html[j]))) ++j;
      const std::string name = ascii_lower(html.substr(name_start, j - name_start));
      size_t close = html.find('>', j);
      size_t after = close == std::string_view::npos ? html.size() : close + 1;
      if ((name == "script" || name == "style") && html[i + 1] != '/') {
        const std::string end_tag = "</" + name;
        size_t k = after;
        while (k < html.size()) {
          size_t lt = html.find("</", k);
          if (lt == std::string_view::npos) {
            k = html.size();
            break;
          }
          if (ascii_lower(html.substr(lt, end_tag.size())) == end_tag) {
            size_t gt = html.find('>', lt);
            k = gt == std::string_view::npos ? html.size() : gt + 1;
            break;
          }
          k = lt + 2;
        }
        i = k;
        continue;
      }
      if (std::find(std::begin(kBlockTags), std::end(kBlockTags), name) != std::end(kBlockTags)) {
        raw.push_back('\n');
      }
      i = after;
      continue;
    }
    if (c == '&') {
      // An entity is short: look for its ';' in the next few bytes only, not to the end of
      // the text from every '&'.
      const size_t semi_in = html.substr(i, 11).find(';');
      const size_t semi = semi_in == std::string_view::npos ? semi_in : i + semi_in;
      if (semi != std::string_view::npos) {
        std::string_view ent = html.substr(i + 1, semi - i - 1);
        std::optional<uint32_t> cp;
        if (ent == "amp")
          cp = '&';
        else if (ent == "lt")
          cp = '<';
        else if (ent == "gt")
          cp = '>';
        else if (ent == "quot")
          cp = '"';
        else if (ent == "apos")
          cp = '\'';
        else if (ent == "nbsp")
          cp = ' ';
        else if (ent.size() > 1 && ent[0] == '#') {
          uint32_t v = 0;
          bool hex = ent[1] == 'x' || ent[1] == 'X';
          bool good = ent.size() > (hex ? 2u : 1u);
          for (size_t k = hex ? 2 : 1; k < ent.size() && good; ++k) {
            int d = hex ? hex_value(ent[k])
                        : (std::isdigit(static_cast<unsigned char>(ent[k])) ? ent[k] - '0' : -1);
            if (d < 0)
              good = false;
            else
              v = v * (hex ? 16 : 10) + static_cast<uint32_t>(d);
          }
          if (good && v > 0 && v < 0x110000 && (v < 0xd800 || v > 0xdfff)) cp = v;
        }
        if (cp) {
          uint32_t v = *cp;
          if (v < 0x80) {
            raw.push_back(static_cast<char>(v));
          } else if (v < 0x800) {
            raw.push_back(static_cast<char>(0xc0 | (v >> 6)));
            raw.push_back(static_cast<char>(0x80 | (v & 0x3f)));
          } else if (v < 0x10000) {
            raw.push_back(static_cast<char>(0xe0 | (v >> 12)));
            raw.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3f)));
            raw.push_back(static_cast<char>(0x80 | (v & 0x3f)));
          } else {
            raw.push_back(static_cast<char>(0xf0 | (v >> 18)));
            raw.push_back(static_cast<char>(0x80 | ((v >> 12) & 0x3f)));
            raw.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3f)));
            raw.push_back(static_cast<char>(0x80 | (v & 0x3f)));
          }
          i = semi + 1;
          continue;
        }
      }
    }
    raw.push_back(c);
    ++i;
  }
  // Blanks collapsed, each line trimmed, at most one empty line in a row.
  std::string out;
  size_t empty_run = 0;
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t end = raw.find('\n', pos);
    if (end == std::string::npos) end = raw.size();
    std::string line;
    bool blank = false;
    for (char ch : trim(std::string_view(raw).substr(pos, end - pos))) {
      if (ch == ' ' || ch == '\t' || ch == '\r') {
        blank = true;
        continue;
      }
      if (blank && !line.empty()) line.push_back(' ');
      blank = false;
      line.push_back(ch);
    }
    if (line.empty()) {
      if (++empty_run == 1 && !out.empty()) out.push_back('\n');
    } else {
      empty_run = 0;
      out += line;
      out.push_back('\n');
    }
    pos = end + 1;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

MailHeaders parse_mail_headers(std::string_view raw) {
  const std::string text = normalized(raw);
  return headers_of(split_entity(text));
}

ParsedMail parse_mail(std::string_view raw, size_t max_body_bytes) {
  ParsedMail mail;
  const std::string text = normalized(raw);
  const Entity top = split_entity(text);
  mail.headers = headers_of(top);

  std::optional<std::string> plain, html;
  int seen = 0;
  // Depth-first in document order, iteratively (a nested input cannot overflow the stack).
  std::vector<std::pair<Entity, int>> stack;
  stack.emplace_back(top, 0);
  while (!stack.empty()) {
    auto [e, depth] = std::move(stack.back());
    stack.pop_back();
    if (++seen > kMaxParts) {
      mail.notes.push_back(
          fmt::format("more than {} MIME parts; the rest are not read", kMaxParts));
      break;
    }
    const std::string* ct_header = e.header("content-type");
    const ContentType ct = parse_content_type(ct_header ? *ct_header : "text/plain");
    const std::string* disp = e.header("content-disposition");
    std::string filename = disp ? parse_content_type(*disp).param("filename") : "";
    if (filename.empty()) filename = ct.param("name");
    const bool attachment =
        (disp && ascii_lower(trim(*disp)).rfind("attachment", 0) == 0) || !filename.empty();

    if (ct.type.rfind("multipart/", 0) == 0 && !ct.param("boundary").empty()) {
      if (depth >= kMaxDepth) {
        mail.notes.push_back(
            fmt::format("MIME parts nested deeper than {} levels are not read", kMaxDepth));
        continue;
      }
      auto parts = split_multipart(e.body, ct.param("boundary"));
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        stack.emplace_back(split_entity(*it), depth + 1);
      }
      continue;
    }
    if (attachment || (ct.type != "text/plain" && ct.type != "text/html")) {
      if (ct.type == "message/rfc822" && !attachment && depth < kMaxDepth) {
        stack.emplace_back(split_entity(e.body), depth + 1);
        continue;
      }
      std::string name = filename.empty() ? "" : " " + one_line(decode_encoded_words(filename));
      mail.notes.push_back(fmt::format("attachment{} ({}, {} bytes encoded) not shown",
                                       replace_invalid_utf8(name), replace_invalid_utf8(ct.type),
                                       e.body.size()));
      continue;
    }
    if (ct.type == "text/plain" && !plain) {
      plain = decoded_body(e, ct, &mail.notes);
    } else if (ct.type == "text/html" && !html) {
      html = decoded_body(e, ct, &mail.notes);
    }
  }
  if (plain) {
    mail.body = std::move(*plain);
  } else if (html) {
    mail.body = html_to_text(*html);
    mail.notes.push_back("the mail has only HTML; shown as text with the markup removed");
  }
  while (!mail.body.empty() && mail.body.back() == '\n') mail.body.pop_back();
  mail.body = cut_utf8(std::move(mail.body), max_body_bytes, &mail.notes);
  return mail;
}

}  // namespace mecha::tools
