#include "guard/fork_bombs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace mecha::guard {
namespace {

// The first node of `type` in `line`, handed with the line's text to `check`.
template <typename Check>
void with_first(const std::string& line, const char* type, Check check) {
  auto tree = parse_shell(line);
  ASSERT_TRUE(tree.ok()) << line << ": " << tree.message();
  std::vector<TSNode> stack{tree->root()};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (std::strcmp(ts_node_type(n), type) == 0) {
      check(n, std::string_view(line));
      return;
    }
    for (uint32_t i = ts_node_named_child_count(n); i > 0; --i)
      stack.push_back(ts_node_named_child(n, i - 1));
  }
  ADD_FAILURE() << "no " << type << " in " << line;
}

std::optional<std::string> multiplying(const std::string& line) {
  std::optional<std::string> out;
  with_first(line, "function_definition",
             [&](TSNode n, std::string_view text) { out = self_multiplying_function(n, text); });
  return out;
}

bool endless(const std::string& line) {
  bool out = false;
  with_first(line, "while_statement",
             [&](TSNode n, std::string_view text) { out = endless_background_loop(n, text); });
  return out;
}

TEST(ForkBombs, AFunctionCallingItselfInAPipeOrInTheBackground) {
  EXPECT_EQ(multiplying(":(){ :|:& };:"), std::optional<std::string>(":"));
  EXPECT_EQ(multiplying("bomb(){ bomb|bomb& }; bomb"), std::optional<std::string>("bomb"));
  EXPECT_EQ(multiplying("f() { g; f & }"), std::optional<std::string>("f"));
  // Recursion through && or ||, and a pipe that does not call the function, multiply nothing.
  EXPECT_EQ(multiplying("countdown(){ [ \"$1\" -gt 0 ] && countdown $(($1-1)); }"), std::nullopt);
  EXPECT_EQ(multiplying("f() { g | h; }"), std::nullopt);
  EXPECT_EQ(multiplying("f() { f >&2; }"), std::nullopt);
}

TEST(ForkBombs, AnEndlessLoopStartingBackgroundJobs) {
  EXPECT_TRUE(endless("while true; do bash & done"));
  EXPECT_TRUE(endless("while :; do sleep 1 & done"));
  EXPECT_TRUE(endless("while [ 1 ]; do x & done"));
  EXPECT_FALSE(endless("while true; do make && break; done"));
  EXPECT_FALSE(endless("while true; do x >&2; done"));
  EXPECT_FALSE(endless("while read l; do x & done"));  // ends with its input
}

}  // namespace
}  // namespace mecha::guard
