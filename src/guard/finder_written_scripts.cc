#include "guard/finder.h"

#include "guard/operands.h"
#include "guard/printed_text.h"
#include "guard/wrappers.h"

namespace mecha::guard {

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

}  // namespace mecha::guard
