// Reading a program's options from its words, shared by the readers of what programs run by
// their options (option_commands.h, git.h): an option's value in any of its spellings, the
// rest of a word after a prefix, words joined back into one command line, and the refusal
// recorded in a LookThrough. Pure functions; reentrant.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "guard/wrappers.h"

namespace mecha::guard {

bool starts_with(const std::string& s, const char* p);

// `w` from byte `from` on (empty past its end), keeping its offset and flags.
ShellWord tail_of(const ShellWord& w, size_t from);

// ASCII lower case.
std::string lower(std::string s);

// The value of option `opt` at argv[i]: "--opt=V", "--opt V", "-oV" (short), "-o V".
// Advances i past a value in the next word. nullopt when argv[i] is not `opt`.
std::optional<ShellWord> value_of(const std::vector<ShellWord>& argv, size_t& i, const char* opt);

// The value of whichever of `opts` argv[i] is, as value_of.
std::optional<ShellWord> value_of_any(const std::vector<ShellWord>& argv, size_t& i,
                                      std::initializer_list<const char*> opts);

// argv[from, end) joined by spaces into one word, dynamic when any of them is.
ShellWord joined(const std::vector<ShellWord>& argv, size_t from, size_t end = SIZE_MAX);

// Records the refusal in `out` unless one is recorded already (the first reason stands).
void refuse(LookThrough& out, std::string rule, std::string reason);

}  // namespace mecha::guard
