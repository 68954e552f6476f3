// The URLs a person wrote in a prompt. A fetch of one of them carries nothing the model
// chose, so it is not a send (DESIGN.md, security model 2); any other URL may carry data
// out in its path, query or even its host name.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace mecha::tools {

// Adds every http:// or https:// URL in `text` to `urls`, as written, less trailing
// punctuation that ends a sentence or closes a bracket or quote (`.`, `,`, `;`, `:`, `!`,
// `?`, `)`, `]`, `}`, `>`, quotes) and a fragment (`#...`, which never leaves the machine).
void add_user_urls(std::string_view text, std::set<std::string>& urls);

// Whether `url` is one of `urls`, compared exactly but for the case of the scheme and host
// and its fragment: a changed path, query, port or user part is another URL.
bool is_user_url(std::string_view url, const std::set<std::string>& urls);

}  // namespace mecha::tools
