// The walk behind find_commands (command_finder.h), shared by the files that implement its
// parts; nothing outside them includes it. A Finder walks one line and every script nested
// in it, appending to one Script; the parts are member functions, each file holding one:
//
//   command_finder.cc          the iterative walk, commands, wrappers, nested scripts
//   finder_heredocs.cc         heredocs and here-strings, and who reads them
//   finder_variables.cc        variables assigned in the line, loops over literal lists
//   finder_written_scripts.cc  files the line writes with known content, and runs later
//   finder_pipes.cc            who feeds whom, resolved once a parse is walked
//
// Every part records the first refusal in `problem` (fail) and the walk stops there. No
// part walks the syntax tree by recursion: it pushes frames for the walk, which bounds
// nodes, depth and commands (FinderLimits).
// Thread-safety: a Finder is used by one thread; find_commands makes one per call.
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "guard/command_finder.h"
#include "guard/inline_code.h"
#include "guard/syntax_tree.h"

namespace mecha::guard {

inline bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

// A tag marks commands found inside a pipeline stage or a <(...) argument, so that the
// commands they feed can be told who feeds them.
struct Tag {
  uint32_t group;
  uint32_t stage;
};

class Finder {
 public:
  Finder(const FinderLimits& limits, Script& script) : limits_(limits), script_(script) {}

  // Finds the commands of `text` (parsed afresh) and appends them to the script.
  void run(std::string_view text, int shell_depth, const std::string& via);

  std::optional<Problem> problem;

 private:
  enum class FrameKind { kVisit, kPushTag, kPopTag, kCloseScope, kBind, kAfterRedirected };
  struct Frame {
    FrameKind kind;
    TSNode node{};
    size_t depth = 0;
    Tag tag{};
    size_t binding = 0;  // kBind: index into bindings_
  };
  // What a file written earlier in the line holds: nullopt when not known in advance.
  using Content = std::optional<std::string>;
  struct Group {
    bool is_pipeline = true;
    size_t target = 0;         // for a <(...) group: the step index of the command it feeds
    std::string first_fed_by;  // a pipeline inside a heredoc: the command whose output starts it
  };

  void fail(std::string rule, std::string reason) {
    if (!problem) problem = Problem{std::move(rule), std::move(reason)};
  }
  std::string where(uint32_t byte) const {
    std::string at = position_of(text_, byte);
    return via_.empty() ? at : fmt::format("{} (in the script given to {})", at, via_);
  }
  ShellWord cook(TSNode n) { return cook_word(n, text_, &vars_); }
  std::string_view node_text(TSNode n) const {
    return std::string_view(text_).substr(ts_node_start_byte(n),
                                          ts_node_end_byte(n) - ts_node_start_byte(n));
  }

  // command_finder.cc: the walk, commands and the wrappers they are looked through, nested
  // scripts, code for an interpreter, and fork bombs (fork_bombs.h).
  void walk(const SyntaxTree& tree);
  void visit(TSNode node, size_t depth, std::vector<Frame>& stack);
  void visit_command(TSNode node, size_t depth, std::vector<Frame>& stack);
  void add_command(std::vector<ShellWord> argv, std::string via, uint32_t offset,
                   std::vector<ShellWord> env = {});
  void add_script(const ShellWord& text, const std::string& via, uint32_t offset);
  void screen_code(Language language, const std::string& code, const std::string& via,
                   uint32_t offset);
  void visit_function(TSNode node);

  // finder_heredocs.cc: heredocs and here-strings fed to a shell, an interpreter or a
  // file-transfer client (transfer_commands.h).
  void visit_heredoc(TSNode node, bool here_string);
  std::string heredoc_owner(TSNode heredoc);

  // finder_variables.cc: variables assigned in the line, and loops over literal lists.
  void visit_assignment(TSNode node);
  void assign(const std::string& name, std::optional<ShellWord> value);
  bool visit_for(TSNode node, size_t depth, std::vector<Frame>& stack);

  // finder_written_scripts.cc: what files the line writes will hold, what feeds a command's
  // standard input, and the scripts the line writes and then runs.
  void visit_redirected(TSNode node, bool after);
  void run_written_script(const Command& c, const ShellWord& file);

  // finder_pipes.cc: who feeds whom through pipes and <(...), once a parse is walked.
  void resolve_pipes(size_t first_step);
  void place_found_paths(Command& c, const std::vector<size_t>& previous);

  void open_scope() { script_.steps.push_back(Step{Step::Kind::kScopeOpen, {}, {}}); }
  void close_scope() { script_.steps.push_back(Step{Step::Kind::kScopeClose, {}, {}}); }

  const FinderLimits& limits_;
  Script& script_;
  std::string text_;
  std::string via_;
  int shell_depth_ = 0;
  size_t nodes_ = 0;
  size_t commands_ = 0;
  uint32_t next_group_ = 0;
  std::vector<Tag> tags_;                         // active while walking
  std::map<size_t, std::vector<Tag>> step_tags_;  // step index -> its tags
  std::map<uint32_t, Group> groups_;
  std::map<uint32_t, std::string> heredoc_pipelines_;  // start byte -> the command fed the heredoc
  static constexpr size_t kMaxLoopVisits = 64;
  size_t loop_visits_ = 0;  // loop bodies walked once per value, over the line
  Variables vars_;          // of this parse (a nested shell: its own)
  std::vector<std::pair<std::string, std::optional<ShellWord>>> bindings_;  // loop values
  std::map<std::string, Content> written_;         // basename -> content, files the line writes
  std::map<uint32_t, ShellWord> stdin_redirects_;  // command offset -> what `<` feeds it
  std::set<uint32_t> heredoc_fed_;                 // commands fed a heredoc or here-string
};

}  // namespace mecha::guard
