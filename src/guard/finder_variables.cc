#include "guard/finder.h"

#include "guard/wrappers.h"

namespace mecha::guard {

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
  TSNode command = ts_node_is_null(parent) || !is(parent, "command")
                       ? TSNode{}
                       : ts_node_child_by_field_name(parent, "name", 4);
  if (var == "IFS") {
    // `IFS= read -r line` splits only what read reads. Anywhere else IFS splits the
    // expansions after it. Blanks only (`IFS=$'\n'`, or none) split bash's words at fewer
    // places than the guard's, so each word bash runs is one the guard saw whole or in
    // pieces; other characters would split them where the guard does not.
    const std::string_view reader = ts_node_is_null(command) ? "" : node_text(command);
    const ShellWord v = ts_node_is_null(value) ? literal_word("") : cook(value);
    const bool blanks = !v.dynamic && v.text.find_first_not_of(" \t\n") == std::string::npos;
    if (reader != "read" && reader != "mapfile" && reader != "readarray" && !blanks) {
      fail("not-understood", fmt::format("`IFS=` at {} splits words in a way chosen at run time",
                                         where(ts_node_start_byte(node))));
      return;
    }
  }
  if (!ts_node_is_null(command)) return;
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
  if (name == "IFS") {
    fail("not-understood", fmt::format("`for IFS` at {} splits words in a way chosen at run time",
                                       where(ts_node_start_byte(node))));
    return true;
  }
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

}  // namespace mecha::guard
