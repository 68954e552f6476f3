#include "guard/syntax_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

extern "C" const TSLanguage* tree_sitter_bash(void);

namespace mecha::guard {
namespace {

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

// One parser per thread: creating one per line would cost more than parsing a short line.
TSParser* thread_parser() {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser;
  if (!parser) {
    parser.reset(ts_parser_new());
    ts_parser_set_language(parser.get(), tree_sitter_bash());
  }
  return parser.get();
}

// The first ERROR or MISSING node in document order, found without recursion.
TSNode first_error(TSNode root) {
  std::vector<TSNode> stack{root};
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (ts_node_is_error(n) || ts_node_is_missing(n)) return n;
    if (!ts_node_has_error(n)) continue;
    for (uint32_t i = ts_node_child_count(n); i > 0; --i) stack.push_back(ts_node_child(n, i - 1));
  }
  return root;
}

}  // namespace

std::string position_of(std::string_view text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("line {}, column {}", line, col);
}

Result<SyntaxTree> parse_shell(std::string_view text) {
  if (text.size() > kMaxInputBytes) {
    return Status::error(fmt::format(
        "the command is {} bytes, over the guard's limit of {} bytes; write long content "
        "with the Write tool instead",
        text.size(), kMaxInputBytes));
  }
  TSParser* parser = thread_parser();
  ts_parser_reset(parser);
  // The parser calls back about every hundred operations: counting the calls bounds its work
  // deterministically (a clock would make the verdict depend on the machine's load).
  struct Budget {
    size_t calls = 0;
  } budget;
  TSParseOptions options{};
  options.payload = &budget;
  options.progress_callback = [](TSParseState* state) {
    return ++static_cast<Budget*>(state->payload)->calls > kMaxParseSteps;
  };
  // The parser reads a final newline that the line does not have: without one it reaches the
  // end of the input inside the last command and recovers from an error that is none. That
  // recovery was a fifth of the guard's time on one-line commands (NL2Bash's 12,607 lines:
  // 0.55 s of CPU without the newline, 0.45 s with it). The newline ends that command as it
  // would in a script; after a backslash it would join the lines instead, so none is added.
  const bool add_newline = !text.empty() && text.back() != '\n' && text.back() != '\\';
  struct Source {
    std::string_view text;
    bool newline;
  } source{text, add_newline};
  TSInput input{};
  input.payload = &source;
  input.encoding = TSInputEncodingUTF8;
  input.read = [](void* payload, uint32_t byte, TSPoint, uint32_t* read) -> const char* {
    const Source* s = static_cast<Source*>(payload);
    std::string_view t = s->text;
    if (byte >= t.size()) {
      *read = byte == t.size() && s->newline ? 1 : 0;
      return *read == 1 ? "\n" : "";
    }
    *read = static_cast<uint32_t>(t.size() - byte);
    return t.data() + byte;
  };
  TSTree* raw = ts_parser_parse_with_options(parser, nullptr, input, options);
  if (raw == nullptr) {
    return Status::error(
        fmt::format("the command is too complex for the guard to parse (over {} parser steps); "
                    "split it into smaller commands",
                    kMaxParseSteps));
  }
  SyntaxTree tree(add_newline ? std::string(text) + '\n' : std::string(text), raw);
  TSNode root = tree.root();
  if (ts_node_has_error(root)) {
    TSNode bad = first_error(root);
    // Quoted from the line as given: the newline the parser was given is not the model's.
    const size_t from = std::min<size_t>(ts_node_start_byte(bad), text.size());
    const size_t to = std::min<size_t>(ts_node_end_byte(bad), text.size());
    std::string_view near = text.substr(from, std::min<size_t>(to - from, 20));
    return Status::error(fmt::format("shell syntax not understood at {}{}",
                                     position_of(text, ts_node_start_byte(bad)),
                                     near.empty() ? "" : fmt::format(" (near `{}`)", near)));
  }
  return tree;
}

}  // namespace mecha::guard
