// The slash commands of `mecha chat`: what a line starting with '/' asks for.
#pragma once

#include <string>
#include <string_view>

namespace mecha::cli {

struct ChatCommand {
  enum Kind { kHelp, kSessions, kResume, kCost, kModel, kClear, kCompact, kQuit, kUnknown };
  Kind kind = kUnknown;
  std::string arg;  // /resume ID, /model NAME, /compact INSTRUCTIONS; the word for kUnknown
};

// REQUIRES: `line` starts with '/'. "/resume" alone means "/resume last".
ChatCommand parse_chat_command(std::string_view line);

// The lines /help prints, one per command.
std::string chat_help();

}  // namespace mecha::cli
