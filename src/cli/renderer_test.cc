#include "cli/renderer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mecha::cli {
namespace {

// A renderer writing into memory; text() is what it wrote to err and out once destroyed.
struct Rendered {
  std::string err;
  std::string out;
};

Rendered render(const std::vector<agent::Event>& events, HumanRenderer::Options options) {
  char* err_buf = nullptr;
  char* out_buf = nullptr;
  size_t err_len = 0, out_len = 0;
  std::FILE* err = open_memstream(&err_buf, &err_len);
  std::FILE* out = open_memstream(&out_buf, &out_len);
  {
    HumanRenderer r(err, out, options);
    for (const auto& e : events) r.on_event(e);
  }
  std::fclose(err);
  std::fclose(out);
  Rendered got{std::string(err_buf, err_len), std::string(out_buf, out_len)};
  std::free(err_buf);
  std::free(out_buf);
  return got;
}

HumanRenderer::Options plain() { return HumanRenderer::Options{}; }
HumanRenderer::Options coloured() {
  HumanRenderer::Options o;
  o.color = true;
  return o;
}

agent::Event call(std::string name, Json input, std::string id = "t1") {
  return agent::ToolCallEvent{"main", std::move(id), std::move(name), std::move(input)};
}

agent::Event result(std::string content, std::string id = "t1", bool error = false,
                    bool untrusted = false) {
  agent::ToolResultEvent r{"main", std::move(id), error, untrusted, false, std::move(content)};
  return r;
}

TEST(HumanRenderer, ToolCallsShowTheirKeyArgument) {
  struct Case {
    std::string tool;
    Json input;
    std::string line;
  } cases[] = {
      {"Bash", {{"command", "ls -la"}, {"description", "list"}}, "● Bash(ls -la)\n"},
      {"Bash", {{"command", "make\nmake test"}}, "● Bash(make …)\n"},
      {"Read", {{"file_path", "src/a.cc"}, {"offset", 3}}, "● Read(src/a.cc)\n"},
      {"Grep", {{"pattern", "TODO"}, {"path", "src"}}, "● Grep(TODO)\n"},
      {"Glob", {{"pattern", "**/*.h"}}, "● Glob(**/*.h)\n"},
      {"Task",
       {{"description", "find the bug"}, {"subagent_type", "Explore"}, {"prompt", "long"}},
       "● Task(Explore: find the bug)\n"},
      {"reviewer", {{"task", "review a.cc"}}, "● reviewer(review a.cc)\n"},
      {"Fetch", {{"url", "https://x"}, {"max", 3}}, "● Fetch(max=3, url=\"https://x\")\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(render({call(c.tool, c.input)}, plain()).err, c.line) << c.tool;
  }
}

TEST(HumanRenderer, TodoWriteIsAChecklistWithoutAResultLine) {
  const Json todos = {{"todos",
                       {{{"content", "Read the failing test"},
                         {"status", "completed"},
                         {"activeForm", "Reading the failing test"}},
                        {{"content", "Fix the parser"},
                         {"status", "in_progress"},
                         {"activeForm", "Fixing the parser"}},
                        {{"content", "Run the \x1b[2Jtests"},
                         {"status", "pending"},
                         {"activeForm", "Running the tests"}}}}};
  EXPECT_EQ(
      render({call("TodoWrite", todos), result("The todo list now has 3 items")}, plain()).err,
      "● TodoWrite\n"
      "    ☑ Read the failing test\n"
      "    ◐ Fixing the parser\n"
      "    ☐ Run the ^[[2Jtests\n");
  EXPECT_EQ(render({call("TodoWrite", todos)}, coloured()).err,
            "\x1b[1m● TodoWrite\x1b[0m\n"
            "    \x1b[2m☑ Read the failing test\x1b[0m\n"
            "    \x1b[1m◐ Fixing the parser\x1b[0m\n"
            "    ☐ Run the ^[[2Jtests\n");
  EXPECT_EQ(render({call("TodoWrite", {{"todos", Json::array()}})}, plain()).err,
            "● TodoWrite\n    (the list is empty)\n");
  // A list the tool refuses is shown as any call, with its error.
  const Json bad = {{"todos", {{{"content", "x"}, {"status", "done"}, {"activeForm", "y"}}}}};
  auto got = render(
      {call("TodoWrite", bad), result("the todo list was not changed: bad", "t1", true)}, plain());
  EXPECT_TRUE(got.err.starts_with("● TodoWrite(todos=")) << got.err;
  EXPECT_NE(got.err.find("  ⎿ error: the todo list was not changed: bad\n"), std::string::npos)
      << got.err;
  // A subagent's list is indented under its call.
  EXPECT_EQ(
      render({call("Task", {{"description", "look"}, {"subagent_type", "Explore"}}),
              agent::nested("Task", "t1", call("TodoWrite", {{"todos", Json::array()}}, "s1"))},
             plain())
          .err,
      "● Task(Explore: look)\n  ● TodoWrite\n      (the list is empty)\n");
}

TEST(HumanRenderer, EditIsADiffCutAfterSixLines) {
  Json input{{"file_path", "a.py"},
             {"old_string", "x = 1\ny = 2\nz = 3\nw = 4"},
             {"new_string", "x = 10\ny = 20\nz = 30\nw = 40"}};
  EXPECT_EQ(render({call("Edit", input)}, plain()).err,
            "● Edit(a.py)\n"
            "    - x = 1\n"
            "    - y = 2\n"
            "    - z = 3\n"
            "    - w = 4\n"
            "    + x = 10\n"
            "    + y = 20\n"
            "    … +2 more lines\n");
  EXPECT_EQ(render({call("Edit", input)}, coloured()).err,
            "\x1b[1m● Edit\x1b[0m(a.py)\n"
            "    \x1b[31m- x = 1\x1b[0m\n"
            "    \x1b[31m- y = 2\x1b[0m\n"
            "    \x1b[31m- z = 3\x1b[0m\n"
            "    \x1b[31m- w = 4\x1b[0m\n"
            "    \x1b[32m+ x = 10\x1b[0m\n"
            "    \x1b[32m+ y = 20\x1b[0m\n"
            "    \x1b[2m… +2 more lines\x1b[0m\n");
}

TEST(HumanRenderer, WriteIsAllPlusLinesAndOneMoreLineIsSingular) {
  Json input{{"file_path", "n.txt"}, {"content", "1\n2\n3\n4\n5\n6\n7\n"}};
  EXPECT_EQ(render({call("Write", input)}, plain()).err,
            "● Write(n.txt)\n    + 1\n    + 2\n    + 3\n    + 4\n    + 5\n    + 6\n"
            "    … +1 more line\n");
  Json small{{"file_path", "n.txt"}, {"content", "only"}};
  EXPECT_EQ(render({call("Write", small)}, plain()).err, "● Write(n.txt)\n    + only\n");
}

TEST(HumanRenderer, BashOutputIsAShortPreview) {
  auto got = render({call("Bash", {{"command", "seq 6"}}), result("1\n2\n3\n4\n5\n6\n")}, plain());
  EXPECT_EQ(got.err,
            "● Bash(seq 6)\n"
            "  ⎿ 1\n"
            "    2\n"
            "    3\n"
            "    4\n"
            "    … 2 more lines\n");
  EXPECT_EQ(render({call("Bash", {{"command", "true"}}), result("")}, plain()).err,
            "● Bash(true)\n  ⎿ (no output)\n");
}

TEST(HumanRenderer, OtherResultsAreOneLineAndUntrustedIsMarked) {
  auto got = render({call("Read", {{"file_path", "a"}}), result("hello"),
                     call("Fetch", {{"url", "u"}}, "t2"), result("a\nb\nc\n", "t2", false, true)},
                    plain());
  EXPECT_EQ(got.err,
            "● Read(a)\n  ⎿ 1 line (5 B)\n"
            "● Fetch(url=\"u\")\n  ⎿ 3 lines (6 B), untrusted\n");
  auto coloured_got =
      render({call("Fetch", {{"url", "u"}}), result("x", "t1", false, true)}, coloured());
  EXPECT_NE(coloured_got.err.find("\x1b[33muntrusted\x1b[0m"), std::string::npos)
      << coloured_got.err;
}

TEST(HumanRenderer, AResultBelowOtherLinesSaysWhichCallItAnswers) {
  // Two reads made at once, answered in the other order, then a refusal of a third call and
  // a Bash result that lands under it.
  auto got = render(
      {call("Read", {{"file_path", "a.cc"}}, "t1"), call("Read", {{"file_path", "b.cc"}}, "t2"),
       result("x\ny\n", "t2"), result("no such file: a.cc", "t1", true),
       call("Bash", {{"command", "make"}}, "t3"), call("Bash", {{"command", "curl x"}}, "t4"),
       agent::RefusalEvent{"main", "t4", "no-net", "network is off"}, result("built", "t3")},
      plain());
  EXPECT_EQ(got.err,
            "● Read(a.cc)\n"
            "● Read(b.cc)\n"
            "  ⎿ 2 lines (4 B)\n"
            "  ⎿ Read(a.cc): error: no such file: a.cc\n"
            "● Bash(make)\n"
            "● Bash(curl x)\n"
            "  ⎿ refused by rule 'no-net': network is off\n"
            "  ⎿ Bash(make): built\n");
}

TEST(HumanRenderer, ErrorsAreRed) {
  auto e = result("no such file: a\nmore", "t1", true);
  EXPECT_EQ(render({call("Read", {{"file_path", "a"}}), e}, plain()).err,
            "● Read(a)\n  ⎿ error: no such file: a\n");
  EXPECT_EQ(render({e}, coloured()).err, "  \x1b[31m⎿ error: no such file: a\x1b[0m\n");
}

TEST(HumanRenderer, RefusalsShowTheRuleAndTheFirstLineInTheirOwnColour) {
  agent::RefusalEvent r{"main", "t1", "trifecta", "sending after reading private data\nsecond"};
  EXPECT_EQ(render({r}, plain()).err,
            "  ⎿ refused by rule 'trifecta': sending after reading private data\n");
  EXPECT_EQ(render({r}, coloured()).err,
            "  \x1b[35m⎿ refused by rule 'trifecta': sending after reading private "
            "data\x1b[0m\n");
}

TEST(HumanRenderer, ARefusedCallsErrorResultIsNotShownAgain) {
  auto got = render({call("SendMessage", {{"to", "x"}}),
                     agent::RefusalEvent{"main", "t1", "trifecta", "send blocked: private data"},
                     result("send blocked: private data", "t1", true),
                     call("Read", {{"file_path", "b"}}, "t2"), result("missing", "t2", true)},
                    plain());
  EXPECT_EQ(got.err,
            "● SendMessage(to=\"x\")\n"
            "  ⎿ refused by rule 'trifecta': send blocked: private data\n"
            "● Read(b)\n"
            "  ⎿ error: missing\n");
}

TEST(HumanRenderer, TurnsArePluralOnlyWhenNotOne) {
  agent::Outcome one;
  one.turns = 1;
  one.text = "done";
  agent::Outcome two = one;
  two.turns = 2;
  auto a = render({agent::DoneEvent{one, "s"}}, plain());
  EXPECT_EQ(a.out, "done\n");
  EXPECT_EQ(a.err, "1 turn · 0 in / 0 out tokens · cost unknown\n");
  EXPECT_EQ(render({agent::DoneEvent{two, "s"}}, plain()).err,
            "2 turns · 0 in / 0 out tokens · cost unknown\n");
  HumanRenderer::Options no_summary;
  no_summary.summary = false;
  EXPECT_EQ(render({agent::DoneEvent{two, "s"}}, no_summary).err, "");
}

TEST(HumanRenderer, SubagentEventsAreIndentedUnderTheirCall) {
  auto got = render(
      {call("Task", {{"description", "look"}, {"subagent_type", "Explore"}}),
       agent::nested("Task", "t1", call("Grep", {{"pattern", "x"}}, "s1")),
       agent::nested("Task", "t1", result("a\nb", "s1")),
       agent::nested("Task", "t1", agent::TextEvent{"Explore", "found it"}), result("found it")},
      plain());
  EXPECT_EQ(got.err,
            "● Task(Explore: look)\n"
            "  ● Grep(x)\n"
            "    ⎿ 2 lines (3 B)\n"
            "  found it\n"
            "  ⎿ 1 line (8 B)\n");
}

TEST(HumanRenderer, EscapeSequencesFromModelsAndToolsAreShownNotObeyed) {
  auto got = render(
      {agent::TextEvent{"main", "hi \x1b]0;pwned\x07 there"}, call("Bash", {{"command", "x"}}),
       result("\x1b[2J\xc2\x9b"
              "31m")},
      coloured());
  EXPECT_EQ(got.err.find("\x1b]"), std::string::npos) << got.err;
  EXPECT_EQ(got.err.find("\x1b[2J"), std::string::npos) << got.err;
  EXPECT_NE(got.err.find("hi ^[]0;pwned^G there"), std::string::npos) << got.err;
  EXPECT_NE(got.err.find("^[[2J\\u{9b}31m"), std::string::npos) << got.err;
}

// Issue 46: the final answer went to `out` raw, whatever `out` was. It is for a person
// wherever it goes, and so is an error that quotes a model's or a server's words.
TEST(HumanRenderer, TheAnswerAndTheEndOfARunAreShownNotObeyed) {
  agent::Outcome done;
  done.turns = 1;
  done.text = "ok\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2K\rpassed";
  auto got = render({agent::TextEvent{"main", done.text}, agent::DoneEvent{done, "s"}}, plain());
  EXPECT_EQ(got.out, "ok^[]52;c;cm0gLXJmIH4K^G^[[2K^Mpassed\n");
  agent::Outcome failed;
  failed.status = agent::RunStatus::kError;
  failed.error = "the server said \x1b]0;pwned\x07";
  EXPECT_EQ(render({agent::DoneEvent{failed, "s"}}, plain()).err,
            "mecha: error: the server said ^[]0;pwned^G\n0 turns · 0 in / 0 out tokens · cost "
            "unknown\n");
}

// A character cut between two streamed pieces is shown whole; an escape split across them
// is shown, never obeyed.
TEST(HumanRenderer, StreamedPiecesAreShownWholeAndEscaped) {
  HumanRenderer::Options o;
  o.stream = true;
  agent::Outcome done;
  done.turns = 1;
  done.text = "caf\xc3\xa9 \x1b[2J";
  auto got =
      render({agent::TextDeltaEvent{"main", "caf\xc3"}, agent::TextDeltaEvent{"main", "\xa9 \x1b"},
              agent::TextDeltaEvent{"main", "[2J"}, agent::DoneEvent{done, "s"}},
             o);
  EXPECT_EQ(got.err.substr(0, got.err.find('\n') + 1), "caf\xc3\xa9 ^[[2J\n");
}

TEST(HumanRenderer, StreamedTextIsNotPrintedTwice) {
  HumanRenderer::Options o;
  o.stream = true;
  o.answer_shown = true;
  agent::Outcome done;
  done.turns = 1;
  done.text = "Hello world";
  auto got =
      render({agent::TextDeltaEvent{"main", "Hello "}, agent::TextDeltaEvent{"main", "world"},
              agent::TextEvent{"main", "Hello world"}, agent::DoneEvent{done, "s"}},
             o);
  EXPECT_EQ(got.err, "Hello world\n1 turn · 0 in / 0 out tokens · cost unknown\n");
  EXPECT_EQ(got.out, "");
}

TEST(HumanRenderer, TheSpinnerIsErasedBeforeAnythingIsPrintedAndStopsAtDone) {
  HumanRenderer::Options o;
  o.spinner = true;
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* err = open_memstream(&buf, &len);
  std::FILE* out = std::tmpfile();
  {
    HumanRenderer r(err, out, o);
    r.waiting_for_model();
    r.on_event(call("Bash", {{"command", "sleep 1"}}));
    r.on_event(result("ok"));
    agent::Outcome done;
    done.turns = 1;
    r.on_event(agent::DoneEvent{done, "s"});
  }
  std::fclose(err);
  std::fclose(out);
  std::string got(buf, len);
  std::free(buf);
  const std::string erase = "\r\x1b[2K";
  EXPECT_EQ(got.find("\r\x1b[2K⠋ waiting for the model · 0s"), 0u) << got;
  EXPECT_NE(got.find(erase + "● Bash(sleep 1)\n" + erase), std::string::npos) << got;
  EXPECT_NE(got.find("Bash · 0s"), std::string::npos) << got;
  // Nothing is drawn after the summary line: the spinner stopped at done.
  const std::string summary = "1 turn · 0 in / 0 out tokens · cost unknown\n";
  ASSERT_NE(got.find(summary), std::string::npos) << got;
  EXPECT_EQ(got.substr(got.find(summary) + summary.size()), "") << got;
}

TEST(Spinner, LineShowsFrameLabelAndSeconds) {
  EXPECT_EQ(Spinner::line("waiting for the model", std::chrono::seconds(3), 0),
            "⠋ waiting for the model · 3s");
  EXPECT_EQ(Spinner::line("Bash", std::chrono::seconds(12), 1), "⠙ Bash · 12s");
}

TEST(Renderer, AnApprovalShowsTheWholeCallThatWillRun) {
  // The tool_call line is cut at a width: a command padded past it, or one a hook rewrote
  // after the call was shown, must still be seen whole where the person is asked.
  const std::string padded = "git status" + std::string(200, ' ') + "&& rm -rf ~/work";
  agent::ToolCallEvent call{"main", "b1", "Bash", Json{{"command", padded}}};
  agent::ApprovalRequest ask{agent::ApprovalKind::kPermission, "main", "Bash",
                             Json{{"command", padded + "\n\n\necho done"}},
                             "mode default: Bash asks before running"};
  Rendered r = render({call, ask}, plain());
  EXPECT_NE(r.err.find("&& rm -rf ~/work\\n\\n\\necho done"), std::string::npos) << r.err;
}

TEST(Renderer, ARuleOfTwoAskSaysItIsAChangeOfState) {
  agent::ApprovalRequest ask{agent::ApprovalKind::kStateChange, "main", "Write",
                             Json{{"file_path", "out.txt"}, {"content", "x"}},
                             "the run has read both untrusted and private content, and [security] "
                             "mode is rule_of_two"};
  Rendered r = render({ask}, plain());
  EXPECT_NE(r.err.find("asking to allow a change of state by 'Write': the run has read both "
                       "untrusted and private content, and [security] mode is rule_of_two"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace mecha::cli
