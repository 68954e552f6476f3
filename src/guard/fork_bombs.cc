#include "guard/fork_bombs.h"

#include <cstring>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {
namespace {

std::string_view node_text(TSNode n, std::string_view text) {
  return text.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

}  // namespace

// `while true; do cmd & done`: a loop whose condition is always true and whose body puts a
// job in the background multiplies processes like a fork bomb.
bool endless_background_loop(TSNode node, std::string_view text) {
  TSNode cond = ts_node_child_by_field_name(node, "condition", 9);
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  if (ts_node_is_null(cond) || ts_node_is_null(body)) return false;
  std::string c(node_text(cond, text));
  std::erase_if(c, [](char ch) { return ch == ';' || ch == ' ' || ch == '\t' || ch == '\n'; });
  if (c != "true" && c != ":" && c != "[1]" && c != "((1))") return false;
  std::string ops(node_text(body, text));
  for (const char* pair : {"&&", ">&", "&>", "<&"})
    for (size_t at; (at = ops.find(pair)) != std::string::npos;) ops.replace(at, 2, "  ");
  return ops.find('&') != std::string::npos;
}

std::optional<std::string> self_multiplying_function(TSNode node, std::string_view text) {
  TSNode name = ts_node_child_by_field_name(node, "name", 4);
  TSNode body = ts_node_child_by_field_name(node, "body", 4);
  if (ts_node_is_null(name) || ts_node_is_null(body)) return std::nullopt;
  std::string fname = cook_word(name, text).text;
  std::string_view btext = node_text(body, text);
  // Only a pipe or a background job multiplies: `&&`, `||` and `>&` do not.
  std::string ops(btext);
  for (const char* pair : {"||", "&&", ">&", "&>", "<&"})
    for (size_t at; (at = ops.find(pair)) != std::string::npos;) ops.replace(at, 2, "  ");
  if (ops.find_first_of("|&") == std::string::npos) return std::nullopt;
  // A function that calls itself in a pipeline or in the background multiplies processes.
  std::vector<TSNode> stack{body};
  size_t seen = 0;
  while (!stack.empty() && ++seen < 10000) {
    TSNode n = stack.back();
    stack.pop_back();
    if (std::strcmp(ts_node_type(n), "command") == 0) {
      TSNode cn = ts_node_child_by_field_name(n, "name", 4);
      if (!ts_node_is_null(cn) && cook_word(cn, text).text == fname) return fname;
    }
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i)
      stack.push_back(ts_node_named_child(n, i));
  }
  return std::nullopt;
}

}  // namespace mecha::guard
