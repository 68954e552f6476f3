#include "guard/finder.h"

#include "guard/transfer_commands.h"
#include "guard/wrappers.h"

namespace mecha::guard {

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
  bool transfer = is_transfer_client(reader);
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
    for (TransferSend& send : transfer_sends(reader, script)) {
      if (problem) break;
      add_command(std::move(send.argv), send.via, ts_node_start_byte(node));
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

}  // namespace mecha::guard
