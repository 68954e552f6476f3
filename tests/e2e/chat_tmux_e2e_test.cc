// `mecha chat` as a person uses it, in a real terminal: the built binary in tmux, driven
// with send-keys and read with capture-pane. Each test runs chat's own daemon on a cassette
// model, with HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR in the test's temp dir, so no real
// daemon socket or history is touched.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "base/strict_json.h"
#include "base/testing/wait_until.h"
#include "cli/testing/run_binary.h"
#include "cli/testing/tmux_session.h"
#include "tools/bash_sandbox.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;
using testing::TempDir;
using testing::TmuxSession;

class ChatInTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!TmuxSession::available(&why)) GTEST_SKIP() << why;
    dir_.write("tree/README", "a work tree\n");
    for (const char* d : {"home", "state", "run"}) {
      std::filesystem::create_directories(dir_.path() / d);
      ::chmod((dir_.path() / d).c_str(), 0700);
    }
  }

  std::vector<std::string> env() const {
    return {"HOME=" + (dir_.path() / "home").string(),
            "XDG_STATE_HOME=" + (dir_.path() / "state").string(),
            "XDG_CONFIG_HOME=" + (dir_.path() / "home/.config").string(),
            "XDG_RUNTIME_DIR=" + (dir_.path() / "run").string()};
  }

  // `mode` is chat's --permission-mode: the tests about something else than permissions run
  // under bypassPermissions, where nothing but the interlock asks.
  std::unique_ptr<TmuxSession> chat(const std::string& cassette,
                                    const std::string& binary = testing::mecha_binary(),
                                    const std::string& mode = "bypassPermissions") {
    dir_.write("c.jsonl", cassette);
    return std::make_unique<TmuxSession>(
        dir_.path(),
        std::vector<std::string>{binary, "chat", "--permission-mode", mode, "--model",
                                 "cassette:" + (dir_.path() / "c.jsonl").string(), "--store",
                                 (dir_.path() / "store").string(), "--socket",
                                 (dir_.path() / "run/none.sock").string()},
        dir_.path() / "tree", env());
  }

  // Waits for the `n`th prompt: chat reads from the terminal only then (keys pressed
  // before would meet the terminal in its ordinary mode).
  static bool prompt(TmuxSession& t, int n) {
    return t.wait_until(
        [n](const std::string& screen) {
          std::istringstream in(screen);
          std::string line;
          int prompts = 0;
          while (std::getline(in, line)) prompts += line == ">" || line.starts_with("> ");
          return prompts >= n;
        },
        "prompt " + std::to_string(n));
  }

  // The last line of the screen that starts with the prompt.
  static std::string prompt_line(const std::string& screen) {
    std::istringstream in(screen);
    std::string line, last;
    while (std::getline(in, line)) {
      if (line.starts_with("> ")) last = line;
    }
    return last;
  }

  TempDir dir_;
};

std::string tmux_tool_use(const std::string& id, const std::string& name, const Json& input) {
  Json line = {
      {"response",
       {{"content",
         Json::array({Json{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", input}}})},
        {"stop_reason", "tool_use"},
        {"usage", {{"input_tokens", 10}, {"output_tokens", 3}}}}}};
  return line.dump() + "\n";
}

std::string answer(const std::string& text) {
  return R"({"response": {"content": [{"type": "text", "text": ")" + text +
         R"("}], "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 3}}})" +
         "\n";
}

const std::string kHeader = R"({"mecha_cassette": 1, "note": "chat in tmux"})"
                            "\n";

TEST_F(ChatInTmux, UpRecallsTheLastLineAndABackslashContinuesTheMessage) {
  auto t = chat(kHeader + answer("Answer one.") + answer("Answer two."));
  ASSERT_TRUE(prompt(*t, 1));
  t->type("first question");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Answer one."));
  ASSERT_TRUE(prompt(*t, 2));

  // Up brings the line back at the prompt; Ctrl-C drops it and a new prompt follows.
  t->press("Up");
  ASSERT_TRUE(t->wait_for("> first question", 2));
  EXPECT_EQ(prompt_line(t->screen()), "> first question");
  t->press("C-c");
  ASSERT_TRUE(t->wait_for("> first question^C"));
  ASSERT_TRUE(prompt(*t, 3));

  t->type("line one\\");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("> line one\\\n…"));
  t->type("line two");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Answer two."));
  ASSERT_TRUE(prompt(*t, 4));  // the continuation line's "… " is not counted
  t->press("C-d");
  ASSERT_TRUE(t->wait_for_exit(0));

  // The turn's text is the two lines joined by a newline, without the backslash.
  auto shown = run_mecha({"sessions", "show", "last", "--json", "--store",
                          (dir_.path() / "store").string(), "-C", (dir_.path() / "tree").string()},
                         dir_.path(), "", testing::mecha_binary(), env());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("line one\\nline two"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("line one\\\\"), std::string::npos) << shown.out;

  // The history is the user's, private, and holds both lines.
  auto history = dir_.path() / "state/mecha/chat_history";
  struct stat st {};
  ASSERT_EQ(::stat(history.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(history);
  std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find("first"), std::string::npos) << saved;
  EXPECT_NE(saved.find("line"), std::string::npos) << saved;
}

// The history file is capped at LineEditor::kHistoryLines lines, and what was saved last
// is what Up recalls first at the next start.
TEST_F(ChatInTmux, HistoryIsLoadedAtStartAndCapped) {
  std::string old = "_HiStOrY_V2_\n";
  for (int i = 0; i < 1200; ++i) old += "old\\040line\\040" + std::to_string(i) + "\n";
  dir_.write("state/mecha/chat_history", old);
  ::chmod((dir_.path() / "state/mecha").c_str(), 0700);
  auto t = chat(kHeader + answer("Answer one."));
  ASSERT_TRUE(prompt(*t, 1));
  t->press("Up");
  ASSERT_TRUE(t->wait_for("> old line 1199"));
  t->press("C-c");
  ASSERT_TRUE(prompt(*t, 2));
  t->type("newest");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Answer one."));
  ASSERT_TRUE(prompt(*t, 3));
  t->press("C-d");
  ASSERT_TRUE(t->wait_for_exit(0));
  std::ifstream in(dir_.path() / "state/mecha/chat_history");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  EXPECT_LE(lines.size(), 1u + 1000u);  // the header and the last 1000 lines
  EXPECT_EQ(lines.back(), "newest");
}

// A chat_history planted as a symlink is neither read nor written through: the file it
// points at is unchanged, and chat says the history could not be saved.
TEST_F(ChatInTmux, AHistorySymlinkIsNotFollowed) {
  dir_.write("target.txt", "precious\n");
  std::filesystem::create_directories(dir_.path() / "state/mecha");
  ::chmod((dir_.path() / "state/mecha").c_str(), 0700);
  std::filesystem::create_symlink(dir_.path() / "target.txt",
                                  dir_.path() / "state/mecha/chat_history");
  auto t = chat(kHeader + answer("Answer one."));
  ASSERT_TRUE(prompt(*t, 1));
  t->type("a line");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Answer one."));
  ASSERT_TRUE(prompt(*t, 2));
  t->press("C-d");
  ASSERT_TRUE(t->wait_for("cannot save the chat history"));
  ASSERT_TRUE(t->wait_for_exit(0));
  std::ifstream in(dir_.path() / "target.txt");
  std::string target((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(target, "precious\n");
}

TEST_F(ChatInTmux, HelpClearAndAnUnknownCommand) {
  auto t = chat(kHeader + answer("Before clear.") + answer("After clear."));
  ASSERT_TRUE(prompt(*t, 1));
  t->type("/help");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("/resume [ID|last]"));
  for (const char* c : {"/sessions", "/cost", "/model", "/clear", "/quit"}) {
    EXPECT_NE(t->screen().find(c), std::string::npos) << c;
  }
  t->type("/frobnicate");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("unknown command /frobnicate: /help lists them"));
  ASSERT_TRUE(prompt(*t, 3));

  t->type("hello");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Before clear."));
  ASSERT_TRUE(prompt(*t, 4));
  t->type("/clear");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("(new)", 2));
  ASSERT_TRUE(prompt(*t, 5));
  // A new session: a fresh cassette replays from its start.
  t->type("hello again");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Before clear.", 2));
  ASSERT_TRUE(prompt(*t, 6));
  t->type("/model");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("model: cassette"));
  ASSERT_TRUE(prompt(*t, 7));
  t->type("/quit");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for_exit(0));

  auto listed = run_mecha({"sessions", "list", "--json", "--store",
                           (dir_.path() / "store").string(), "-C", (dir_.path() / "tree").string()},
                          dir_.path(), "", testing::mecha_binary(), env());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto lists = testing::json_lines(listed.out);
  ASSERT_EQ(lists.size(), 1u) << listed.out;
  EXPECT_EQ(lists[0].size(), 2u) << listed.out;  // the first session and the one /clear began
}

// True while a process runs `sleep 37.25` (a duration no other test uses).
bool sleep_running() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline == std::string("sleep\0"
                               "37.25\0",
                               12))
      return true;
  }
  return false;
}

TEST_F(ChatInTmux, CtrlCCancelsALongToolAndTheChatGoesOn) {
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  auto t = chat(
      kHeader +
      R"({"response": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 37.25"}}], "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 3}}})"
      "\n" +
      answer("Still here."));
  ASSERT_TRUE(prompt(*t, 1));
  t->type("sleep please");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("● Bash(sleep 37.25)"));
  ASSERT_TRUE(t->wait_for("Bash · 1s"));  // the spinner counts while the tool runs
  // The shell's own start may outlast the first second (a sanitizer build's driver is slow).
  ASSERT_TRUE(mecha::testing::wait_until(sleep_running, std::chrono::seconds(10),
                                         std::chrono::milliseconds(50)))
      << "the Bash tool's sleep is not running";
  auto pressed = std::chrono::steady_clock::now();
  t->press("C-c");
  ASSERT_TRUE(t->wait_for("mecha: cancelled", 1, std::chrono::seconds(10)));
  EXPECT_LT(std::chrono::steady_clock::now() - pressed, std::chrono::seconds(5));
  // On the host: the command was killed, not left running.
  EXPECT_TRUE(mecha::testing::wait_until([] { return !sleep_running(); }, std::chrono::seconds(5),
                                         std::chrono::milliseconds(50)))
      << "sleep 37.25 still runs after the turn was cancelled";
  ASSERT_TRUE(prompt(*t, 2));

  t->type("are you there");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Still here."));
  ASSERT_TRUE(prompt(*t, 3));
  t->press("C-d");
  ASSERT_TRUE(t->wait_for_exit(0));
}

// In the default mode a command asks first; "a" lets it run and every later call the same
// rule allows, for the rest of the session, without asking again.
TEST_F(ChatInTmux, APermissionAskAnsweredAlwaysIsNotAskedAgain) {
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  auto t = chat(kHeader + tmux_tool_use("t1", "Bash", {{"command", "touch one"}}) +
                    answer("Made one.") + tmux_tool_use("t2", "Bash", {{"command", "touch one"}}) +
                    tmux_tool_use("t3", "Bash", {{"command", "touch two"}}) + answer("Made two."),
                testing::mecha_binary(), "default");
  const auto tree = dir_.path() / "tree";
  ASSERT_TRUE(prompt(*t, 1));
  t->type("make one");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Allow Bash? [y/N/a(lways)]"));
  EXPECT_FALSE(std::filesystem::exists(tree / "one")) << "ran before the person answered";
  t->type("a");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Made one."));
  EXPECT_TRUE(std::filesystem::exists(tree / "one"));

  // The same command again runs unasked; another command asks.
  ASSERT_TRUE(prompt(*t, 2));
  t->type("again");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Allow Bash? [y/N/a(lways)]", 2));
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Made two."));
  EXPECT_FALSE(std::filesystem::exists(tree / "two")) << "ran though the person said no";
  ASSERT_TRUE(prompt(*t, 3));
  t->press("C-d");
  ASSERT_TRUE(t->wait_for_exit(0));
}

// `mecha run` started at a terminal asks there what the permissions ask (a headless run
// refuses instead: permissions_e2e_test.cc): "n" refuses, "a" allows this and the same call
// for the rest of the run.
TEST_F(ChatInTmux, RunAtATerminalAsksThereAndObeysTheAnswer) {
  if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
  dir_.write("c.jsonl", kHeader + tmux_tool_use("t1", "Bash", {{"command", "touch refused"}}) +
                            tmux_tool_use("t2", "Bash", {{"command", "touch always"}}) +
                            tmux_tool_use("t3", "Bash", {{"command", "touch always"}}) +
                            answer("Done at the terminal."));
  const auto tree = dir_.path() / "tree";
  TmuxSession t(dir_.path(),
                {testing::mecha_binary(), "run", "--model",
                 "cassette:" + (dir_.path() / "c.jsonl").string(), "make the files"},
                tree, env());
  ASSERT_TRUE(t.wait_for("touch refused"));
  ASSERT_TRUE(t.wait_for("[a]lways for this session"));
  t.type("n");
  t.press("Enter");
  ASSERT_TRUE(t.wait_for("[a]lways for this session", 2));
  EXPECT_FALSE(std::filesystem::exists(tree / "refused"));
  t.type("a");
  t.press("Enter");
  ASSERT_TRUE(t.wait_for("Done at the terminal."));
  ASSERT_TRUE(t.wait_for_exit(0));
  EXPECT_TRUE(std::filesystem::exists(tree / "always"));
  // The third call ran without a third question.
  const std::string screen = t.screen();
  int asked = 0;
  for (size_t at = screen.find("[a]lways for this session"); at != std::string::npos;
       at = screen.find("[a]lways for this session", at + 1)) {
    ++asked;
  }
  EXPECT_EQ(asked, 2) << screen;
}

// A send after the session read untrusted and private content is asked inline: "y" lets it
// run (the message is in sent.jsonl), Enter alone (the default, No) refuses it.
TEST_F(ChatInTmux, ApprovalIsAskedInlineAndTheAnswerIsObeyed) {
  const Json send = {{"to", "friend@example.com"}, {"body", "see you at 8"}};
  auto t = chat(kHeader + tmux_tool_use("t1", "FetchPage", {{"url", "https://pizza.example"}}) +
                    tmux_tool_use("t2", "ReadNotes", Json::object()) +
                    tmux_tool_use("t3", "SendMessage", send) + answer("Sent it.") +
                    tmux_tool_use("t4", "SendMessage", send) + answer("Not sent."),
                testing::mecha_e2e_binary());
  const auto sent = dir_.path() / "tree/sent.jsonl";
  auto sent_lines = [&] {
    std::ifstream in(sent);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  ASSERT_TRUE(prompt(*t, 1));
  t->type("tell my friend");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Allow SendMessage? [y/N]"));
  EXPECT_EQ(sent_lines(), 0) << "sent before the person answered";
  t->type("y");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Sent it."));
  EXPECT_EQ(sent_lines(), 1);

  ASSERT_TRUE(prompt(*t, 2));
  t->type("again");
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("Allow SendMessage? [y/N]", 2));
  t->press("Enter");
  ASSERT_TRUE(t->wait_for("refused by rule 'trifecta'"));
  EXPECT_EQ(t->screen().find("error: send blocked"), std::string::npos)
      << "the refusal is shown twice:\n"
      << t->screen();
  ASSERT_TRUE(t->wait_for("Not sent."));
  EXPECT_EQ(sent_lines(), 1) << "a declined send ran";
  // Answers to approval prompts are not history.
  ASSERT_TRUE(prompt(*t, 3));
  t->press("Up");
  ASSERT_TRUE(t->wait_for("> again", 2));
  t->press("C-c");
  ASSERT_TRUE(prompt(*t, 4));  // "> again^C" and a new one
  t->press("C-d");
  ASSERT_TRUE(t->wait_for_exit(0));
}

TEST_F(ChatInTmux, RunIsColouredOnATerminalUnlessNoColorIsSet) {
  dir_.write(
      "r.jsonl",
      kHeader +
          R"({"response": {"content": [{"type": "tool_use", "id": "t1", "name": "Nope", "input": {"x": 1}}], "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 3}}})"
          "\n" +
          answer("done"));
  auto run = [&](std::vector<std::string> extra_env) {
    auto e = env();
    e.insert(e.end(), extra_env.begin(), extra_env.end());
    auto t = std::make_unique<TmuxSession>(
        dir_.path(),
        std::vector<std::string>{testing::mecha_binary(), "run", "--model",
                                 "cassette:" + (dir_.path() / "r.jsonl").string(), "--store",
                                 (dir_.path() / "store").string(), "go"},
        dir_.path() / "tree", e);
    EXPECT_TRUE(t->wait_for_exit(0));
    return t->screen(true);
  };
  std::string coloured = run({});
  EXPECT_NE(coloured.find("\x1b["), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("error: unknown tool 'Nope'"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("2 turns"), std::string::npos) << coloured;
  std::string plain = run({"NO_COLOR=1"});
  EXPECT_EQ(plain.find("\x1b["), std::string::npos) << plain;
  EXPECT_NE(plain.find("error: unknown tool 'Nope'"), std::string::npos) << plain;
  std::string empty = run({"NO_COLOR="});  // set, even empty, means no colour
  EXPECT_EQ(empty.find("\x1b["), std::string::npos) << empty;
}

}  // namespace
}  // namespace mecha::cli
