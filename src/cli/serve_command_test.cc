// `mecha serve` and `mecha chat` as a user runs them: the real binary, real processes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/testing/wait_until.h"
#include "server/client.h"
#include "server/frame_channel.h"
#include "server/testing/daemon_harness.h"
#include "server/unix_socket.h"
#include "store/session_store.h"
#include "store/testing/temp_dir.h"
#include "wire/codec.h"
#include "wire/frames.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
const std::string kMecha = std::string(MECHA_BINARY_DIR) + "/mecha";

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string answer_cassette() {
  return server::testing::cassette_header() +
         server::testing::cassette_line(
             Json::array({Json{{"type", "text"}, {"text", "the answer"}}}), "end_turn", 12, 3);
}

// `mecha serve` in a child process.
class ServeProcess {
 public:
  ServeProcess(const fs::path& dir) : dir_(dir), socket_(dir / "d.sock") {}
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"mecha",    "serve",
                                     "--socket", socket_.string(),
                                     "--model",  "cassette:" + (dir_ / "c.jsonl").string(),
                                     "-C",       dir_.string(),
                                     "--grace",  "5"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The child's own state and config, never those of the user running the tests; built
    // before the fork, as the child may only make system calls.
    std::vector<std::string> env = {"HOME=" + (dir_ / ".home").string(),
                                    "XDG_STATE_HOME=" + (dir_ / "state").string(),
                                    "XDG_CONFIG_HOME=" + (dir_ / ".home" / ".config").string()};
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view v(*e);
      if (v.starts_with("HOME=") || v.starts_with("XDG_STATE_HOME=") ||
          v.starts_with("XDG_CONFIG_HOME="))
        continue;
      env.emplace_back(v);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with the test, even one that aborts: an orphan would hold ctest's pipe open.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::string log = (dir_ / "serve.log").string();
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      execve(kMecha.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    // Ready once it answers hello.
    ASSERT_TRUE(
        mecha::testing::wait_until([&] { return server::Client::connect(socket_, "probe").ok(); },
                                   std::chrono::seconds(20), std::chrono::milliseconds(50)))
        << "mecha serve did not start: " << read_file(dir_ / "serve.log");
  }
  int signal_and_wait(int sig) {
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  const fs::path& socket() const { return socket_; }

 private:
  fs::path dir_;
  fs::path socket_;
  pid_t pid_ = -1;
};

TEST(ServeCommand, SigkillAndRestartLoseNoAcknowledgedRecordAndTheClientResumes) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  ServeProcess serve(dir.path());
  serve.start();
  std::string id;
  {
    auto c = server::Client::connect(serve.socket(), "test");
    ASSERT_TRUE(c.ok()) << c.message();
    auto opened = (*c)->open("");
    ASSERT_TRUE(opened.ok()) << opened.message();
    id = opened->session_id;
    auto frames = server::testing::run_turn(**c, "first question");
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(std::get<wire::TurnDone>(frames.back()),
              (wire::TurnDone{"the answer", Usage{12, 3, 0, 0}, false}));
  }
  const int status = serve.signal_and_wait(SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  serve.start();  // over the socket file the killed daemon left behind
  auto c = server::Client::connect(serve.socket(), "test");
  ASSERT_TRUE(c.ok()) << c.message();
  auto opened = (*c)->open(id);
  ASSERT_TRUE(opened.ok()) << opened.message();
  EXPECT_EQ(*opened, (wire::Opened{id, true, 4, false}));
  auto frames = server::testing::run_turn(**c, "second question");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(std::get<wire::TurnDone>(frames.back()).content, "the answer");
  (*c)->shutdown();
  EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0);

  EXPECT_FALSE(fs::exists(dir.path() / ".mecha" / "sessions.db"));
  auto store = store::SessionStore::open(dir.path() / "state" / "mecha" / "sessions.db");
  ASSERT_TRUE(store.ok()) << store.message();
  auto session = (*store)->open_session(id);
  ASSERT_TRUE(session.ok()) << session.message();
  auto conversation = (*session)->conversation();
  ASSERT_TRUE(conversation.ok());
  EXPECT_EQ(*conversation,
            (std::vector<Message>{
                Message::user_text("first question"), Message::assistant_text("the answer"),
                Message::user_text("second question"), Message::assistant_text("the answer")}));
}

TEST(ServeCommand, SigtermDrainsExitsZeroAndRemovesTheSocket) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  ServeProcess serve(dir.path());
  serve.start();
  struct stat st {};
  ASSERT_EQ(::stat(serve.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const int status = serve.signal_and_wait(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(fs::exists(serve.socket()));
}

TEST(ChatCommand, RunsItsOwnDaemonWhenNoneIsRunning) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  write_file(dir.path() / "in.txt", "what is it?\n/cost\n/quit\n");
  std::string cmd = fmt::format(
      "cd {0} && HOME={0}/.home XDG_STATE_HOME={0}/state XDG_CONFIG_HOME={0}/.home/.config "
      "{1} chat --socket {0}/none.sock --model cassette:c.jsonl < in.txt > out.txt 2> "
      "err.txt",
      dir.path().string(), kMecha);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.path() / "err.txt");
  EXPECT_EQ(read_file(dir.path() / "out.txt"), "the answer\n");
  EXPECT_NE(read_file(dir.path() / "err.txt").find("12 in / 3 out tokens · cost unknown"),
            std::string::npos)
      << read_file(dir.path() / "err.txt");
}

TEST(ChatCommand, JsonPrintsEveryFrame) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  write_file(dir.path() / "in.txt", "what is it?\n");
  std::string cmd = fmt::format(
      "cd {0} && HOME={0}/.home XDG_STATE_HOME={0}/state XDG_CONFIG_HOME={0}/.home/.config "
      "{1} chat --json --socket {0}/none.sock --model cassette:c.jsonl < in.txt > "
      "out.txt 2> err.txt",
      dir.path().string(), kMecha);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.path() / "err.txt");
  std::vector<std::string> kinds;
  std::istringstream lines(read_file(dir.path() / "out.txt"));
  for (std::string line; std::getline(lines, line);) {
    kinds.push_back(Json::parse(line)["kind"].get<std::string>());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"opened", "text_delta", "text", "turn_done"}));
}

std::string cassette_saying(const std::string& text) {
  return server::testing::cassette_header() +
         server::testing::cassette_line(Json::array({Json{{"type", "text"}, {"text", text}}}),
                                        "end_turn", 12, 3);
}

// Runs chat's own daemon in `dir` with `input` piped in; exit code, stdout and stderr.
struct ChatRun {
  int status;
  std::string out, err;
};
ChatRun chat_piped(const fs::path& dir, const std::string& input,
                   const std::string& socket = "none.sock") {
  write_file(dir / "in.txt", input);
  std::string cmd = fmt::format(
      "cd {0} && HOME={0}/.home XDG_STATE_HOME={0}/state XDG_CONFIG_HOME={0}/.home/.config "
      "{1} chat --socket {2} --model cassette:c.jsonl --store {0}/store < in.txt > out.txt 2> "
      "err.txt",
      dir.string(), kMecha, socket);
  int status = std::system(cmd.c_str());
  return {status, read_file(dir / "out.txt"), read_file(dir / "err.txt")};
}

TEST(ChatCommand, PipedLinesJoinAtABackslashAndAnUnknownCommandPointsToHelp) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  auto r = chat_piped(dir.path(), "first line\\\nsecond line\n/frobnicate\n/model\n/quit\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "the answer\n");
  EXPECT_NE(r.err.find("unknown command /frobnicate: /help lists them"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("model: cassette"), std::string::npos) << r.err;
  // No history for piped input: nothing a person typed.
  EXPECT_FALSE(fs::exists(dir.path() / "state/mecha/chat_history"));
  std::string shown = fmt::format(
      "cd {0} && HOME={0}/.home XDG_STATE_HOME={0}/state {1} sessions show last --json --store "
      "{0}/store > shown.txt",
      dir.path().string(), kMecha);
  ASSERT_EQ(std::system(shown.c_str()), 0);
  EXPECT_NE(read_file(dir.path() / "shown.txt").find("first line\\nsecond line"), std::string::npos)
      << read_file(dir.path() / "shown.txt");
}

TEST(ChatCommand, ModelSwitchesItsOwnDaemonAndKeepsTheSession) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", cassette_saying("from the first model"));
  write_file(dir.path() / "other.jsonl", cassette_saying("from the second model"));
  auto r = chat_piped(dir.path(),
                      "q1\n/model cassette:missing.jsonl\n/model cassette:other.jsonl\nq2\n"
                      "/quit\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "from the first model\nfrom the second model\n");
  EXPECT_NE(r.err.find("mecha: cannot switch to cassette:missing.jsonl"), std::string::npos)
      << r.err;
  // The same session, reopened by the new daemon.
  auto opened = r.err.find("session ");
  ASSERT_NE(opened, std::string::npos) << r.err;
  std::string id = r.err.substr(opened + 8, r.err.find(' ', opened + 8) - opened - 8);
  EXPECT_NE(r.err.find("session " + id + " resumed"), std::string::npos) << r.err;
}

TEST(ChatCommand, ModelSaysAnExternalDaemonCannotBeSwitched) {
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  ServeProcess serve(dir.path());
  serve.start();
  auto r = chat_piped(dir.path(), "/model cassette:other.jsonl\nwhat is it?\n/quit\n",
                      serve.socket().string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("chat cannot switch it"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "the answer\n");
}

// Issue 11, finding 7: one frame (1e400, ill-formed UTF-8, deep nesting) killed `mecha serve`
// and every session in it. Each is sent to the real daemon; it answers with an error frame,
// stays up, and serves a good client's whole turn afterwards.
TEST(ServeCommand, SurvivesEveryBadFrameAndStillServesAGoodClient) {
  static constexpr char kGarbage[] = "\x00\xff garbage {{";
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  ServeProcess serve(dir.path());
  serve.start();
  const std::vector<std::pair<std::string, std::string>> attacks = {
      {R"({"kind":"user_turn","body":{"text":1e400}})", "bad_frame"},
      {"{\"kind\":\"user_turn\",\"body\":{\"text\":\"\xff\xfe\"}}", "bad_frame"},
      {std::string(80000, '[') + std::string(80000, ']'), "too_deep"},
      {std::string(17 << 20, ' '), "frame_too_large"},
      {std::string(kGarbage, sizeof kGarbage - 1), "bad_frame"},
  };
  for (const auto& [line, code] : attacks) {
    SCOPED_TRACE(code + ": " + line.substr(0, 40));
    auto fd = server::connect_unix(serve.socket());
    ASSERT_TRUE(fd.ok()) << fd.message();
    const int raw = fd->get();
    server::FrameChannel channel(std::move(*fd));
    const std::string bytes =
        wire::encode_frame(wire::Hello{wire::kProtocolVersion, "attacker"}) + line + "\n";
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(raw, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      ASSERT_GT(n, 0) << "the daemon stopped reading";
      done += static_cast<size_t>(n);
    }
    auto hello = channel.receive();
    ASSERT_TRUE(hello && hello->ok());
    auto refusal = channel.receive();
    ASSERT_TRUE(refusal && refusal->ok())
        << "the daemon died: " << read_file(dir.path() / "serve.log");
    EXPECT_EQ(std::get<wire::Error>(*refusal->frame).code, code);
  }
  auto c = server::Client::connect(serve.socket(), "good client");
  ASSERT_TRUE(c.ok()) << c.message() << read_file(dir.path() / "serve.log");
  ASSERT_TRUE((*c)->open("").ok());
  auto frames = server::testing::run_turn(**c, "question");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(std::get<wire::TurnDone>(frames.back()),
            (wire::TurnDone{"the answer", Usage{12, 3, 0, 0}, false}));
  (*c)->shutdown();
  EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0);
}

// Issue 11, finding 5: a command in the sandbox (a new PID namespace) reached the daemon's
// socket and opened a clean session. `mecha serve` refuses it, serves the same client run
// outside, and serves it inside too when started with --allow-other-pid-namespaces.
TEST(ServeCommand, RefusesAPeerInAnotherPidNamespaceUnlessAllowed) {
  if (std::system("command -v python3 >/dev/null && unshare --pid --fork true 2>/dev/null") != 0) {
    GTEST_SKIP() << "cannot run python3 in a new PID namespace here (unshare --pid --fork)";
  }
  store::testing::TempDir dir;
  write_file(dir.path() / "c.jsonl", answer_cassette());
  const fs::path script = dir.path() / "client.py";
  write_file(script,
             "import socket, sys\n"
             "s = socket.socket(socket.AF_UNIX)\n"
             "s.connect(sys.argv[1])\n"
             "try:\n"
             "    s.sendall(b'{\"kind\":\"hello\",\"body\":{\"protocol_version\":" +
                 std::to_string(wire::kProtocolVersion) +
                 ",\"software\":"
                 "\"py\"}}\\n')\n"
                 "except OSError:\n"
                 "    pass\n"
                 "d = b''\n"
                 "while not d.endswith(b'\\n'):\n"
                 "    try:\n"
                 "        c = s.recv(4096)\n"
                 "    except OSError:\n"
                 "        break\n"
                 "    if not c:\n"
                 "        break\n"
                 "    d += c\n"
                 "sys.stdout.write(d.decode())\n");
  auto first_line = [&](const std::string& prefix, const fs::path& socket) {
    const fs::path out = dir.path() / "out.txt";
    std::string cmd = fmt::format("{} python3 {} {} > {} 2>&1", prefix, script.string(),
                                  socket.string(), out.string());
    EXPECT_EQ(std::system(cmd.c_str()), 0) << read_file(out);
    return read_file(out);
  };
  {
    ServeProcess serve(dir.path());
    serve.start();
    const std::string inside = first_line("unshare --pid --fork", serve.socket());
    EXPECT_TRUE(inside.starts_with(
        R"({"body":{"code":"peer_refused","message":"connection refused: the peer (pid )"))
        << inside;
    EXPECT_EQ(first_line("", serve.socket()),
              wire::encode_frame(wire::Hello{wire::kProtocolVersion, "mecha 0.1.0"}));
    EXPECT_NE(
        read_file(dir.path() / "serve.log").find("mecha serve: connection refused: the peer (pid "),
        std::string::npos)
        << read_file(dir.path() / "serve.log");
    EXPECT_EQ(serve.signal_and_wait(SIGTERM), 0);
  }
  ServeProcess allowing(dir.path());
  allowing.start({"--allow-other-pid-namespaces"});
  EXPECT_EQ(first_line("unshare --pid --fork", allowing.socket()),
            wire::encode_frame(wire::Hello{wire::kProtocolVersion, "mecha 0.1.0"}));
}

// Issue 11, finding 9: a model reply past the wire's 16 MiB limit went out as one frame,
// which `mecha chat` refused and then hung. Now it arrives as deltas within the limit, the
// text frame is cut with a marker, and the chat ends normally.
TEST(ChatCommand, AReplyLargerThanAFrameArrivesInFramesWithinTheLimit) {
  store::testing::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < (17u << 20); ++i) text += fmt::format("line {}\n", i);
  write_file(dir.path() / "c.jsonl",
             server::testing::cassette_header() +
                 server::testing::cassette_line(
                     Json::array({Json{{"type", "text"}, {"text", text}}}), "end_turn", 1, 1));
  write_file(dir.path() / "in.txt", "talk a lot\n");
  std::string cmd = fmt::format(
      "cd {} && timeout 120 {} chat --json --socket {}/none.sock --model cassette:c.jsonl < "
      "in.txt > out.txt 2> err.txt",
      dir.path().string(), kMecha, dir.path().string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.path() / "err.txt");
  std::vector<std::string> kinds;
  std::string streamed;
  std::string whole;
  std::istringstream lines(read_file(dir.path() / "out.txt"));
  for (std::string line; std::getline(lines, line);) {
    ASSERT_LE(line.size(), size_t{16} << 20);
    Json j = Json::parse(line);
    kinds.push_back(j["kind"].get<std::string>());
    if (kinds.back() == "text_delta") streamed += j["body"]["delta"].get<std::string>();
    if (kinds.back() == "text") whole = j["body"]["text"].get<std::string>();
  }
  ASSERT_GE(kinds.size(), 5u);
  EXPECT_EQ(kinds.front(), "opened");
  EXPECT_EQ(kinds[kinds.size() - 2], "text");
  EXPECT_EQ(kinds.back(), "turn_done");
  EXPECT_EQ(streamed, text);
  const size_t marker = whole.find("\n[mecha: ");
  ASSERT_NE(marker, std::string::npos);
  EXPECT_EQ(whole.substr(0, marker), text.substr(0, marker));
  EXPECT_EQ(whole.substr(marker),
            fmt::format("\n[mecha: {} more bytes not shown: a frame may hold at most 16777216 "
                        "bytes]",
                        text.size() - marker));
}

// A daemon that sends what `mecha chat` cannot read (a frame past the limit, then garbage):
// chat says so and exits 1, instead of waiting forever.
TEST(ChatCommand, AnUndecodableFrameFromTheDaemonIsReportedAndChatExits) {
  for (const std::string& bad : {std::string(17 << 20, 'x'), std::string("{\"kind\":1e400}")}) {
    SCOPED_TRACE(bad.substr(0, 20));
    store::testing::TempDir dir;
    const fs::path socket = dir.path() / "fake.sock";
    auto listener = server::listen_unix(socket);
    ASSERT_TRUE(listener.ok()) << listener.message();
    std::thread fake([&] {
      pollfd p{listener->get(), POLLIN, 0};
      if (::poll(&p, 1, 20000) != 1) return;
      UniqueFd conn(::accept4(listener->get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) return;
      ::fcntl(conn.get(), F_SETFL, 0);
      server::FrameChannel channel(std::move(conn), wire::Limits{size_t{64} << 20, 64});
      (void)channel.receive();  // hello
      (void)channel.send(wire::Hello{wire::kProtocolVersion, "fake daemon"});
      (void)channel.receive();  // open
      (void)channel.send(wire::Opened{"s-1", false, 0, false});
      (void)channel.receive();  // user_turn
      const std::string line = bad + "\n";
      (void)!::send(channel.fd(), line.data(), line.size(), MSG_NOSIGNAL);
      // Then silence, the connection left open: only chat's own check ends the wait.
      (void)channel.receive();
    });
    write_file(dir.path() / "in.txt", "hello\n");
    std::string cmd =
        fmt::format("cd {} && timeout 60 {} chat --socket {} < in.txt > out.txt 2> err.txt",
                    dir.path().string(), kMecha, socket.string());
    const int status = std::system(cmd.c_str());
    fake.join();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1) << read_file(dir.path() / "err.txt");
    const std::string err = read_file(dir.path() / "err.txt");
    EXPECT_NE(err.find("mecha: the daemon sent a frame this client cannot read: "),
              std::string::npos)
        << err;
  }
}

}  // namespace
}  // namespace mecha::cli
