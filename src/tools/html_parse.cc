#include "tools/html_parse.h"

#include <fmt/format.h>
#include <gumbo.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <limits>
#include <unordered_map>
#include <vector>

namespace mecha::tools {
namespace {

// Tag names are compared by at most this many bytes: no element's name is longer.
constexpr size_t kMaxTagName = 32;

bool tag_in(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Elements that have no end tag and no content.
bool void_tag(std::string_view n) {
  return tag_in(n, {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr",
                    "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"});
}

// Elements whose end tag may be left out: the next of their kind, or a block, closes them,
// so they do not nest by themselves (<li><li> are siblings). Not counted.
bool end_tag_optional_tag(std::string_view n) {
  return tag_in(n, {"html",   "head",     "body",     "p",  "li", "dt",    "dd",
                    "option", "optgroup", "tr",       "td", "th", "tbody", "thead",
                    "tfoot",  "caption",  "colgroup", "rb", "rt", "rtc",   "rp"});
}

// Elements whose content is text up to their own end tag.
bool raw_text_tag(std::string_view n) {
  return tag_in(n,
                {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"});
}

bool heading_tag(std::string_view n) {
  return n.size() == 2 && n[0] == 'h' && n[1] >= '1' && n[1] <= '6';
}

// Elements a second start tag of closes first (<a>x<a>y are siblings).
bool closes_its_kind_tag(std::string_view n) { return tag_in(n, {"a", "nobr", "button", "form"}); }

bool tag_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

char tag_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// The tags of a page, read as HTML's tokenizer reads them, as far as the estimate needs.
class TagScanner {
 public:
  explicit TagScanner(std::string_view html) : s_(html) {}

  struct Tag {
    size_t start;  // the offset of its '<'
    size_t stop;   // the offset past its '>' (or the end of the page)
    bool end;      // </name>
    bool self_closing;
    std::string name;  // lowercase, at most kMaxTagName bytes
  };

  // The next start or end tag; false at the end of the page.
  bool next(Tag* tag) {
    while (i_ < s_.size()) {
      const size_t lt = s_.find('<', i_);
      if (lt == std::string_view::npos) break;
      i_ = lt + 1;
      if (s_.compare(lt, 4, "<!--") == 0) {
        const size_t close = s_.find("-->", lt + 4);
        i_ = close == std::string_view::npos ? s_.size() : close + 3;
        continue;
      }
      if (i_ < s_.size() && (s_[i_] == '!' || s_[i_] == '?')) {
        skip_past('>');
        continue;
      }
      const bool end = i_ < s_.size() && s_[i_] == '/';
      if (end) ++i_;
      if (i_ >= s_.size() || !std::isalpha(static_cast<unsigned char>(s_[i_]))) {
        if (end) skip_past('>');  // "</ x>" is a comment; "a < b" is text
        continue;
      }
      tag->start = lt;
      tag->end = end;
      tag->name.clear();
      while (i_ < s_.size() && !tag_space(s_[i_]) && s_[i_] != '/' && s_[i_] != '>') {
        if (tag->name.size() < kMaxTagName) tag->name += tag_lower(s_[i_]);
        ++i_;
      }
      tag->self_closing = attributes();
      tag->stop = i_;
      return true;
    }
    i_ = s_.size();
    return false;
  }

  // Skips raw text up to and past `</name`'s '>' (the rest of the page when there is none).
  void skip_raw_text(std::string_view name) {
    while (i_ < s_.size()) {
      const size_t lt = s_.find("</", i_);
      if (lt == std::string_view::npos) break;
      i_ = lt + 2;
      size_t k = 0;
      while (k < name.size() && i_ + k < s_.size() && tag_lower(s_[i_ + k]) == name[k]) ++k;
      const size_t after = i_ + k;
      if (k == name.size() &&
          (after >= s_.size() || tag_space(s_[after]) || s_[after] == '/' || s_[after] == '>')) {
        i_ = after;
        attributes();
        return;
      }
    }
    i_ = s_.size();
  }

  // The rest of the page is text (<plaintext>).
  void stop() { i_ = s_.size(); }

 private:
  void skip_past(char c) {
    const size_t at = s_.find(c, i_);
    i_ = at == std::string_view::npos ? s_.size() : at + 1;
  }

  // Reads the attributes up to and past the tag's '>'; whether it ended with "/>". A quote
  // opens a value only right after '=' (and spaces), as in the tokenizer, so an apostrophe
  // in an unquoted value does not swallow the page.
  bool attributes() {
    bool slash = false;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '>') {
        ++i_;
        return slash;
      }
      slash = c == '/';
      if (c != '=') {
        ++i_;
        continue;
      }
      ++i_;
      while (i_ < s_.size() && tag_space(s_[i_])) ++i_;
      if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
        const char quote = s_[i_++];
        skip_past(quote);
      }
    }
    return false;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

WithinDepth within_depth(std::string_view html, int max_depth) {
  const size_t limit = static_cast<size_t>(std::max(max_depth, 0));
  WithinDepth out;
  size_t copied = 0;              // html before this is in out.html (once a tag was dropped)
  std::vector<std::string> open;  // the estimated stack of open elements, at most limit
  std::unordered_map<std::string, int> open_count;
  int foreign = 0;  // open <svg> and <math>, where "/>" closes an element
  auto pop = [&] {
    if (open.back() == "svg" || open.back() == "math") --foreign;
    --open_count[open.back()];
    open.pop_back();
  };
  auto pop_to = [&](const std::string& name) {
    if (open_count[name] <= 0) return;  // not open: an end tag of nothing is ignored
    while (!open.empty()) {
      const bool found = open.back() == name;
      pop();
      if (found) return;
    }
  };
  TagScanner scanner(html);
  TagScanner::Tag tag;
  while (scanner.next(&tag)) {
    if (tag.end) {
      pop_to(tag.name);
      continue;
    }
    if (tag.name == "plaintext") {
      scanner.stop();
      continue;
    }
    // In <svg> and <math> these are elements like any other: the tokenizer reads markup.
    if (raw_text_tag(tag.name) && foreign == 0) {
      if (!tag.self_closing) scanner.skip_raw_text(tag.name);
      continue;
    }
    if (void_tag(tag.name) || end_tag_optional_tag(tag.name)) continue;
    if (tag.self_closing && foreign > 0) continue;
    if (closes_its_kind_tag(tag.name)) pop_to(tag.name);
    if (heading_tag(tag.name) && !open.empty() && heading_tag(open.back())) pop();
    if (open.size() >= limit) {
      // One level too deep: the tag is left out, and what it held stays where it is. A space
      // takes its place, so that the bytes on either side cannot join into a tag ("<" then
      // "div>"): what gumbo reads is what was counted.
      if (out.dropped_tags == 0) out.html.reserve(html.size());
      out.html.append(html.substr(copied, tag.start - copied));
      out.html += ' ';
      copied = tag.stop;
      ++out.dropped_tags;
      continue;
    }
    open.push_back(tag.name);
    ++open_count[tag.name];
    if (tag.name == "svg" || tag.name == "math") ++foreign;
  }
  if (out.dropped_tags > 0) out.html.append(html.substr(copied));
  return out;
}

Status HtmlStop::check() const {
  if (cancel != nullptr && cancel->cancelled()) return Status::cancelled();
  if (clock != nullptr && clock->now() >= deadline) {
    return Status::error(
        fmt::format("turning the HTML into text took longer than {}", deadline_name));
  }
  return ok_status();
}

// Gumbo's memory for one parse: bump allocation from large blocks, nothing freed until the
// parse's tree is no longer needed. malloc and free were a third of the parse's time, and the
// tree's destruction a walk of its own. Buffers gumbo grows and frees stay in the arena, so
// it holds at most about twice what the tree needs. Every allocation is also where the parse
// may be stopped (promise 2 of the header).
class ParsedHtml::Arena {
 public:
  // `input_bytes`: the size of the page, for the message when the budget is passed.
  Arena(size_t budget, size_t input_bytes, const HtmlStop& stop)
      : budget_(budget), input_bytes_(input_bytes), stop_(stop) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Runs gumbo; null when the parse was stopped, with why() saying why. Nothing in this
  // frame has a destructor, and it is kept out of line, so the setjmp never lands in a
  // caller's frame that has one: the longjmp back into it skips nothing.
  [[gnu::noinline]] const GumboOutput* parse(const GumboOptions* options, const char* html,
                                             size_t size) {
    if (setjmp(escape_) != 0) return nullptr;
    return gumbo_parse_with_options(options, html, size);
  }
  const Status& why() const { return why_; }

  static void* allocate(void* self, size_t size) {
    auto* arena = static_cast<Arena*>(self);
    if (arena->must_stop(size)) std::longjmp(arena->escape_, 1);
    return arena->take(size);
  }
  static void deallocate(void*, void*) {}

 private:
  static constexpr size_t kBlock = 1 << 20;
  // The clock and the cancel token are read every this many allocations.
  static constexpr unsigned kPollEvery = 64;

  static size_t rounded(size_t size) { return (size + 15) & ~size_t{15}; }

  // Whether the parse must stop before this allocation; sets why_. Returns before any
  // longjmp, so its Status temporaries are destroyed.
  bool must_stop(size_t size) {
    const size_t need = rounded(size);
    if (need > left_ && held_ + std::max(need, kBlock) > budget_) {
      why_ = Status::error(
          fmt::format("turning the HTML into text needs more than {} MiB, the limit for a page "
                      "of {} bytes",
                      budget_ >> 20, input_bytes_));
      return true;
    }
    if (++calls_ % kPollEvery == 0) {
      why_ = stop_.check();
      return !why_.ok();
    }
    return false;
  }

  void* take(size_t size) {
    size = rounded(size);
    if (size > left_) {
      const size_t n = std::max(size, kBlock);
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(n));
      held_ += n;
      next_ = blocks_.back().get();
      left_ = n;
    }
    void* out = next_;
    next_ += size;
    left_ -= size;
    return out;
  }

  const size_t budget_;
  const size_t input_bytes_;
  const HtmlStop& stop_;
  std::jmp_buf escape_;
  Status why_;
  unsigned calls_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t held_ = 0;
  char* next_ = nullptr;
  size_t left_ = 0;
};

ParsedHtml::ParsedHtml() = default;
ParsedHtml::~ParsedHtml() = default;  // the tree lives in the arena: no gumbo_destroy_output

Result<std::unique_ptr<ParsedHtml>> ParsedHtml::parse(std::string_view html, const HtmlStop& stop,
                                                      const HtmlParseLimits& limits) {
  std::unique_ptr<ParsedHtml> parsed(new ParsedHtml());
  WithinDepth shallow = within_depth(html, limits.max_depth);
  parsed->dropped_tags_ = shallow.dropped_tags;
  if (shallow.dropped_tags > 0) {
    parsed->html_ = std::move(shallow.html);
    html = parsed->html_;
  }
  const size_t per_byte = limits.max_bytes_per_input_byte;
  const size_t budget =
      html.size() > std::numeric_limits<size_t>::max() / std::max<size_t>(per_byte, 1)
          ? std::numeric_limits<size_t>::max()
          : std::max(limits.min_arena_bytes, per_byte * html.size());
  MECHA_RETURN_IF_ERROR(stop.check());
  parsed->arena_ = std::make_unique<Arena>(budget, html.size(), stop);
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = Arena::allocate;
  options.deallocator = Arena::deallocate;
  options.userdata = parsed->arena_.get();
  options.max_errors = 0;  // the parse errors are not read: do not collect them
  parsed->output_ = parsed->arena_->parse(&options, html.data(), html.size());
  if (parsed->output_ == nullptr) return parsed->arena_->why();
  return parsed;
}

}  // namespace mecha::tools
