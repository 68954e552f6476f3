#include "cli/gateway/markdown.h"

#include <cmark.h>

#include <memory>
#include <vector>

namespace mecha::gateway {
namespace {

struct NodeDeleter {
  void operator()(cmark_node* node) const { cmark_node_free(node); }
};
using NodePtr = std::unique_ptr<cmark_node, NodeDeleter>;

struct IterDeleter {
  void operator()(cmark_iter* iter) const { cmark_iter_free(iter); }
};
using IterPtr = std::unique_ptr<cmark_iter, IterDeleter>;

// cmark_render_html allocates with the default allocator (the document's).
struct HtmlDeleter {
  void operator()(char* html) const { cmark_get_default_mem_allocator()->free(html); }
};
using HtmlPtr = std::unique_ptr<char, HtmlDeleter>;

std::string_view url_of(cmark_node* node) {
  const char* url = cmark_node_get_url(node);
  return url == nullptr ? std::string_view() : std::string_view(url);
}

// Where a defanged link or image shows its URL, given its plain text.
enum class UrlPlace {
  kNowhere,       // the URL is empty
  kAfterText,     // text <code>url</code>
  kInsteadOfText  // <code>url</code>: the text only repeats the URL (autolinks)
};

UrlPlace url_place(cmark_node_type type, std::string_view text, std::string_view url) {
  constexpr std::string_view kMailto = "mailto:";
  if (url.empty()) return UrlPlace::kNowhere;
  if (type == CMARK_NODE_LINK &&
      (text == url || (url.starts_with(kMailto) && url.substr(kMailto.size()) == text))) {
    return UrlPlace::kInsteadOfText;
  }
  return UrlPlace::kAfterText;
}

// The text below `root`, as cmark puts it in an image's alt attribute (literals, line breaks
// as spaces), with each link and image below `root` read as its defanged form would read.
// One walk, so an image nested n deep costs n, not n squared as defanging inner ones first
// and reading each level again would.
std::string plain_text(cmark_node* root) {
  std::string text;
  std::vector<size_t> starts;  // where the text of each open link or image begins
  IterPtr iter(cmark_iter_new(root));
  cmark_event_type event;
  while ((event = cmark_iter_next(iter.get())) != CMARK_EVENT_DONE) {
    cmark_node* node = cmark_iter_get_node(iter.get());
    const cmark_node_type type = cmark_node_get_type(node);
    switch (type) {
      case CMARK_NODE_TEXT:
      case CMARK_NODE_CODE:
      case CMARK_NODE_HTML_INLINE:
        if (const char* literal = cmark_node_get_literal(node)) text += literal;
        break;
      case CMARK_NODE_SOFTBREAK:
      case CMARK_NODE_LINEBREAK:
        text += ' ';
        break;
      case CMARK_NODE_LINK:
      case CMARK_NODE_IMAGE: {
        if (node == root) break;
        if (event == CMARK_EVENT_ENTER) {
          starts.push_back(text.size());
          break;
        }
        const size_t start = starts.back();
        starts.pop_back();
        const std::string_view url = url_of(node);
        switch (url_place(type, std::string_view(text).substr(start), url)) {
          case UrlPlace::kNowhere:
            break;
          case UrlPlace::kAfterText:
            if (text.size() > start) text += ' ';
            text += url;
            break;
          case UrlPlace::kInsteadOfText:
            text.resize(start);
            text += url;
            break;
        }
        break;
      }
      default:
        break;
    }
  }
  return text;
}

// Inserts a new TEXT or CODE node holding `literal` before `anchor`. Literals come from
// cmark's own strings, which hold no NUL, so the C string loses nothing.
void insert_literal_before(cmark_node* anchor, cmark_node_type type, std::string_view literal) {
  NodePtr node(cmark_node_new(type));
  if (node == nullptr || !cmark_node_set_literal(node.get(), std::string(literal).c_str())) {
    return;
  }
  if (cmark_node_insert_before(anchor, node.get())) node.release();  // the tree owns it now
}

// ![alt](url) -> alt <code>url</code>, with whatever was nested in alt flattened into it.
void defang_image(cmark_node* image) {
  NodePtr owned(image);  // freed, children and all, on return
  const std::string alt = plain_text(image);
  const std::string_view url = url_of(image);
  if (!alt.empty()) insert_literal_before(image, CMARK_NODE_TEXT, alt);
  if (url_place(CMARK_NODE_IMAGE, alt, url) == UrlPlace::kNowhere) return;
  if (!alt.empty()) insert_literal_before(image, CMARK_NODE_TEXT, " ");
  insert_literal_before(image, CMARK_NODE_CODE, url);
}

// [text](url) -> text <code>url</code>; <url> -> <code>url</code>
void defang_link(cmark_node* link) {
  NodePtr owned(link);
  const std::string text = plain_text(link);
  const std::string_view url = url_of(link);
  const UrlPlace place = url_place(CMARK_NODE_LINK, text, url);
  if (place == UrlPlace::kInsteadOfText) {
    insert_literal_before(link, CMARK_NODE_CODE, url);
    return;
  }
  while (cmark_node* child = cmark_node_first_child(link)) {
    // Cannot fail: the link's parent holds inlines, as the link's children are.
    cmark_node_insert_before(link, child);
  }
  if (place == UrlPlace::kNowhere) return;
  if (!text.empty()) insert_literal_before(link, CMARK_NODE_TEXT, " ");
  insert_literal_before(link, CMARK_NODE_CODE, url);
}

void defang_links_and_images(cmark_node* document) {
  // Exit order puts an image before the link around it, so the link's children are plain
  // inlines by the time they move out. An image inside an image (or a link inside one) is
  // not a target: the outermost image reads it into its alt text and frees it. The tree is
  // changed only once the walk is over.
  std::vector<cmark_node*> targets;
  {
    IterPtr iter(cmark_iter_new(document));
    size_t open_images = 0;
    cmark_event_type event;
    while ((event = cmark_iter_next(iter.get())) != CMARK_EVENT_DONE) {
      cmark_node* node = cmark_iter_get_node(iter.get());
      const cmark_node_type type = cmark_node_get_type(node);
      if (type == CMARK_NODE_IMAGE) {
        if (event == CMARK_EVENT_ENTER) {
          ++open_images;
        } else if (--open_images == 0) {
          targets.push_back(node);
        }
      } else if (type == CMARK_NODE_LINK && event == CMARK_EVENT_EXIT && open_images == 0) {
        targets.push_back(node);
      }
    }
  }
  for (cmark_node* node : targets) {
    if (cmark_node_get_type(node) == CMARK_NODE_IMAGE) {
      defang_image(node);
    } else {
      defang_link(node);
    }
  }
}

}  // namespace

std::string render_markdown(std::string_view markdown, bool untrusted) {
  // An empty view may hold a null pointer, on which cmark would do arithmetic.
  const char* data = markdown.empty() ? "" : markdown.data();
  // Safe is cmark's default: CMARK_OPT_UNSAFE is never set.
  NodePtr document(cmark_parse_document(data, markdown.size(), CMARK_OPT_VALIDATE_UTF8));
  if (document == nullptr) return std::string();
  if (untrusted) defang_links_and_images(document.get());
  HtmlPtr html(cmark_render_html(document.get(), CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8));
  return html == nullptr ? std::string() : std::string(html.get());
}

}  // namespace mecha::gateway
