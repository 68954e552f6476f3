// Printable: the one sanitiser of what mecha writes for people. Every piece of text mecha did
// not write itself (a model's answer, a tool's output, a file's name or content, a message
// held in the outbox, an MCP server's description, an error quoting any of those) goes
// through printable() before it is written for a person, whatever the output is: a
// terminal, or a file, a pager, a CI log shown in a browser, each of which a terminal may
// show later. Output for programs (--json) is JSON, whose escaping covers control characters,
// and does not come here. Mecha's own colours (palette.h) are added around printable text,
// never passed through it.
//
// What it does to the text, byte by byte, keeping everything else as it is:
//  1. newline and tab are kept;
//  2. every other C0 control and DEL becomes caret notation: ESC is ^[, BEL ^G, CR ^M,
//     backspace ^H, DEL ^?. No escape sequence (CSI, OSC 52 clipboard writes, hyperlinks,
//     window titles), carriage return or backspace can reach a terminal to rewrite the screen;
//  3. a C1 control written in UTF-8 (U+0080 to U+009F; U+009B is an 8-bit CSI) becomes
//     \u{9b};
//  4. a byte that is not part of valid UTF-8 (a stray 0x9b is CSI to a terminal reading 8-bit
//     controls) becomes \x9b; valid UTF-8 is kept;
//  5. the invisible characters that reorder or hide text become \u{XXXX}: bidirectional
//     embeddings, overrides, isolates and marks (U+061C, U+200E, U+200F, U+202A to U+202E,
//     U+2066 to U+2069), zero-width spaces and joiners (U+200B to U+200D, U+2060, U+FEFF).
//
// Thread-safe: no state, but for PrintableStream, which belongs to its caller.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace mecha::cli {

// `text` as it may be shown to a person (promises 1 to 5).
std::string printable(std::string_view text);

// printable() for a field that must stay on its one line (a recipient, a subject): newline
// and tab are shown too, as \n and \t, so a value cannot start a line that looks like
// another field.
std::string printable_line(std::string_view text);

// printable() for text that arrives in pieces (a model's streamed answer): a UTF-8 character
// cut between two pieces is held back until the rest arrives, so it is shown as itself and
// not as two invalid bytes.
class PrintableStream {
 public:
  // The printable text of `piece`, less an incomplete character at its end.
  std::string feed(std::string_view piece);
  // What is held back, made printable (an incomplete character that never completed).
  std::string finish();

 private:
  std::string held_;
};

// Writes printable(text) on `out`: for output that holds no colour of mecha's, whole.
void write_printable(std::FILE* out, std::string_view text);

}  // namespace mecha::cli
