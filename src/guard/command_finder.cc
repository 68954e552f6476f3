#include "guard/command_finder.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "guard/inline_code.h"
#include "guard/operands.h"
#include "guard/printed_text.h"
#include "guard/syntax_tree.h"
#include "guard/wrappers.h"

namespace mecha::guard {
namespace {

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

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
  void walk(const SyntaxTree& tree);
  void visit(TSNode node, size_t depth, std::vector<Frame>& stack);
  void visit_command(TSNode node, size_t depth, std::vector<Frame>& stack);
  void visit_heredoc(TSNode node, bool here_string);
  void visit_function(TSNode node);
  bool endless_background_loop(TSNode node);
  void visit_assignment(TSNode node);
  bool visit_for(TSNode node, size_t depth, std::vector<Frame>& stack);
  void visit_redirected(TSNode node, bool after);
  void run_written_script(const Command& c, const ShellWord& file);
  void screen_code(Language language, const std::string& code, const std::string& via,
                   uint32_t offset);
  ShellWord cook(TSNode n) { return cook_word(n, text_, &vars_); }
  std::string_view node_text(TSNode n) const {
    return std::string_view(text_).substr(ts_node_start_byte(n),
                                          ts_node_end_byte(n) - ts_node_start_byte(n));
  }
  void assign(const std::string& name, std::optional<ShellWord> value);
  std::string heredoc_owner(TSNode heredoc);
  void add_command(std::vector<ShellWord> argv, std::string via, uint32_t offset);
  void add_script(const ShellWord& text, const std::string& via, uint32_t offset);
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

void Finder::run(std::string_view text, int shell_depth, const std::string& via) {
  if (shell_depth > limits_.max_shell_depth) {
    fail("too-complex",
         fmt::format("shells inside shells nest deeper than {} levels", limits_.max_shell_depth));
    return;
  }
  auto tree = parse_shell(text);
  if (!tree) {
    // Over a size or work limit, or a syntax error: the limits' messages start "the command".
    bool limit = tree.message().rfind("the command", 0) == 0;
    std::string in = via.empty() ? "" : fmt::format(" (in the script given to {})", via);
    fail(limit ? "too-complex" : "parse-error", tree.message() + in);
    return;
  }
  // The fields of this object describe one parse; a nested run saves and restores them.
  std::string saved_text = std::move(text_), saved_via = std::move(via_);
  std::vector<Tag> saved_tags = std::move(tags_);
  Variables saved_vars = std::move(vars_);
  vars_.clear();
  int saved_depth = shell_depth_;
  text_ = std::string(text);
  via_ = via;
  tags_.clear();
  shell_depth_ = shell_depth;
  size_t first = script_.steps.size();
  walk(*tree);
  if (!problem) resolve_pipes(first);
  text_ = std::move(saved_text);
  via_ = std::move(saved_via);
  tags_ = std::move(saved_tags);
  vars_ = std::move(saved_vars);
  shell_depth_ = saved_depth;
}

void Finder::walk(const SyntaxTree& tree) {
  std::vector<Frame> stack;
  stack.push_back(Frame{FrameKind::kVisit, tree.root(), 0, {}});
  while (!stack.empty() && !problem) {
    Frame f = stack.back();
    stack.pop_back();
    switch (f.kind) {
      case FrameKind::kPushTag:
        tags_.push_back(f.tag);
        break;
      case FrameKind::kPopTag:
        tags_.pop_back();
        break;
      case FrameKind::kCloseScope:
        close_scope();
        break;
      case FrameKind::kBind:
        vars_[bindings_[f.binding].first] = bindings_[f.binding].second;
        break;
      case FrameKind::kAfterRedirected:
        visit_redirected(f.node, /*after=*/true);
        break;
      case FrameKind::kVisit:
        if (++nodes_ > limits_.max_nodes) {
          fail("too-complex",
               fmt::format("the line has more than {} syntax nodes", limits_.max_nodes));
        } else if (f.depth > limits_.max_depth) {
          fail("too-complex", fmt::format("the line nests deeper than {} levels at {}",
                                          limits_.max_depth, where(ts_node_start_byte(f.node))));
        } else {
          visit(f.node, f.depth, stack);
        }
        break;
    }
  }
}

void Finder::visit(TSNode node, size_t depth, std::vector<Frame>& stack) {
  if (is(node, "command")) {
    visit_command(node, depth, stack);
    return;
  }
  if (is(node, "file_redirect")) {
    // The operator is the first anonymous child after an optional descriptor.
    Redirect r;
    std::optional<TSNode> dest;
    uint32_t n = ts_node_child_count(node);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_child(node, i);
      const char* field = ts_node_field_name_for_child(node, i);
      if (!ts_node_is_named(c) && r.op.empty()) r.op = std::string(ts_node_type(c));
      if (field != nullptr && std::strcmp(field, "destination") == 0 && !dest) dest = c;
    }
    if (dest) {
      r.target = cook(*dest);
      if (r.target.ifs)
        fail("not-understood",
             fmt::format("`$IFS` splits a redirection target at {}", where(r.target.offset)));
      script_.steps.push_back(Step{Step::Kind::kRedirect, {}, std::move(r)});
    }
  } else if (is(node, "variable_assignment")) {
    visit_assignment(node);
  } else if (is(node, "while_statement") && endless_background_loop(node)) {
    fail("fork-bomb", fmt::format("the endless loop at {} starts background jobs without end",
                                  where(ts_node_start_byte(node))));
    return;
  } else if (is(node, "for_statement")) {
    if (visit_for(node, depth, stack)) return;
  } else if (is(node, "redirected_statement")) {
    // What feeds the command is known before it runs; what the file holds, after the body
    // (whose assignments may name the file) has been walked.
    visit_redirected(node, /*after=*/false);
    stack.push_back({FrameKind::kAfterRedirected, node, depth, {}});
  } else if (is(node, "heredoc_redirect")) {
    visit_heredoc(node, false);
    // `cat <<EOF | sh`: the grammar puts the rest of the pipeline inside the redirect.
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      TSNode c = ts_node_named_child(node, i);
      if (is(c, "pipeline")) heredoc_pipelines_[ts_node_start_byte(c)] = heredoc_owner(node);
    }
  } else if (is(node, "herestring_redirect")) {
    visit_heredoc(node, true);
  } else if (is(node, "function_definition")) {
    visit_function(node);
  } else if (is(node, "command_substitution")) {
    std::string_view t = std::string_view(text_).substr(
        ts_node_start_byte(node), ts_node_end_byte(node) - ts_node_start_byte(node));
    if (!t.empty() && t[0] == '`' && t.find("\\`") != std::string_view::npos) {
      fail("not-understood", fmt::format("backticks nested inside backticks at {}; use $(...)",
                                         where(ts_node_start_byte(node))));
      return;
    }
  } else if (is(node, "pipeline")) {
    uint32_t group = next_group_++;
    auto owner = heredoc_pipelines_.find(ts_node_start_byte(node));
    groups_[group] =
        Group{true, 0, owner == heredoc_pipelines_.end() ? std::string() : owner->second};
    uint32_t n = ts_node_named_child_count(node);
    for (uint32_t i = n; i > 0; --i) {
      stack.push_back({FrameKind::kCloseScope, {}, 0, {}});
      stack.push_back({FrameKind::kPopTag, {}, 0, {}});
      stack.push_back({FrameKind::kVisit, ts_node_named_child(node, i - 1), depth + 1, {}});
      stack.push_back({FrameKind::kPushTag, {}, 0, Tag{group, i - 1}});
    }
    // Every stage runs in a subshell of its own: a cd in one does not reach the next.
    for (uint32_t i = 0; i < n; ++i) open_scope();
    return;
  }
  bool scoped =
      is(node, "subshell") || is(node, "command_substitution") || is(node, "process_substitution");
  if (scoped) {
    open_scope();
    stack.push_back({FrameKind::kCloseScope, {}, 0, {}});
  }
  for (uint32_t i = ts_node_named_child_count(node); i > 0; --i)
    stack.push_back({FrameKind::kVisit, ts_node_named_child(node, i - 1), depth + 1, {}});
}

void Finder::visit_command(TSNode node, size_t depth, std::vector<Frame>& stack) {
  std::vector<ShellWord> argv;
  std::vector<TSNode> feeding;  // <(...) arguments
  uint32_t n = ts_node_child_count(node);
  for (uint32_t i = 0; i < n; ++i) {
    const char* field = ts_node_field_name_for_child(node, i);
    if (field == nullptr) continue;
    TSNode c = ts_node_child(node, i);
    if (std::strcmp(field, "name") == 0 || std::strcmp(field, "argument") == 0) {
      argv.push_back(cook(c));
      // <(...) feeds the command; >(...) is fed by it.
      if (is(c, "process_substitution") && ts_node_start_byte(c) < text_.size() &&
          text_[ts_node_start_byte(c)] == '<')
        feeding.push_back(c);
    }
  }
  // Children are visited after the command itself: the substitutions in its words.
  size_t self_step = script_.steps.size();
  if (!argv.empty()) add_command(std::move(argv), "", ts_node_start_byte(node));
  for (uint32_t i = ts_node_named_child_count(node); i > 0; --i) {
    TSNode c = ts_node_named_child(node, i - 1);
    bool feeds = false;
    for (TSNode f : feeding) feeds |= ts_node_eq(f, c);
    if (feeds) {
      uint32_t group = next_group_++;
      groups_[group] = Group{false, self_step, {}};
      stack.push_back({FrameKind::kPopTag, {}, 0, {}});
      stack.push_back({FrameKind::kVisit, c, depth + 1, {}});
      stack.push_back({FrameKind::kPushTag, {}, 0, Tag{group, 0}});
    } else {
      stack.push_back({FrameKind::kVisit, c, depth + 1, {}});
    }
  }
}

void Finder::add_command(std::vector<ShellWord> argv, std::string via, uint32_t offset) {
  // Wrappers are looked through iteratively: each inner command goes round again.
  struct Pending {
    std::vector<ShellWord> argv;
    std::string via;
  };
  std::vector<Pending> pending{{std::move(argv), std::move(via)}};
  while (!pending.empty() && !problem) {
    Pending p = std::move(pending.front());
    pending.erase(pending.begin());
    // `X='rm -rf ~'; $X`: an unquoted known value splits into words.
    std::vector<ShellWord> split;
    for (ShellWord& w : p.argv) {
      if (!w.splits || w.dynamic || w.text.find_first_of(" \t\n") == std::string::npos) {
        split.push_back(std::move(w));
        continue;
      }
      size_t at = 0;
      while (at < w.text.size()) {
        size_t start = w.text.find_first_not_of(" \t\n", at);
        if (start == std::string::npos) break;
        size_t end = w.text.find_first_of(" \t\n", start);
        ShellWord part = w;
        part.text =
            w.text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        part.splits = false;
        split.push_back(std::move(part));
        at = end == std::string::npos ? w.text.size() : end;
      }
    }
    p.argv = std::move(split);
    if (p.argv.empty()) continue;
    if (++commands_ > limits_.max_commands) {
      fail("too-complex", fmt::format("the line runs more than {} commands", limits_.max_commands));
      return;
    }
    const ShellWord& name = p.argv[0];
    if (name.dynamic || name.text.empty()) {
      fail("not-understood", fmt::format("the command name `{}` at {} is known only when it runs",
                                         name.shown(), where(name.offset)));
      return;
    }
    for (const ShellWord& w : p.argv) {
      if (w.ifs) {
        fail("not-understood",
             fmt::format("`$IFS` at {} splits words in a way chosen at run time", where(w.offset)));
        return;
      }
    }
    if (command_name(name).empty()) {
      fail("not-understood",
           fmt::format("`{}` at {} is not a command name", name.shown(), where(name.offset)));
      return;
    }
    LookThrough inner = look_through(p.argv);
    if (inner.not_understood) {
      fail(inner.rule, fmt::format("{} at {}", *inner.not_understood, where(name.offset)));
      return;
    }
    Command c;
    c.name = command_name(name);
    c.argv = std::move(p.argv);
    c.via = p.via;
    c.offset = offset;
    c.reads_script_from_stdin = inner.reads_script_from_stdin;
    c.script_operand_unknown = inner.script_file && inner.script_file->dynamic;
    // A shell reading commands from standard input where no pipe of the line feeds it: the
    // input of a coprocess, of a program that runs it (tar, find, perl), or a redirection.
    if (c.reads_script_from_stdin && tags_.empty()) {
      auto redirect = stdin_redirects_.find(offset);
      if (redirect != stdin_redirects_.end()) {
        if (redirect->second.dynamic)
          c.script_from_unknown_pipe = true;
        else
          run_written_script(c, redirect->second);
      } else if (!heredoc_fed_.count(offset) &&
                 (c.via.find("coproc") != std::string::npos || !via_.empty())) {
        c.script_from_unknown_pipe = true;
      }
    }
    step_tags_[script_.steps.size()] = tags_;
    if (inner.script_file) run_written_script(c, *inner.script_file);
    script_.steps.push_back(Step{Step::Kind::kCommand, std::move(c), {}});
    for (auto& ic : inner.commands) {
      std::string v = p.via.empty() ? ic.via : p.via + ", " + ic.via;
      pending.push_back({std::move(ic.argv), std::move(v)});
    }
    for (const auto& is : inner.scripts) add_script(is.text, is.via, offset);
    if (pending.size() > 64) {
      fail("too-complex", "wrappers nest too deeply");
      return;
    }
  }
}

void Finder::add_script(const ShellWord& text, const std::string& via, uint32_t offset) {
  if (text.dynamic) {
    fail("not-understood", fmt::format("the script given to {} at {} is known only when it runs",
                                       via, where(offset)));
    return;
  }
  open_scope();
  std::string inner_via = via_.empty() ? via : via_ + ", " + via;
  run(text.text, shell_depth_ + 1, inner_via);
  close_scope();
}

void Finder::visit_heredoc(TSNode node, bool here_string) {
  // Which command reads it: the body of the statement this redirect belongs to.
  TSNode parent = ts_node_parent(node);
  if (ts_node_is_null(parent)) return;
  TSNode body = is(parent, "command") ? parent : ts_node_child_by_field_name(parent, "body", 4);
  if (ts_node_is_null(body) || !is(body, "command")) return;
  TSNode name = ts_node_child_by_field_name(body, "name", 4);
  if (ts_node_is_null(name)) return;
  // Follow wrappers to the command that really reads standard input.
  std::vector<ShellWord> argv;
  uint32_t n = ts_node_child_count(body);
  for (uint32_t i = 0; i < n; ++i) {
    const char* field = ts_node_field_name_for_child(body, i);
    if (field && (std::strcmp(field, "name") == 0 || std::strcmp(field, "argument") == 0))
      argv.push_back(cook(ts_node_child(body, i)));
  }
  bool shell = false;
  Language language = Language::kNone;
  for (int hops = 0; hops < 16 && !argv.empty(); ++hops) {
    LookThrough lt = look_through(argv);
    if (lt.reads_script_from_stdin) {
      shell = true;
      language = language_of(command_name(argv[0]));
    }
    if (lt.commands.empty()) break;
    argv = std::move(lt.commands.front().argv);
  }  // Data for a program (a file's content, input to a filter) is not screened, except the
  // commands of a file-transfer client, whose `put` sends local files.
  std::string reader = argv.empty() ? std::string() : command_name(argv[0]);
  bool transfer = reader == "sftp" || reader == "ftp" || reader == "lftp" || reader == "tftp";
  if (!shell && !transfer) return;
  ShellWord script;
  if (here_string) {
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      script = cook(ts_node_named_child(node, i));
    }
  } else {
    std::string start;
    TSNode body_node{};
    bool has_body = false;
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      TSNode c = ts_node_named_child(node, i);
      if (is(c, "heredoc_start"))
        start = std::string(std::string_view(text_).substr(
            ts_node_start_byte(c), ts_node_end_byte(c) - ts_node_start_byte(c)));
      if (is(c, "heredoc_body")) {
        body_node = c;
        has_body = true;
      }
    }
    if (!has_body) return;
    bool quoted = start.find_first_of("'\"\\") != std::string::npos;
    script.offset = ts_node_start_byte(body_node);
    script.text = text_.substr(ts_node_start_byte(body_node),
                               ts_node_end_byte(body_node) - ts_node_start_byte(body_node));
    // Unquoted, its substitutions run first and their output becomes part of the script.
    if (!quoted) {
      for (uint32_t i = 0; i < ts_node_named_child_count(body_node); ++i)
        if (is(ts_node_named_child(body_node, i), "command_substitution")) script.dynamic = true;
    }
  }
  if (transfer) {
    if (script.dynamic) {
      fail("not-understood",
           fmt::format("the commands fed to {} at {} are known only when they run", reader,
                       where(ts_node_start_byte(node))));
      return;
    }
    // put LOCAL [REMOTE], mput LOCAL...: each local file is read.
    size_t from = 0;
    while (from < script.text.size() && !problem) {
      size_t end = script.text.find('\n', from);
      std::string line =
          script.text.substr(from, end == std::string::npos ? std::string::npos : end - from);
      from = end == std::string::npos ? script.text.size() : end + 1;
      std::vector<ShellWord> words;
      for (size_t at = 0; at < line.size();) {
        size_t s = line.find_first_not_of(" \t", at);
        if (s == std::string::npos) break;
        size_t e = line.find_first_of(" \t", s);
        words.push_back(literal_word(
            line.substr(s, e == std::string::npos ? std::string::npos : e - s), script.offset));
        at = e == std::string::npos ? line.size() : e;
      }
      if (words.size() < 2) continue;
      const std::string& verb = words[0].text;
      if (verb != "put" && verb != "mput" && verb != "reput" && verb != "send" && verb != "append")
        continue;
      std::vector<ShellWord> sent{literal_word(reader, script.offset)};
      for (size_t k = 1; k < words.size() && (verb == "mput" || k == 1); ++k)
        if (words[k].text[0] != '-') sent.push_back(words[k]);
      for (ShellWord& w : sent)
        if (!w.text.empty() && w.text[0] == '~') w.text[0] = kHome;
      add_command(std::move(sent), reader + " " + verb, ts_node_start_byte(node));
    }
    return;
  }
  if (language != Language::kNone) {
    if (script.dynamic) {
      fail("not-understood", fmt::format("the code fed to {} at {} is known only when it runs",
                                         command_name(argv[0]), where(ts_node_start_byte(node))));
      return;
    }
    screen_code(language, script.text, "code fed to " + command_name(argv[0]),
                ts_node_start_byte(node));
    return;
  }
  add_script(script, here_string ? "a here-string fed to a shell" : "a heredoc fed to a shell",
             ts_node_start_byte(node));
}

std::string Finder::heredoc_owner(TSNode heredoc) {
  TSNode parent = ts_node_parent(heredoc);
  if (ts_node_is_null(parent)) return "?";
  TSNode body = is(parent, "command") ? parent : ts_node_child_by_field_name(parent, "body", 4);
  if (ts_node_is_null(body) || !is(body, "command")) return "?";
  TSNode name = ts_node_child_by_field_name(body, "name", 4);
  return ts_node_is_null(name) ? "?" : command_name(cook_word(name, text_));
}

void Finder::visit_assignment(TSNode node) {
  TSNode name = ts_node_child_by_field_name(node, "name", 4);
  TSNode value = ts_node_child_by_field_name(node, "value", 5);
  if (ts_node_is_null(name)) return;
  std::string var(std::string_view(text_).substr(
      ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name)));
  SettingKind kind = variable_kind(var);
  if (kind == SettingKind::kLoads) {
    fail("not-understood",
         fmt::format("`{}=` at {} makes programs load code", var, where(ts_node_start_byte(node))));
  } else if (kind == SettingKind::kCommand) {
    ShellWord v = ts_node_is_null(value) ? literal_word("") : cook(value);
    add_script(v, var, ts_node_start_byte(node));
  }
  // `D=/srv cmd`: the value is for cmd's environment only, not for the words after it.
  TSNode parent = ts_node_parent(node);
  if (!ts_node_is_null(parent) && is(parent, "command") &&
      !ts_node_is_null(ts_node_child_by_field_name(parent, "name", 4)))
    return;
  std::optional<ShellWord> known;
  if (!ts_node_is_null(value)) {
    ShellWord v = cook(value);
    if (!v.dynamic) known = v;
  } else {
    known = literal_word("");
  }
  // `+=` and array assignments are not followed: the value becomes unknown.
  std::string_view whole = std::string_view(text_).substr(
      ts_node_start_byte(node), ts_node_end_byte(node) - ts_node_start_byte(node));
  if (whole.find("+=") == var.size() || whole.find("=(") == var.size()) known.reset();
  assign(var, std::move(known));
}

void Finder::assign(const std::string& name, std::optional<ShellWord> value) {
  auto it = vars_.find(name);
  // Assigned twice with different values: which one holds depends on the path taken.
  if (it != vars_.end() && (!it->second || !value || it->second->text != value->text)) {
    it->second.reset();
    return;
  }
  vars_[name] = std::move(value);
}

bool Finder::visit_for(TSNode node, size_t depth, std::vector<Frame>& stack) {
  TSNode var = ts_node_child_by_field_name(node, "variable", 8);
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  if (ts_node_is_null(var) || ts_node_is_null(body)) return false;
  std::string name(std::string_view(text_).substr(ts_node_start_byte(var),
                                                  ts_node_end_byte(var) - ts_node_start_byte(var)));
  std::vector<ShellWord> values;
  std::vector<TSNode> value_nodes;
  bool known = true;
  uint32_t n = ts_node_child_count(node);
  for (uint32_t i = 0; i < n; ++i) {
    const char* field = ts_node_field_name_for_child(node, i);
    if (field == nullptr || std::strcmp(field, "value") != 0) continue;
    TSNode c = ts_node_child(node, i);
    value_nodes.push_back(c);
    ShellWord w = cook(c);
    if (w.dynamic) known = false;
    for (std::string& alt : expand_braces(w.text, 32)) {
      ShellWord one = w;
      one.text = std::move(alt);
      values.push_back(std::move(one));
    }
  }  // Unrolling is bounded per line: nested loops multiply, so past the budget a loop is
  // walked once with its variable unknown.
  if (values.empty() || values.size() > 16 || loop_visits_ + values.size() > kMaxLoopVisits)
    known = false;
  if (known) loop_visits_ += values.size();
  // The loop is walked once per value, the variable bound to it; then it is unknown.
  bindings_.push_back({name, std::nullopt});
  stack.push_back({FrameKind::kBind, {}, 0, {}, bindings_.size() - 1});
  if (!known) {
    stack.push_back({FrameKind::kVisit, body, depth + 1, {}});
    bindings_.push_back({name, std::nullopt});
    stack.push_back({FrameKind::kBind, {}, 0, {}, bindings_.size() - 1});
  } else {
    for (size_t i = values.size(); i > 0; --i) {
      stack.push_back({FrameKind::kVisit, body, depth + 1, {}});
      bindings_.push_back({name, values[i - 1]});
      stack.push_back({FrameKind::kBind, {}, 0, {}, bindings_.size() - 1});
    }
  }
  for (size_t i = value_nodes.size(); i > 0; --i)
    stack.push_back({FrameKind::kVisit, value_nodes[i - 1], depth + 1, {}});
  return true;
}

void Finder::visit_redirected(TSNode node, bool after) {
  // `echo ... > f`, `printf ... > f`, `cat > f <<'EOF'`: what f will hold.
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  Content content;
  bool have_content = false;
  std::vector<std::pair<std::string, ShellWord>> targets;  // op, target
  if (!ts_node_is_null(body) && is(body, "command")) {
    std::vector<ShellWord> argv;
    uint32_t n = ts_node_child_count(body);
    for (uint32_t i = 0; i < n; ++i) {
      const char* field = ts_node_field_name_for_child(body, i);
      if (field && (std::strcmp(field, "name") == 0 || std::strcmp(field, "argument") == 0))
        argv.push_back(cook(ts_node_child(body, i)));
    }
    if (!argv.empty()) {
      std::string name = command_name(argv[0]);
      content = printed_text(name, argv);
      have_content = content.has_value();
      if (name == "tee")
        for (size_t i = 1; i < argv.size(); ++i)
          if (!argv[i].text.empty() && argv[i].text[0] != '-') targets.push_back({">", argv[i]});
      if (name == "cat" || name == "tee") have_content = true;
    }
  }
  uint32_t n = ts_node_named_child_count(node);
  bool heredoc = false;
  for (uint32_t i = 0; i < n; ++i) {
    TSNode c = ts_node_named_child(node, i);
    if (!after && (is(c, "heredoc_redirect") || is(c, "herestring_redirect")) &&
        !ts_node_is_null(body))
      heredoc_fed_.insert(ts_node_start_byte(body));
    if (is(c, "heredoc_redirect")) {
      heredoc = true;
      std::string start;
      for (uint32_t k = 0; k < ts_node_named_child_count(c); ++k) {
        TSNode h = ts_node_named_child(c, k);
        if (is(h, "heredoc_start")) start = std::string(node_text(h));
        if (is(h, "heredoc_body")) {
          bool quoted = start.find_first_of("'\"\\") != std::string::npos;
          bool expands = false;
          for (uint32_t m = 0; m < ts_node_named_child_count(h); ++m)
            expands |= !is(ts_node_named_child(h, m), "heredoc_content");
          if (have_content && (quoted || !expands))
            content = std::string(node_text(h));
          else
            content.reset();
        }
      }
    } else if (is(c, "file_redirect")) {
      std::string op;
      std::optional<TSNode> dest;
      for (uint32_t k = 0; k < ts_node_child_count(c); ++k) {
        TSNode d = ts_node_child(c, k);
        const char* field = ts_node_field_name_for_child(c, k);
        if (!ts_node_is_named(d) && op.empty()) op = ts_node_type(d);
        if (field != nullptr && std::strcmp(field, "destination") == 0 && !dest) dest = d;
      }
      if (dest && op.find('>') != std::string::npos && op != ">&")
        targets.push_back({op, cook(*dest)});
      if (!after && dest && op == "<" && !ts_node_is_null(body)) {
        ShellWord from = cook(*dest);
        if (is(*dest, "process_substitution")) from.dynamic = true;
        stdin_redirects_[ts_node_start_byte(body)] = from;
      }
    }
  }
  if (!after) return;
  for (const auto& [op, target] : targets) {
    if (target.dynamic) continue;
    std::string base = command_name(target);
    auto it = written_.find(base);
    if (op == ">>" && it != written_.end()) {
      if (it->second && content)
        *it->second += *content;
      else
        it->second.reset();
    } else if (it != written_.end()) {
      // Written twice: which content holds depends on the path taken.
      if (!(it->second && content && *it->second == *content)) it->second.reset();
    } else {
      written_[base] = have_content || heredoc ? content : Content();
    }
  }
}

void Finder::screen_code(Language language, const std::string& code, const std::string& via,
                         uint32_t offset) {
  // The code is screened as if given on the command line (`python3 -c CODE`): the commands
  // it runs, the paths it names, a fork loop, a socket joined to a shell.
  const char* flag = language == Language::kPython ? "-c"
                     : language == Language::kPhp  ? "-r"
                                                   : "-e";
  const char* name = language == Language::kPython ? "python3"
                     : language == Language::kPerl ? "perl"
                     : language == Language::kRuby ? "ruby"
                     : language == Language::kNode ? "node"
                     : language == Language::kPhp  ? "php"
                                                   : "lua";
  add_command({literal_word(name, offset), literal_word(flag, offset), literal_word(code, offset)},
              via, offset);
}

void Finder::run_written_script(const Command& c, const ShellWord& file) {
  if (file.dynamic) return;  // a <(...) or a variable: resolved with its feeders, or refused
  auto it = written_.find(command_name(file));
  if (it == written_.end()) {
    // Written by a program (cp, curl -o, tar x ...) earlier in the line: content unknown.
    // Looked for only here, when a script is run, to keep ordinary lines cheap.
    std::string base = command_name(file);
    for (const Step& s : script_.steps) {
      if (s.kind != Step::Kind::kCommand) continue;
      for (const ShellWord& w : operands_of(s.command).writes)
        if (!w.dynamic && command_name(w) == base) {
          written_[base].reset();
          it = written_.find(base);
        }
    }
    if (it == written_.end()) return;
  }
  std::string via = fmt::format("{} running {}, written earlier in the line", c.name, file.shown());
  if (!it->second) {
    fail("not-understood",
         fmt::format("`{}` at {} runs {}, which the line writes with content known only when it "
                     "runs",
                     c.name, where(c.offset), file.shown()));
    return;
  }
  Language language = language_of(c.name);
  if (language != Language::kNone) {
    screen_code(language, *it->second, via, c.offset);
  } else {
    add_script(literal_word(*it->second, c.offset), via, c.offset);
  }
}

// `while true; do cmd & done`: a loop whose condition is always true and whose body puts a
// job in the background multiplies processes like a fork bomb.
bool Finder::endless_background_loop(TSNode node) {
  TSNode cond = ts_node_child_by_field_name(node, "condition", 9);
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  if (ts_node_is_null(cond) || ts_node_is_null(body)) return false;
  std::string c(node_text(cond));
  std::erase_if(c, [](char ch) { return ch == ';' || ch == ' ' || ch == '\t' || ch == '\n'; });
  if (c != "true" && c != ":" && c != "[1]" && c != "((1))") return false;
  std::string ops(node_text(body));
  for (const char* pair : {"&&", ">&", "&>", "<&"})
    for (size_t at; (at = ops.find(pair)) != std::string::npos;) ops.replace(at, 2, "  ");
  return ops.find('&') != std::string::npos;
}

void Finder::visit_function(TSNode node) {
  TSNode name = ts_node_child_by_field_name(node, "name", 4);
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  if (ts_node_is_null(name) || ts_node_is_null(body)) return;
  std::string fname = cook_word(name, text_).text;
  std::string_view btext = std::string_view(text_).substr(
      ts_node_start_byte(body), ts_node_end_byte(body) - ts_node_start_byte(body));
  // Only a pipe or a background job multiplies: `&&`, `||` and `>&` do not.
  std::string ops(btext);
  for (const char* pair : {"||", "&&", ">&", "&>", "<&"})
    for (size_t at; (at = ops.find(pair)) != std::string::npos;) ops.replace(at, 2, "  ");
  if (ops.find_first_of("|&") == std::string::npos) return;
  // A function that calls itself in a pipeline or in the background multiplies processes.
  std::vector<TSNode> stack{body};
  size_t seen = 0;
  while (!stack.empty() && ++seen < 10000) {
    TSNode n = stack.back();
    stack.pop_back();
    if (is(n, "command")) {
      TSNode cn = ts_node_child_by_field_name(n, "name", 4);
      if (!ts_node_is_null(cn) && cook_word(cn, text_).text == fname) {
        fail("fork-bomb", fmt::format("the function `{}` at {} starts copies of itself without end",
                                      fname, where(ts_node_start_byte(node))));
        return;
      }
    }
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i)
      stack.push_back(ts_node_named_child(n, i));
  }
}

void Finder::place_found_paths(Command& c, const std::vector<size_t>& previous) {
  // `find ROOT ... | xargs rm`: the arguments xargs reads are paths under ROOT.
  if (previous.size() != 1) return;
  const Command& up = script_.steps[previous.front()].command;
  if (up.name != "find") return;
  std::optional<std::string> root;
  for (size_t i = 1; i < up.argv.size(); ++i) {
    const std::string& a = up.argv[i].text;
    if (a == "-H" || a == "-L" || a == "-P") continue;
    if (!a.empty() && (a[0] == '-' || a == "(" || a == "!")) break;
    if (root || up.argv[i].dynamic) return;  // several roots: left unknown
    root = a;
  }
  if (!root) root = ".";
  for (ShellWord& w : c.argv) {
    if (w.text != std::string(1, kUnknown)) continue;
    w.text = *root + "/*?";
    w.dynamic = false;
    w.splits = false;
    w.glob = true;
  }
}

void Finder::resolve_pipes(size_t first_step) {
  // Members of each group by stage, in this run's steps only.
  std::map<uint32_t, std::map<uint32_t, std::vector<size_t>>> members;
  for (auto it = step_tags_.lower_bound(first_step); it != step_tags_.end(); ++it)
    for (const Tag& t : it->second) members[t.group][t.stage].push_back(it->first);
  step_tags_.erase(step_tags_.lower_bound(first_step), step_tags_.end());
  for (const auto& [group, stages] : members) {
    const Group& g = groups_[group];
    if (!g.is_pipeline) {
      Command& target = script_.steps[g.target].command;
      const std::vector<size_t>& feeders = stages.begin()->second;
      for (size_t s : feeders) target.fed_by.push_back(script_.steps[s].command.name);
      // `source <(echo ...)`, `exec bash <(printf ...)`: the script is what they print.
      uint32_t offset = target.offset;
      for (size_t s = g.target; s < script_.steps.size(); ++s) {
        if (script_.steps[s].kind != Step::Kind::kCommand) continue;
        Command& c = script_.steps[s].command;
        if (c.offset != offset || !c.script_operand_unknown) continue;
        std::optional<std::string> text;
        if (feeders.size() == 1) {
          const Command& up = script_.steps[feeders.front()].command;
          text = printed_text(up.name, up.argv);
        }
        if (text) {
          c.script_operand_unknown = false;
          add_script(literal_word(*text, c.offset), "a shell reading printed text", c.offset);
        }
      }
      continue;
    }
    std::vector<std::string> upstream;
    if (!g.first_fed_by.empty()) upstream.push_back(g.first_fed_by);
    const std::vector<size_t>* previous = nullptr;
    for (const auto& [stage, steps] : stages) {
      for (size_t s : steps) {
        Command& c = script_.steps[s].command;
        c.fed_by.insert(c.fed_by.end(), upstream.begin(), upstream.end());
        if (previous != nullptr && c.via.find("xargs") != std::string::npos)
          place_found_paths(c, *previous);
        if (c.reads_script_from_stdin && previous != nullptr) {
          // `echo 'ls' | sh`: when the text is echoed literally, screen it as a script.
          std::optional<std::string> printed;
          if (previous->size() == 1) {
            const Command& up = script_.steps[previous->front()].command;
            printed = printed_text(up.name, up.argv);
          }
          if (printed) {
            Language language = language_of(c.name);
            if (language != Language::kNone)
              screen_code(language, *printed, c.name + " reading printed code", c.offset);
            else
              add_script(literal_word(*printed), "a shell reading printed text", c.offset);
          } else {
            script_.steps[s].command.script_from_unknown_pipe = true;
          }
        } else if (c.reads_script_from_stdin && !upstream.empty()) {
          c.script_from_unknown_pipe = true;
        }
      }
      for (size_t s : steps) upstream.push_back(script_.steps[s].command.name);
      previous = &steps;
    }
  }
}

}  // namespace

std::variant<Script, Problem> find_commands(std::string_view line, const FinderLimits& limits) {
  Script script;
  Finder finder(limits, script);
  finder.run(line, 0, "");
  if (finder.problem) return *finder.problem;
  return script;
}

}  // namespace mecha::guard
