// Issue 46, finding 3, through the binary: a model's answer holding terminal escapes (an OSC 52
// clipboard write, a hyperlink, a window title, a line erased and rewritten) was written raw
// when stdout was not a terminal: to a file, a pager, a CI log that a browser or a terminal
// shows later. Output for people is escaped wherever it goes (cli/printable.h); --json stays
// exact JSON.
#include <gtest/gtest.h>

#include <string>

#include "cli/testing/run_binary.h"
#include "server/testing/daemon_harness.h"

namespace mecha::cli {
namespace {

using testing::BinaryResult;
using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

const std::string kHostileAnswer =
    "done\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2K\rall tests pass\x1b]8;;https://evil.example\x1b\\"
    "details\x1b]8;;\x1b\\\x1b]0;pwned\x07\xc2\x9b"
    "31m\xe2\x80\xae"
    "evil";
const std::string kShown =
    "done^[]52;c;cm0gLXJmIH4K^G^[[2K^Mall tests pass^[]8;;https://evil.example^[\\details"
    "^[]8;;^[\\^[]0;pwned^G\\u{9b}31m\\u{202e}evil\n";

void write_cassette(const TempDir& dir) {
  dir.write("c.jsonl",
            server::testing::cassette_header() +
                server::testing::cassette_line(
                    Json::array({server::testing::text_block(kHostileAnswer)}), "end_turn", 10, 1));
}

bool has_control(const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\n' && u != '\t') || u == 0x7f) return true;
  }
  return s.find("\xc2\x9b") != std::string::npos;
}

TEST(TerminalEscapes, TheFinalAnswerPipedToAFileHoldsNoEscape) {
  TempDir dir;
  write_cassette(dir);
  BinaryResult r = run_mecha({"run", "--model", "cassette:c.jsonl", "run the tests"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kShown);
  EXPECT_FALSE(has_control(r.err)) << r.err;

  // The session, shown later, is escaped the same way.
  BinaryResult show = run_mecha({"sessions", "show", "last"}, dir.path());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_FALSE(has_control(show.out)) << show.out;
  EXPECT_NE(show.out.find(kShown), std::string::npos) << show.out;
}

TEST(TerminalEscapes, JsonOutputKeepsTheAnswerExact) {
  TempDir dir;
  write_cassette(dir);
  BinaryResult r =
      run_mecha({"run", "--json", "--model", "cassette:c.jsonl", "run the tests"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = json_lines(r.out);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().at("text"), kHostileAnswer);
  // JSON escapes the C0 controls; nothing raw reaches the stream but newlines between events.
  for (char c : r.out) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 || u == '\n') << int(u);
  }
}

}  // namespace
}  // namespace mecha::cli
