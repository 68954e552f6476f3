#include "guard/command_finder.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "guard/finder.h"
#include "guard/fork_bombs.h"
#include "guard/wrappers.h"

namespace mecha::guard {
namespace {

// Builtins that set a variable named by one of their words. The guard does not follow two
// of the things they can do: set IFS (every unquoted expansion after it splits on characters
// chosen at run time), or make a name reference (`declare -n r=x`: `$r` is whatever x
// holds). What is wrong, or nullopt.
std::optional<std::string> binds_unfollowed(const std::vector<ShellWord>& argv) {
  const std::string& cmd = argv[0].text;
  static constexpr std::string_view kBinders[] = {"declare",   "typeset", "local",  "export",
                                                  "readonly",  "read",    "printf", "mapfile",
                                                  "readarray", "getopts"};
  if (std::find(std::begin(kBinders), std::end(kBinders), cmd) == std::end(kBinders))
    return std::nullopt;
  const bool declares = cmd == "declare" || cmd == "typeset" || cmd == "local";
  auto sets_ifs = [](std::string_view v) {
    return v == "IFS" || v.rfind("IFS=", 0) == 0 || v.rfind("IFS+=", 0) == 0 ||
           v.rfind("IFS[", 0) == 0;
  };
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view a = argv[i].text;
    if (declares && a.size() > 1 && a[0] == '-' && a.find('n') != std::string_view::npos)
      return fmt::format("`{} {}` makes a name that stands for another variable", cmd, a);
    if (cmd == "printf") {
      // printf's other words are its format and data; only -v names a variable.
      if (a == "-v" && i + 1 < argv.size())
        a = argv[++i].text;
      else if (a.rfind("-v", 0) == 0)
        a.remove_prefix(2);
      else
        continue;
    }
    if (sets_ifs(a))
      return fmt::format("`{}` sets IFS, which splits words in a way chosen at run time", cmd);
  }
  return std::nullopt;
}

}  // namespace

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
  } else if (is(node, "declaration_command")) {
    // `declare -n r=x` (typeset, local): `$r` then stands for whatever x holds, a link the
    // guard does not follow. Its assignments are walked below like any other.
    const std::string_view keyword =
        ts_node_child_count(node) > 0 ? node_text(ts_node_child(node, 0)) : "";
    for (uint32_t i = 0; i < ts_node_named_child_count(node); ++i) {
      TSNode c = ts_node_named_child(node, i);
      const std::string_view w = node_text(c);
      if (keyword != "export" && keyword != "readonly" && is(c, "word") && w.size() > 1 &&
          w[0] == '-' && w.find('n') != std::string_view::npos) {
        fail("not-understood",
             fmt::format("`{} {}` at {} makes a name that stands for another variable", keyword, w,
                         where(ts_node_start_byte(node))));
        return;
      }
    }
  } else if (is(node, "while_statement") && endless_background_loop(node, text_)) {
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
  std::vector<ShellWord> env;   // NAME=VALUE before the name
  std::vector<TSNode> feeding;  // <(...) arguments
  uint32_t n = ts_node_child_count(node);
  for (uint32_t i = 0; i < n; ++i) {
    const char* field = ts_node_field_name_for_child(node, i);
    TSNode c = ts_node_child(node, i);
    if (argv.empty() && is(c, "variable_assignment")) {
      TSNode name = ts_node_child_by_field_name(c, "name", 4);
      TSNode value = ts_node_child_by_field_name(c, "value", 5);
      if (ts_node_is_null(name)) continue;
      ShellWord w = ts_node_is_null(value) ? literal_word("", ts_node_start_byte(c)) : cook(value);
      w.text = std::string(node_text(name)) + "=" + w.text;
      env.push_back(std::move(w));
      continue;
    }
    if (field == nullptr) continue;
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
  if (!argv.empty()) add_command(std::move(argv), "", ts_node_start_byte(node), std::move(env));
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

void Finder::add_command(std::vector<ShellWord> argv, std::string via, uint32_t offset,
                         std::vector<ShellWord> env) {
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
    if (auto why = binds_unfollowed(p.argv)) {
      fail("not-understood", fmt::format("{} at {}", *why, where(name.offset)));
      return;
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
    c.env = env;
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

void Finder::visit_function(TSNode node) {
  if (std::optional<std::string> fname = self_multiplying_function(node, text_))
    fail("fork-bomb", fmt::format("the function `{}` at {} starts copies of itself without end",
                                  *fname, where(ts_node_start_byte(node))));
}

std::variant<Script, Problem> find_commands(std::string_view line, const FinderLimits& limits) {
  // The walk depends on nothing but the line and the limits.
  struct Last {
    std::string line;
    FinderLimits limits;
    std::variant<Script, Problem> found;
  };
  thread_local std::optional<Last> last;
  if (last && last->line == line && last->limits == limits) return last->found;
  Script script;
  Finder finder(limits, script);
  finder.run(line, 0, "");
  std::variant<Script, Problem> found;
  if (finder.problem) {
    found = *finder.problem;
  } else {
    found = std::move(script);
  }
  last = Last{std::string(line), limits, found};
  return found;
}

}  // namespace mecha::guard
