#include "agent/bash_rule_match.h"

#include <algorithm>
#include <map>

#include "guard/operand_specs.h"

namespace mecha::agent {
namespace {

struct Word {
  std::string text;
  bool unknown = false;  // known only at run time (or a glob the shell may expand)
  bool splits = false;
};

// Long and short spellings that are one option, by command: folded to the short letter.
const std::map<std::string, std::map<std::string, char>>& option_synonyms() {
  static const auto* table = new std::map<std::string, std::map<std::string, char>>{
      {"rm", {{"recursive", 'r'}, {"R", 'r'}, {"force", 'f'}}},
      {"cp", {{"recursive", 'r'}, {"R", 'r'}, {"force", 'f'}}},
      {"mv", {{"force", 'f'}}},
      {"chmod", {{"recursive", 'R'}}},
      {"chown", {{"recursive", 'R'}}},
      {"chgrp", {{"recursive", 'R'}}},
      {"git", {{"force", 'f'}}},
  };
  return *table;
}

struct ValueOptions {
  std::string short_letters;
  std::vector<std::string> long_names;
};

// Options that take a value in the next word, so that value is not read as an operand.
ValueOptions value_options(const std::string& name) {
  if (name == "git") return {"CcmF", {"git-dir", "work-tree", "namespace", "message", "file"}};
  const auto& specs = guard::operand_specs();
  auto it = specs.find(name);
  if (it == specs.end()) return {};
  return {it->second.value_short, it->second.value_long};
}

std::string basename_of(std::string_view word) {
  size_t slash = word.rfind('/');
  return std::string(slash == std::string_view::npos ? word : word.substr(slash + 1));
}

void classify(const std::vector<Word>& words, CommandShape* s) {
  if (words.empty()) return;
  s->name = basename_of(words[0].text);
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) s->spelled += '\0';
    s->spelled += words[i].text;
  }
  const auto synonyms_it = option_synonyms().find(s->name);
  const std::map<std::string, char> none;
  const auto& synonyms = synonyms_it == option_synonyms().end() ? none : synonyms_it->second;
  const ValueOptions values = value_options(s->name);
  auto fold_short = [&](char c) {
    auto it = synonyms.find(std::string(1, c));
    s->short_options.insert(it == synonyms.end() ? c : it->second);
  };
  bool options_done = false;
  for (size_t i = 1; i < words.size(); ++i) {
    const Word& w = words[i];
    if (w.splits) {
      s->splits = true;
      continue;
    }
    if (w.unknown) {
      // A word known only when it runs: an operand, or options if it may start with '-'.
      if (!options_done && (w.text.empty() || w.text[0] == '-' || w.text[0] == guard::kUnknown ||
                            w.text[0] == '*' || w.text[0] == '?' || w.text[0] == '[')) {
        s->options_unknown = true;
      }
      s->operands.push_back(std::string(1, guard::kUnknown) + w.text);
      ++s->unknown_operands;
      continue;
    }
    const std::string& t = w.text;
    if (options_done || t.size() < 2 || t[0] != '-') {
      s->operands.push_back(t);
      continue;
    }
    if (t == "--") {
      options_done = true;
      continue;
    }
    if (t[1] == '-') {
      std::string name = t.substr(2);
      size_t eq = name.find('=');
      std::string bare = name.substr(0, eq);
      if (auto it = synonyms.find(bare); it != synonyms.end() && eq == std::string::npos) {
        s->short_options.insert(it->second);  // one option, spelled long
        continue;
      }
      s->long_options.insert(bare);
      if (eq != std::string::npos) {
        s->long_options.insert(name);
      } else if (std::find(values.long_names.begin(), values.long_names.end(), bare) !=
                     values.long_names.end() &&
                 i + 1 < words.size()) {
        ++i;  // its value
      }
      continue;
    }
    for (size_t k = 1; k < t.size(); ++k) {
      fold_short(t[k]);
      if (values.short_letters.find(t[k]) != std::string::npos) {
        if (k + 1 == t.size() && i + 1 < words.size()) ++i;  // the value is the next word
        break;                                               // the rest is its value
      }
    }
  }
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Iterative, with one backtrack point: linear in practice, never recursive.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == config::kRuleWildcard) {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t] && text[t] != guard::kUnknown) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == config::kRuleWildcard) ++p;
  return p == pattern.size();
}

CommandShape shape_of(const guard::Command& command) {
  std::vector<Word> words;
  words.reserve(command.argv.size());
  for (const auto& w : command.argv) {
    Word word{w.text, w.dynamic || w.glob, w.splits || w.ifs};
    for (char& c : word.text) {
      if (c == guard::kHome) c = '~';
    }
    words.push_back(std::move(word));
  }
  CommandShape s;
  classify(words, &s);
  s.name = command.name;
  return s;
}

BashPattern::BashPattern(const config::PermissionRule& rule)
    : any_further_words_(rule.any_further_words) {
  std::vector<Word> words;
  for (const auto& w : rule.words) words.push_back({w, false, false});
  CommandShape s;
  classify(words, &s);
  spelled_ = std::move(s.spelled);
  name_ = std::move(s.name);
  short_options_ = std::move(s.short_options);
  long_options_ = std::move(s.long_options);
  operands_ = std::move(s.operands);
}

bool BashPattern::allows(const CommandShape& command) const {
  const std::string_view text = command.spelled;
  if (!any_further_words_) return wildcard_match(spelled_, text);
  if (wildcard_match(spelled_, text)) return true;
  // "and any further words": the rule's words, a word break, then anything.
  std::string with_rest = spelled_;
  with_rest += '\0';
  with_rest += config::kRuleWildcard;
  return wildcard_match(with_rest, text);
}

bool BashPattern::catches(const CommandShape& command) const {
  if (!wildcard_match(name_, command.name)) return false;
  if (command.splits) return true;
  int unknown_left = command.unknown_operands;
  bool options_covered = command.options_unknown;
  for (char c : short_options_) {
    if (!command.short_options.count(c) && !options_covered) return false;
  }
  for (const auto& l : long_options_) {
    if (!command.long_options.count(l) && !options_covered) return false;
  }
  // The rule's other words in order among the command's, a run-time word standing for any.
  size_t j = 0;
  for (const auto& want : operands_) {
    bool found = false;
    while (j < command.operands.size()) {
      const std::string& have = command.operands[j++];
      if (wildcard_match(want, have)) {
        found = true;
        break;
      }
      if (!have.empty() && have[0] == guard::kUnknown) {
        if (unknown_left-- > 0) {
          found = true;
          break;
        }
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace mecha::agent
