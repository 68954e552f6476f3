// ShellWord: one word of a command as far as it is known before the command runs.
//
// Quotes are removed and escapes decoded (`\rm`, `"rm"`, `r''m` and `$'\x72m'` are all
// "rm"). A part known only when the line runs (an expansion, a substitution) is kept as the
// byte kUnknown, so a word's static prefix is everything before the first kUnknown. A
// leading unquoted `~` or `$HOME` is kept as kHome, for path resolution to replace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tree_sitter/api.h>

namespace mecha::guard {

inline constexpr char kUnknown = '\x01';
inline constexpr char kHome = '\x02';

struct ShellWord {
  std::string text;
  bool dynamic = false;  // some part is known only at run time
  bool splits = false;   // an unquoted expansion: may become several words, or none
  bool ifs = false;      // expands $IFS unquoted: a word split chosen by the writer
  bool glob = false;     // an unquoted *, ? or [ that the shell may expand
  uint32_t offset = 0;   // byte of the line where the word starts

  std::string_view static_prefix() const {
    return std::string_view(text).substr(0, text.find(kUnknown));
  }
  // For messages: the text with unknown parts shown as "…" and kHome as "~".
  std::string shown() const;
  bool operator==(const ShellWord&) const = default;
};

// A word known entirely in advance (for argv built from wrappers and tests).
ShellWord literal_word(std::string text, uint32_t offset = 0);
// A word nothing is known about (xargs's appended arguments, `{}` of find -exec).
ShellWord unknown_word(uint32_t offset = 0);

// Values of variables assigned earlier in the line: nullopt for one whose value is not known
// (assigned twice, read, or from a substitution). A variable not listed is unknown too.
using Variables = std::map<std::string, std::optional<ShellWord>, std::less<>>;

// The word a node of the tree stands for. `source` is the text the tree was parsed from;
// `$NAME` and `${NAME}` take their value from `variables` when it is known there.
ShellWord cook_word(TSNode node, std::string_view source, const Variables* variables = nullptr);

// Brace expansion of a static word: "a{b,c}d" -> "abd", "acd". At most `limit` results;
// words without a brace list come back alone.
std::vector<std::string> expand_braces(const std::string& text, size_t limit = 64);

}  // namespace mecha::guard
