#include "providers/redact.h"

#include <cctype>

namespace mecha::providers {
namespace {

constexpr std::string_view kRedacted = "[redacted]";

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

bool starts_with_ci(std::string_view s, size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != prefix[i]) return false;
  }
  return true;
}

// Replaces the token that follows each `prefix` (case-insensitive, lower-case given), after
// the characters in `gap`.
std::string redact_after(std::string_view text, std::string_view prefix, std::string_view gap) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (starts_with_ci(text, i, prefix)) {
      size_t j = i + prefix.size();
      while (j < text.size() && gap.find(text[j]) != std::string_view::npos) ++j;
      size_t k = j;
      while (k < text.size() && is_token_char(text[k])) ++k;
      if (k > j) {
        out.append(text.substr(i, j - i));
        out.append(kRedacted);
        i = k;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

// Replaces words that look like API keys: "sk-" followed by at least 16 token characters.
std::string redact_key_shapes(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool word_start = i == 0 || !is_token_char(text[i - 1]);
    if (word_start && text.substr(i, 3) == "sk-") {
      size_t k = i + 3;
      while (k < text.size() && is_token_char(text[k])) ++k;
      if (k - i - 3 >= 16) {
        out.append(kRedacted);
        i = k;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace

std::string redact_secrets(std::string_view text, std::string_view secret) {
  std::string out;
  if (secret.empty()) {
    out.assign(text);
  } else {
    size_t i = 0;
    while (i < text.size()) {
      size_t at = text.find(secret, i);
      if (at == std::string_view::npos) {
        out.append(text.substr(i));
        break;
      }
      out.append(text.substr(i, at - i));
      out.append(kRedacted);
      i = at + secret.size();
    }
  }
  out = redact_after(out, "bearer", " \t");
  out = redact_after(out, "x-api-key", " \t:\"'=");
  return redact_key_shapes(out);
}

}  // namespace mecha::providers
