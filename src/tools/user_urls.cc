#include "tools/user_urls.h"

#include <algorithm>
#include <cctype>

#include "base/text.h"

namespace mecha::tools {
namespace {

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Lowercases the scheme and the host (with any user part and port, which are compared as
// written but for case) and drops a fragment.
std::string normalized(std::string_view url) {
  if (size_t hash = url.find('#'); hash != std::string_view::npos) url = url.substr(0, hash);
  std::string out(url);
  const size_t scheme_end = out.find("://");
  if (scheme_end == std::string::npos) return out;
  size_t authority_end = out.find_first_of("/?", scheme_end + 3);
  if (authority_end == std::string::npos) authority_end = out.size();
  std::transform(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(authority_end), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // "https://a.example" and "https://a.example/" name the same resource.
  if (authority_end == out.size()) out += '/';
  return out;
}

bool ends_url(unsigned char c) {
  return std::isspace(c) || c == '<' || c == '>' || c == '"' || c == '\'' || c == '`' || c < 0x20 ||
         c == 0x7f;
}

}  // namespace

void add_user_urls(std::string_view text, std::set<std::string>& urls) {
  size_t i = 0;
  while (i < text.size()) {
    // "http" in any case: a person may write HTTPS://Example.org.
    size_t h = i;
    while (h < text.size() && !starts_with_ci(text.substr(h), "http")) ++h;
    if (h == text.size()) return;
    std::string_view rest = text.substr(h);
    size_t scheme = starts_with_ci(rest, "https://") ? 8 : starts_with_ci(rest, "http://") ? 7 : 0;
    if (scheme == 0) {
      i = h + 4;
      continue;
    }
    size_t end = h + scheme;
    while (end < text.size() && !ends_url(static_cast<unsigned char>(text[end]))) ++end;
    std::string_view url = text.substr(h, end - h);
    while (url.size() > scheme &&
           std::string_view(".,;:!?)]}").find(url.back()) != std::string_view::npos) {
      url.remove_suffix(1);
    }
    if (url.size() > scheme) urls.insert(normalized(url));
    i = end;
  }
}

bool is_user_url(std::string_view url, const std::set<std::string>& urls) {
  return urls.count(normalized(url)) > 0;
}

}  // namespace mecha::tools
