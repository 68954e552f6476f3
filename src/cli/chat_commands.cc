#include "cli/chat_commands.h"

namespace mecha::cli {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

ChatCommand parse_chat_command(std::string_view line) {
  line = trim(line);
  size_t space = line.find_first_of(" \t");
  std::string_view word = line.substr(0, space);
  std::string arg(space == std::string_view::npos ? "" : trim(line.substr(space)));
  ChatCommand c;
  c.arg = arg;
  if (word == "/help" || word == "/?") {
    c.kind = ChatCommand::kHelp;
  } else if (word == "/sessions") {
    c.kind = ChatCommand::kSessions;
  } else if (word == "/resume") {
    c.kind = ChatCommand::kResume;
    if (c.arg.empty()) c.arg = "last";
  } else if (word == "/cost") {
    c.kind = ChatCommand::kCost;
  } else if (word == "/model") {
    c.kind = ChatCommand::kModel;
  } else if (word == "/clear") {
    c.kind = ChatCommand::kClear;
  } else if (word == "/compact") {
    c.kind = ChatCommand::kCompact;
  } else if (word == "/quit" || word == "/exit") {
    c.kind = ChatCommand::kQuit;
  } else {
    c.kind = ChatCommand::kUnknown;
    c.arg = std::string(word);
  }
  return c;
}

std::string chat_help() {
  return "  /help               this list\n"
         "  /sessions           the sessions of this work tree\n"
         "  /resume [ID|last]   continue a session (default: the last one)\n"
         "  /cost               tokens and cost of this session\n"
         "  /model [NAME]       the model in use; with NAME, switch to it\n"
         "  /clear              start a new session\n"
         "  /compact [TEXT]     summarise the conversation so far (TEXT: what to keep)\n"
         "  /quit, /exit        leave (Ctrl-D too)\n"
         "  A line ending in \\ continues on the next. Ctrl-C cancels a running turn, or\n"
         "  clears the line at the prompt.\n";
}

}  // namespace mecha::cli
