#include "tools/html_text.h"

#include <fmt/format.h>
#include <gumbo.h>
#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "base/text.h"
#include "tools/file_tool_support.h"
#include "tools/html_parse.h"

namespace mecha::tools {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The media type of a Content-Type value, lowercase, without parameters.
std::string media_type(std::string_view content_type) {
  return ascii_lower(trimmed(content_type.substr(0, content_type.find(';'))));
}

// The value of `charset=` in `text` (a Content-Type value or a <meta> tag), lowercase.
std::string charset_param(std::string_view text) {
  std::string l = ascii_lower(text);
  size_t at = l.find("charset");
  if (at == std::string::npos) return "";
  size_t i = at + 7;
  while (i < l.size() && std::isspace(static_cast<unsigned char>(l[i]))) ++i;
  if (i >= l.size() || l[i] != '=') return "";
  ++i;
  while (i < l.size() &&
         (std::isspace(static_cast<unsigned char>(l[i])) || l[i] == '"' || l[i] == '\'')) {
    ++i;
  }
  size_t end = i;
  while (end < l.size() && (std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '-' ||
                            l[end] == '_' || l[end] == '.' || l[end] == ':')) {
    ++end;
  }
  return l.substr(i, end - i);
}

// A charset label as iconv knows it; the labels browsers read as windows-1252 become that.
std::string iconv_name(const std::string& label) {
  static const char* const kWindows1252[] = {"iso-8859-1", "iso8859-1", "latin1",      "l1",
                                             "us-ascii",   "ascii",     "iso_8859-1",  "cp819",
                                             "ibm819",     "cp1252",    "windows-1252"};
  for (const char* w : kWindows1252) {
    if (label == w) return "WINDOWS-1252";
  }
  if (label == "shift-jis" || label == "sjis" || label == "x-sjis" || label == "ms_kanji") {
    return "SHIFT_JIS";
  }
  return label;
}

bool has_nul(std::string_view body) { return body.find('\0') != std::string_view::npos; }

enum class BodyKind { kHtml, kText, kRefused };

BodyKind kind_of(const std::string& type, std::string_view body) {
  if (type == "text/html" || type == "application/xhtml+xml") return BodyKind::kHtml;
  if (type.starts_with("text/") || type == "application/json" || type.ends_with("+json") ||
      type == "application/xml" || type.ends_with("+xml") || type == "application/javascript" ||
      type == "application/x-javascript" || type == "application/ecmascript" ||
      type == "application/yaml" || type == "application/x-yaml" || type == "application/toml" ||
      type == "application/x-sh" || type == "application/sql" || type == "application/graphql") {
    return BodyKind::kText;
  }
  if (!type.empty()) return BodyKind::kRefused;
  // No type: what the body starts with.
  std::string start = ascii_lower(trimmed(body.substr(0, 512)));
  if (start.starts_with("%pdf-")) return BodyKind::kRefused;
  if (start.starts_with("<!doctype html") || start.starts_with("<html") ||
      start.starts_with("<head") || start.starts_with("<body")) {
    return BodyKind::kHtml;
  }
  return BodyKind::kText;
}

// ---- HTML to text ----

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Builds the text: collapses white space outside <pre>, and keeps at most one blank line
// between blocks.
class TextWriter {
 public:
  // Asks for `n` line breaks (1: a new line, 2: a blank line) before the next text.
  void block(int n) {
    breaks_ = std::max(breaks_, n);
    space_ = false;
  }
  // Text of the page.
  void text(std::string_view s) {
    if (pre_ > 0) {
      flush();
      out_.append(s);
      return;
    }
    size_t i = 0;
    while (i < s.size()) {
      if (is_space(s[i])) {
        space_ = !out_.empty();
        ++i;
        continue;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      flush();
      out_.append(s.data() + i, j - i);
      i = j;
    }
  }
  // Markup of ours ("# ", "[", "](url)"), with the space before it kept when `keep_space`.
  void mark(std::string_view s, bool keep_space = true) {
    if (!keep_space) space_ = false;
    flush();
    out_.append(s);
  }
  // A space wanted before the next text, if any follows.
  void soft_space() { space_ = !out_.empty(); }
  void enter_pre() { ++pre_; }
  void leave_pre() { --pre_; }
  size_t size() const { return out_.size(); }
  void truncate(size_t n) { out_.resize(n); }
  std::string take() {
    while (!out_.empty() && (out_.back() == ' ' || out_.back() == '\n')) out_.pop_back();
    if (!out_.empty()) out_ += '\n';
    return std::move(out_);
  }

 private:
  void flush() {
    if (breaks_ > 0) {
      while (!out_.empty() && out_.back() == ' ') out_.pop_back();
      if (!out_.empty()) {
        int have = 0;
        for (auto it = out_.rbegin(); it != out_.rend() && *it == '\n' && have < 2; ++it) ++have;
        for (int k = have; k < breaks_; ++k) out_ += '\n';
      }
      breaks_ = 0;
      space_ = false;
    } else if (space_) {
      if (!out_.empty() && out_.back() != '\n' && out_.back() != ' ') out_ += ' ';
      space_ = false;
    }
  }

  std::string out_;
  int breaks_ = 0;
  bool space_ = false;
  int pre_ = 0;
};

bool dropped(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_TEXTAREA:
      return true;
    default:
      return false;
  }
}

// Line breaks around a block element; 0 for inline ones.
int breaks_of(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_FIGURE:
    case GUMBO_TAG_SECTION:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_FIELDSET:
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_DETAILS:
      return 2;
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_FIGCAPTION:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
      return 1;
    default:
      return 0;
  }
}

int heading_level(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_H1:
      return 1;
    case GUMBO_TAG_H2:
      return 2;
    case GUMBO_TAG_H3:
      return 3;
    case GUMBO_TAG_H4:
      return 4;
    case GUMBO_TAG_H5:
      return 5;
    case GUMBO_TAG_H6:
      return 6;
    default:
      return 0;
  }
}

const char* attribute(const GumboElement& e, const char* name) {
  const GumboAttribute* a = gumbo_get_attribute(&e.attributes, name);
  return a != nullptr ? a->value : nullptr;
}

// The text under `node`, white space collapsed (a title).
std::string inner_text(const GumboNode* node) {
  std::string out;
  std::vector<const GumboNode*> todo = {node};
  while (!todo.empty()) {
    const GumboNode* n = todo.back();
    todo.pop_back();
    if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
        n->type == GUMBO_NODE_CDATA) {
      out += n->v.text.text;
    } else if (n->type == GUMBO_NODE_ELEMENT) {
      const GumboVector& kids = n->v.element.children;
      for (unsigned i = kids.length; i > 0; --i) {
        todo.push_back(static_cast<const GumboNode*>(kids.data[i - 1]));
      }
    }
  }
  std::string collapsed;
  for (char c : out) {
    if (is_space(c)) {
      if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
    } else {
      collapsed += c;
    }
  }
  return std::string(trimmed(collapsed));
}

// The <title> and <base href> of the document's head.
void read_head(const GumboNode* root, std::string& title, std::string& base) {
  std::vector<const GumboNode*> todo = {root};
  while (!todo.empty()) {
    const GumboNode* n = todo.back();
    todo.pop_back();
    if (n->type != GUMBO_NODE_ELEMENT) continue;
    const GumboElement& e = n->v.element;
    if (e.tag == GUMBO_TAG_TITLE && title.empty()) {
      title = inner_text(n);
      continue;
    }
    if (e.tag == GUMBO_TAG_BASE && base.empty()) {
      if (const char* href = attribute(e, "href")) base = href;
      continue;
    }
    if (e.tag == GUMBO_TAG_BODY || e.tag == GUMBO_TAG_SVG) continue;
    for (unsigned i = 0; i < e.children.length; ++i) {
      todo.push_back(static_cast<const GumboNode*>(e.children.data[i]));
    }
  }
}

struct Frame {
  const GumboNode* node;
  unsigned next = 0;      // the next child to visit
  size_t link_start = 0;  // for <a>: where its text begins in the output
  std::string link;       // for <a>: the absolute URL, "" when not shown as a link
};

struct ListState {
  bool ordered;
  int count = 0;
};

// Lists nested deeper than this are indented as this deep: the indent is written for every
// item, so a deep list of many items would make the text grow with depth times items.
constexpr size_t kMaxListIndent = 8;
// The walk asks `stop` every this many nodes.
constexpr unsigned kPollEvery = 4096;

class HtmlWalk {
 public:
  HtmlWalk(std::string base, const HtmlStop& stop) : base_(std::move(base)), stop_(stop) {}

  Result<std::string> run(const GumboNode* root) {
    std::vector<Frame> stack;
    stack.push_back(Frame{root, 0, 0, {}});
    unsigned steps = 0;
    while (!stack.empty()) {
      if (++steps % kPollEvery == 0) MECHA_RETURN_IF_ERROR(stop_.check());
      Frame& f = stack.back();
      const GumboNode* n = f.node;
      if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_DOCUMENT) {
        if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
            n->type == GUMBO_NODE_CDATA) {
          w_.text(n->v.text.text);
        }
        stack.pop_back();
        continue;
      }
      const GumboVector& kids =
          n->type == GUMBO_NODE_DOCUMENT ? n->v.document.children : n->v.element.children;
      if (f.next == 0 && n->type == GUMBO_NODE_ELEMENT) {
        if (dropped(n->v.element.tag)) {
          stack.pop_back();
          continue;
        }
        open(f);
      }
      if (f.next < kids.length) {
        const auto* child = static_cast<const GumboNode*>(kids.data[f.next++]);
        stack.push_back(Frame{child, 0, 0, {}});
        continue;
      }
      if (n->type == GUMBO_NODE_ELEMENT) close(f);
      stack.pop_back();
    }
    return w_.take();
  }

 private:
  void open(Frame& f) {
    const GumboElement& e = f.node->v.element;
    int breaks = breaks_of(e.tag);
    if (breaks > 0) w_.block(breaks);
    if (int level = heading_level(e.tag)) {
      w_.mark(std::string(static_cast<size_t>(level), '#') + " ");
      return;
    }
    switch (e.tag) {
      case GUMBO_TAG_UL:
      case GUMBO_TAG_OL:
        lists_.push_back(ListState{e.tag == GUMBO_TAG_OL});
        break;
      case GUMBO_TAG_LI: {
        const size_t level = std::min(lists_.empty() ? 0 : lists_.size() - 1, kMaxListIndent);
        std::string indent(2 * level, ' ');
        if (!lists_.empty() && lists_.back().ordered) {
          w_.mark(fmt::format("{}{}. ", indent, ++lists_.back().count));
        } else {
          w_.mark(indent + "- ");
        }
        break;
      }
      case GUMBO_TAG_BR:
        w_.block(1);
        break;
      case GUMBO_TAG_HR:
        w_.block(2);
        w_.mark("---");
        w_.block(2);
        break;
      case GUMBO_TAG_PRE:
        w_.mark("```\n");
        w_.enter_pre();
        ++pre_depth_;
        break;
      case GUMBO_TAG_CODE:
        if (!in_pre()) w_.mark("`");
        break;
      case GUMBO_TAG_BLOCKQUOTE:
        w_.mark("> ");
        break;
      case GUMBO_TAG_TD:
      case GUMBO_TAG_TH:
        w_.mark("| ");
        break;
      case GUMBO_TAG_IMG:
        if (const char* alt = attribute(e, "alt"); alt != nullptr && !trimmed(alt).empty()) {
          w_.mark(fmt::format("[image: {}]", trimmed(alt)));
        }
        break;
      case GUMBO_TAG_A:
        if (const char* href = attribute(e, "href")) {
          std::string_view h = trimmed(href);
          std::string scheme = ascii_lower(h.substr(0, h.find(':') + 1));
          if (!h.empty() && !h.starts_with('#') && scheme != "javascript:" && scheme != "data:" &&
              scheme != "vbscript:") {
            f.link = resolve_url(base_, h);
            w_.mark("[");
            f.link_start = w_.size();
          }
        }
        break;
      default:
        break;
    }
  }

  void close(Frame& f) {
    const GumboElement& e = f.node->v.element;
    switch (e.tag) {
      case GUMBO_TAG_UL:
      case GUMBO_TAG_OL:
        if (!lists_.empty()) lists_.pop_back();
        break;
      case GUMBO_TAG_PRE:
        w_.leave_pre();
        --pre_depth_;
        w_.block(1);
        w_.mark("```", false);
        break;
      case GUMBO_TAG_CODE:
        if (!in_pre()) w_.mark("`", false);
        break;
      case GUMBO_TAG_TD:
      case GUMBO_TAG_TH:
        w_.soft_space();
        break;
      case GUMBO_TAG_TR:
        w_.mark("|");
        break;
      case GUMBO_TAG_A:
        if (!f.link.empty()) {
          if (w_.size() == f.link_start) {
            w_.truncate(f.link_start - 1);  // no text: no link
          } else {
            w_.mark("](" + f.link + ")", false);
          }
        }
        break;
      default:
        break;
    }
    int breaks = breaks_of(e.tag);
    if (breaks > 0) w_.block(breaks);
  }

  bool in_pre() const { return pre_depth_ > 0; }

  TextWriter w_;
  std::string base_;
  const HtmlStop& stop_;
  std::vector<ListState> lists_;
  int pre_depth_ = 0;
};

// Removes "." and ".." segments from an absolute path.
std::string without_dots(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 1;
  bool trailing = false;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);
    trailing = j == path.size() && (seg == "." || seg == "..");
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (seg != ".") {
      parts.push_back(seg);
    }
    i = j + 1;
  }
  std::string out;
  for (std::string_view p : parts) {
    out += '/';
    out += p;
  }
  if (trailing || out.empty()) out += '/';
  return out;
}

}  // namespace

std::string resolve_url(const std::string& base, std::string_view ref) {
  ref = trimmed(ref);
  // A scheme: letters, digits, + - . up to a colon, before any / ? #.
  size_t colon = ref.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::isalpha(static_cast<unsigned char>(ref[0])) &&
      ref.substr(0, colon).find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") ==
          std::string_view::npos) {
    return std::string(ref);
  }
  size_t scheme_end = base.find("://");
  if (scheme_end == std::string::npos) return std::string(ref);
  if (ref.starts_with("//")) return base.substr(0, scheme_end + 1) + std::string(ref);
  size_t path_start = base.find_first_of("/?#", scheme_end + 3);
  std::string origin = base.substr(0, path_start);
  std::string rest = path_start == std::string::npos ? "/" : base.substr(path_start);
  std::string path = rest.substr(0, rest.find_first_of("?#"));
  if (path.empty()) path = "/";
  if (ref.empty()) return base.substr(0, base.find('#'));
  if (ref.starts_with('#')) return base.substr(0, base.find('#')) + std::string(ref);
  if (ref.starts_with('?')) return origin + path + std::string(ref);
  std::string_view ref_path = ref.substr(0, ref.find_first_of("?#"));
  std::string_view ref_tail = ref.substr(ref_path.size());
  std::string merged = ref.starts_with('/')
                           ? std::string(ref_path)
                           : path.substr(0, path.rfind('/') + 1) + std::string(ref_path);
  return origin + without_dots(merged) + std::string(ref_tail);
}

std::string charset_of(std::string_view content_type, std::string_view body) {
  std::string from_header = charset_param(content_type);
  if (!from_header.empty()) return from_header;
  if (media_type(content_type) == "text/html" || media_type(content_type).empty()) {
    // <meta charset="..."> or <meta http-equiv="Content-Type" content="...; charset=...">.
    std::string head = ascii_lower(body.substr(0, 1024));
    size_t at = 0;
    while ((at = head.find("<meta", at)) != std::string::npos) {
      size_t end = head.find('>', at);
      if (end == std::string::npos) break;
      std::string found = charset_param(std::string_view(head).substr(at, end - at));
      if (!found.empty()) return found;
      at = end;
    }
  }
  if (body.starts_with("\xEF\xBB\xBF")) return "utf-8";
  if (body.starts_with("\xFF\xFE")) return "utf-16le";
  if (body.starts_with("\xFE\xFF")) return "utf-16be";
  return "utf-8";
}

std::string to_utf8(std::string_view bytes, const std::string& charset) {
  std::string name = iconv_name(charset);
  if (name == "utf-8" || name == "utf8") return valid_utf8(bytes);
  iconv_t cd = iconv_open("UTF-8", name.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return valid_utf8(bytes);
  std::unique_ptr<void, int (*)(iconv_t)> owned(cd, iconv_close);
  std::string out;
  out.resize(bytes.size() * 2 + 16);
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  size_t used = 0;
  while (in_left > 0) {
    char* dst = out.data() + used;
    size_t out_left = out.size() - used;
    size_t rc = iconv(cd, &in, &in_left, &dst, &out_left);
    used = out.size() - out_left;
    if (rc != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) {
      out.resize(out.size() * 2);
      continue;
    }
    // EILSEQ or EINVAL (cut at the end): one bad byte, one U+FFFD, and on.
    if (out.size() - used < kReplacement.size()) out.resize(out.size() * 2);
    std::memcpy(out.data() + used, kReplacement.data(), kReplacement.size());
    used += kReplacement.size();
    ++in;
    --in_left;
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
  }
  out.resize(used);
  return out;
}

Result<PageText> html_to_text(std::string_view html, const std::string& url, const HtmlStop& stop) {
  auto parsed = ParsedHtml::parse(html, stop);
  if (!parsed) return parsed.status();
  const GumboOutput& output = (*parsed)->output();
  PageText page;
  std::string base;
  read_head(output.root, page.title, base);
  std::string base_url = base.empty() ? url : resolve_url(url, base);
  auto text = HtmlWalk(base_url, stop).run(output.document);
  if (!text) return text.status();
  page.text = std::move(*text);
  if (size_t dropped = (*parsed)->dropped_tags(); dropped > 0) {
    page.notes.push_back(fmt::format(
        "the page nests elements more than {} levels deep; {} tag{} past that depth {} left "
        "out, and the text {} held is shown one level up",
        HtmlParseLimits{}.max_depth, dropped, dropped == 1 ? "" : "s",
        dropped == 1 ? "was" : "were", dropped == 1 ? "it" : "they"));
  }
  return page;
}

Result<PageText> page_text(std::string_view content_type, std::string_view body,
                           const std::string& url, const HtmlStop& stop) {
  const std::string type = media_type(content_type);
  const std::string charset = charset_of(content_type, body);
  BodyKind kind = kind_of(type, body);
  const bool wide = charset.starts_with("utf-16") || charset.starts_with("utf-32");
  std::string shown_type = type.empty() ? "no content type" : type;
  if (kind == BodyKind::kRefused || (has_nul(body) && !wide)) {
    if (type.empty() && body.starts_with("%PDF-")) shown_type = "a PDF (no content type)";
    return Status::error(fmt::format(
        "WebFetch did not read {}: it serves {} bytes of {}{}, and WebFetch reads only text "
        "(HTML, plain text, JSON, XML)",
        url, body.size(), shown_type, kind == BodyKind::kRefused ? "" : " with NUL bytes"));
  }
  std::string text = to_utf8(body, charset);
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  if (kind == BodyKind::kText) return PageText{"", std::move(text), {}};
  auto page = html_to_text(text, url, stop);
  if (!page) return page.status().prefixed(fmt::format("WebFetch stopped reading {}", url));
  return page;
}

}  // namespace mecha::tools
