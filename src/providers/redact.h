// Redaction of secrets from text that may reach a person: error messages quote what a
// server sent, and a server may echo the request's credentials back.
#pragma once

#include <string>
#include <string_view>

namespace mecha::providers {

// `text` with every occurrence of `secret` (when it is not empty), every `Bearer TOKEN`,
// every `x-api-key: VALUE` / `"x-api-key":"VALUE"` and every `sk-...` key-shaped word
// replaced by "[redacted]".
std::string redact_secrets(std::string_view text, std::string_view secret);

}  // namespace mecha::providers
