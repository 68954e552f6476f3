// Reading what a person types into `mecha chat`: on a terminal, with libedit (line editing,
// the Up arrow for history, Ctrl-C clears the line); otherwise plain lines, so a script can
// pipe into chat.
//
// History is kept in a file (the user's state dir, chat_history): loaded at start, saved
// after each line, at most kHistoryLines lines, mode 0600. A symlink there is refused, so a
// planted link cannot make chat write elsewhere.
//
// Not thread-safe: one thread reads.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace mecha::cli {

class LineEditor {
 public:
  static constexpr int kHistoryLines = 1000;

  // Reads from stdin, prompts on stderr. `history_file` empty: no history file.
  explicit LineEditor(std::filesystem::path history_file);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // What read() got.
  enum class Got { kLine, kInterrupted, kEnd };
  struct Read {
    Got got = Got::kEnd;
    std::string line;  // without its newline, when kLine
  };
  // One line after `prompt`. kInterrupted: Ctrl-C at the prompt (the line is dropped);
  // kEnd: Ctrl-D on an empty line, or the end of the input. With `remember`, a non-empty
  // line goes into the history.
  Read read(const std::string& prompt, bool remember);

  // A whole message: lines ending in a backslash continue on the next (prompt "… "), and
  // are joined with newlines, without their backslashes.
  Read read_message(const std::string& prompt);

  bool interactive() const { return editor_ != nullptr; }
  struct Editor;  // libedit's state (public for its C callbacks)
  // Any error saving the history, once (empty when none).
  std::string history_error() const { return history_error_; }

 private:
  void save_history();

  std::filesystem::path history_path_;
  std::unique_ptr<Editor> editor_;  // null when stdin is not a terminal
  std::string history_error_;
};

}  // namespace mecha::cli
