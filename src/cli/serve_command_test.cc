// `mecha serve` and `mecha chat` as a user runs them: the real binary, real processes.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "server/client.h"
#include "server/testing/daemon_harness.h"
#include "store/session_store.h"
#include "store/testing/temp_dir.h"

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
  void start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::string log = (dir_ / "serve.log").string();
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      std::string model = "cassette:" + (dir_ / "c.jsonl").string();
      // The child's own state and config, never the user's running the tests.
      setenv("HOME", (dir_ / ".home").c_str(), 1);
      setenv("XDG_STATE_HOME", (dir_ / "state").c_str(), 1);
      setenv("XDG_CONFIG_HOME", (dir_ / ".home" / ".config").c_str(), 1);
      execl(kMecha.c_str(), "mecha", "serve", "--socket", socket_.c_str(), "--model", model.c_str(),
            "-C", dir_.c_str(), "--grace", "5", nullptr);
      _exit(127);
    }
    // Ready once it answers hello.
    for (int i = 0; i < 200; ++i) {
      if (server::Client::connect(socket_, "probe").ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "mecha serve did not start: " << read_file(dir_ / "serve.log");
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

}  // namespace
}  // namespace mecha::cli
