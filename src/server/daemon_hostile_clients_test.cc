// The daemon against clients that attack it (issue 11, findings 5, 7, 9 and 10): each bad
// frame is refused and the daemon goes on serving everyone; a client that stops reading or
// never says hello is cut off without stalling the others; a peer in another PID namespace
// is refused; nothing the daemon sends is larger than its clients accept.
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "base/testing/wait_until.h"
#include "server/daemon.h"
#include "server/testing/daemon_harness.h"
#include "server/unix_socket.h"
#include "wire/codec.h"

namespace mecha::server {
namespace {

using namespace std::chrono_literals;
using mecha::testing::wait_until;
using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::noop_cassette;
using testing::noop_transcript;
using testing::text_block;
using testing::tool_use;

// A client that speaks raw bytes, to send what a well-behaved client never would.
class RawPeer {
 public:
  explicit RawPeer(const std::filesystem::path& socket) {
    auto fd = connect_unix(socket);
    EXPECT_TRUE(fd.ok()) << fd.message();
    if (fd.ok()) fd_ = std::move(*fd);
  }
  void write(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(fd_.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;  // the daemon may refuse before reading it all
      done += static_cast<size_t>(n);
    }
  }
  // The next line, without its newline; nullopt at end of stream or after `timeout`.
  std::optional<std::string> line(std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string out = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return out;
      }
      if (!fill(deadline)) return std::nullopt;
    }
  }
  // The next line, decoded.
  std::optional<wire::Frame> frame(std::chrono::milliseconds timeout = 5s) {
    auto l = line(timeout);
    if (!l) return std::nullopt;
    wire::Decoded d = wire::decode_frame(*l);
    EXPECT_TRUE(d.ok()) << d.error.message;
    return d.frame;
  }
  // Waits, without reading, until at least `bytes` wait unread in the socket (the daemon is
  // streaming to this peer); false after `timeout`.
  bool unread_at_least(size_t bytes, std::chrono::milliseconds timeout) {
    return wait_until(
        [&] {
          int n = 0;
          return ::ioctl(fd_.get(), FIONREAD, &n) == 0 && static_cast<size_t>(n) >= bytes;
        },
        timeout, 5ms);
  }
  // Reads and discards until the daemon closes the connection; false after `timeout`.
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!eof_) {
      if (!fill(deadline) && !eof_) return false;
      buffer_.clear();
    }
    return true;
  }
  // Writes what the socket takes now, without waiting; the bytes written.
  size_t write_without_waiting(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n =
          ::send(fd_.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }
  int fd() const { return fd_.get(); }

 private:
  bool fill(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_.get(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[65536];
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
  UniqueFd fd_;
  std::string buffer_;
  bool eof_ = false;
};

std::string hello_line() { return wire::encode_frame(wire::Hello{wire::kProtocolVersion, "raw"}); }

void expect_a_good_client_is_served(DaemonHarness& h) {
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  EXPECT_EQ(testing::run_turn(*c, "task"), noop_transcript());
}

// Regression (issue 11, finding 7): a number past a double's range, or ill-formed UTF-8,
// anywhere in a frame killed the daemon and every session in it.
TEST(DaemonHostileClients, EachBadFrameIsRefusedAndTheDaemonServesAGoodClientAfterwards) {
  DaemonHarness h(noop_cassette(),
                  [](DaemonOptions& o) { o.limits.max_frame_bytes = 1024 * 1024; });
  struct Case {
    std::string name;
    std::string line;
    std::string code;
    std::string message;  // exact; empty: only the code is checked
  };
  const std::vector<Case> cases = {
      {"1e400", R"({"kind":"user_turn","body":{"text":"hi","n":1e400}})", "bad_frame",
       "frame: invalid JSON: number overflow parsing '1e400'"},
      {"1e400 in an array", R"({"kind":"open","body":{"session_id":[1e400]}})", "bad_frame",
       "frame: invalid JSON: number overflow parsing '1e400'"},
      {"ill-formed UTF-8", "{\"kind\":\"user_turn\",\"body\":{\"text\":\"\xff\xfe\xc3\"}}",
       "bad_frame", ""},
      {"ill-formed UTF-8 in a key", "{\"kind\":\"user_turn\",\"body\":{\"\xc0\xaf\":1}}",
       "bad_frame", ""},
      {"80,000 levels deep", std::string(80000, '[') + std::string(80000, ']'), "too_deep",
       "frame refused: nested deeper than 64 levels"},
      {"80,000 objects deep",
       [] {
         std::string s;
         for (int i = 0; i < 80000; ++i) s += "{\"a\":";
         return s + "1" + std::string(80000, '}');
       }(),
       "too_deep", "frame refused: nested deeper than 64 levels"},
      {"oversize",
       "{\"kind\":\"user_turn\",\"body\":{\"text\":\"" + std::string(1500000, 'x') + "\"}}",
       "frame_too_large", ""},
      {"garbage", std::string("\x00\x01\xff{{{\"", 7) + "}", "bad_frame", ""},
  };
  for (const bool before_hello : {true, false}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name + (before_hello ? " before hello" : " after hello"));
      RawPeer peer(h.socket());
      if (!before_hello) {
        peer.write(hello_line());
        auto hello = peer.frame();
        ASSERT_TRUE(hello && std::holds_alternative<wire::Hello>(*hello));
      }
      peer.write(c.line + "\n");
      auto answer = peer.frame();
      ASSERT_TRUE(answer) << "no answer: the daemon died or stalled";
      const auto* e = std::get_if<wire::Error>(&*answer);
      ASSERT_NE(e, nullptr) << wire::encode_frame(*answer);
      EXPECT_EQ(e->code, c.code) << e->message;
      if (!c.message.empty()) {
        EXPECT_EQ(e->message, c.message);
      }
      // The same connection goes on: it may still say hello, and is answered.
      if (before_hello) peer.write(hello_line());
      peer.write(wire::encode_frame(wire::ListSessions{}));
      if (before_hello) {
        auto hello = peer.frame();
        ASSERT_TRUE(hello && std::holds_alternative<wire::Hello>(*hello));
      }
      auto sessions = peer.frame();
      ASSERT_TRUE(sessions && std::holds_alternative<wire::Sessions>(*sessions));
    }
  }
  expect_a_good_client_is_served(h);
}

// What the daemon logs, from its threads, for the test to read.
class DaemonLog {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(m);
    };
  }
  // Waits until a line is logged, without touching the slow peer: a test that read from it
  // before the daemon cut it off would turn it into a good reader. False after `timeout`.
  bool logged_within(std::chrono::milliseconds timeout) {
    return wait_until([&] { return !lines().empty(); }, timeout);
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// 40 tool calls, each with a 60 KB input and a result as long: ~5 MB of frames for a turn.
// Each fetches a page of its own: the same call 40 times would end the turn as stuck.
std::string loud_cassette() {
  std::string c = cassette_header();
  for (int i = 0; i < 40; ++i) {
    const std::string url = "http://x/" + std::to_string(i) + "/" + std::string(60000, 'u');
    c += cassette_line(Json::array({tool_use("t" + std::to_string(i), "Fetch", {{"url", url}})}),
                       "tool_use", 1, 1);
  }
  return c + cassette_line(Json::array({text_block("done")}), "end_turn", 1, 1);
}

// Regression (issue 11, finding 10): one client that stopped reading blocked the daemon's
// loop for 10 s at a time, stalling every other client.
TEST(DaemonHostileClients, AClientThatNeverReadsStallsNoOneAndIsCutOffOnceItsQueueIsFull) {
  DaemonLog daemon_log;
  DaemonHarness h(loud_cassette(), [&](DaemonOptions& o) {
    o.max_queued_bytes = 512 * 1024;
    o.limits.max_frame_bytes = 256 * 1024;
    o.log = daemon_log.sink();
  });
  // The slow one: a whole turn's worth of frames is sent to it, and it reads none. It also
  // asks the loop itself for answers (list_sessions), thousands of times.
  RawPeer slow(h.socket());
  slow.write(hello_line() + wire::encode_frame(wire::Open{}) +
             wire::encode_frame(wire::UserTurn{"flood me"}));
  std::string asks;
  for (int i = 0; i < 20000; ++i) asks += wire::encode_frame(wire::ListSessions{});
  EXPECT_GT(slow.write_without_waiting(asks), 0u);

  // Meanwhile others run whole turns, and each completes promptly.
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const auto start = std::chrono::steady_clock::now();
    auto c = h.connect();
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->open("").ok());
    auto frames = testing::run_turn(*c, "task");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(std::get<wire::TurnDone>(frames.back()).content, "done");
    EXPECT_EQ(frames.size(), 40u * 2 + 2);
    // The stall this guards against held the loop 10 s for each write to the slow client;
    // 9 s leaves room for a sanitizer build on a busy machine (a turn takes ~0.3 s in a
    // release build, up to 5.5 s under ASan with the flood still being answered).
    EXPECT_LT(took, 9s) << "a turn took "
                        << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                        << " ms while another client did not read";
  }
  // The slow one was cut off: its stream ends (after what its socket buffer held).
  ASSERT_TRUE(daemon_log.logged_within(10s));
  EXPECT_TRUE(slow.closed_within(10s));
  const std::vector<std::string> log = daemon_log.lines();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0].find("cut off: the client read too slowly: ") != std::string::npos &&
              log[0].ends_with("would pass the limit of 524288 bytes: connection closed"))
      << log[0];
}

// The same client without the flood: only its turn writes to it, and the turn's worker
// waits its patience for room, then cuts it off and finishes the turn.
TEST(DaemonHostileClients, ATurnWhoseClientStopsReadingCutsItOffAfterItsPatience) {
  DaemonLog daemon_log;
  DaemonHarness h(loud_cassette(), [&](DaemonOptions& o) {
    o.max_queued_bytes = 512 * 1024;
    o.limits.max_frame_bytes = 256 * 1024;
    o.slow_client_patience = 300ms;
    o.log = daemon_log.sink();
  });
  RawPeer slow(h.socket());
  slow.write(hello_line() + wire::encode_frame(wire::Open{}) +
             wire::encode_frame(wire::UserTurn{"flood me"}));
  // The two turns share the cassette: let the slow one draw its first responses before the
  // good one starts, so that it has enough of them to fill its queue.
  ASSERT_TRUE(slow.unread_at_least(100 * 1024, 10s));
  auto good = h.connect();
  ASSERT_TRUE(good);
  ASSERT_TRUE(good->open("").ok());
  auto frames = testing::run_turn(*good, "task");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(std::get<wire::TurnDone>(frames.back()).content, "done");
  ASSERT_TRUE(daemon_log.logged_within(10s));
  EXPECT_TRUE(slow.closed_within(10s));
  const std::vector<std::string> log = daemon_log.lines();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find(" bytes were waiting to be sent after 300 ms without room, and a "),
            std::string::npos)
      << log[0];
}

TEST(DaemonHostileClients, AConnectionThatNeverSaysHelloIsClosedAfterTheTimeout) {
  DaemonHarness h(noop_cassette(), [](DaemonOptions& o) { o.hello_timeout = 300ms; });
  RawPeer silent(h.socket());
  auto helloed = h.connect();  // says hello at once: kept past the timeout
  ASSERT_TRUE(helloed);
  const auto start = std::chrono::steady_clock::now();
  auto answer = silent.frame(5s);
  ASSERT_TRUE(answer);
  EXPECT_EQ(std::get<wire::Error>(*answer),
            (wire::Error{"hello_required", "no hello within 300 ms: connection closed"}));
  EXPECT_TRUE(silent.closed_within(2s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  // A check that nothing happens: the helloed connection outlives its own hello deadline.
  std::this_thread::sleep_for(400ms);
  ASSERT_TRUE(helloed->open("").ok());
  EXPECT_EQ(testing::run_turn(*helloed, "task"), noop_transcript());
}

// Runs a shell command (from a threaded process: popen execs at once) and returns its stdout
// and exit status.
std::pair<std::string, int> run_shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// A tiny client in Python: connects, says hello, prints the daemon's first line. The daemon
// may refuse before it reads the hello, so a failed send is not the client's failure.
std::string python_client(const std::filesystem::path& socket) {
  return fmt::format(
      "python3 -c 'import socket,sys\n"
      "s=socket.socket(socket.AF_UNIX)\n"
      "s.connect(sys.argv[1])\n"
      "try:\n"
      "  s.sendall(b\"{{\\\"kind\\\":\\\"hello\\\",\\\"body\\\":{{\\\"protocol_version\\\":{},"
      "\\\"software\\\":\\\"py\\\"}}}}\\n\")\n"
      "except OSError:\n"
      "  pass\n"
      "d=b\"\"\n"
      "while not d.endswith(b\"\\n\"):\n"
      "  try:\n"
      "    c=s.recv(4096)\n"
      "  except OSError:\n"
      "    break\n"
      "  if not c: break\n"
      "  d+=c\n"
      "sys.stdout.write(d.decode())' {} 2>&1",
      wire::kProtocolVersion, socket.string());
}

// Issue 11, finding 5: a command in the sandbox (a new PID namespace) reached the daemon's
// socket and opened a clean session that could send.
TEST(DaemonHostileClients, APeerInAnotherPidNamespaceIsRefusedAndTheSameClientOutsideIsServed) {
  if (run_shell("command -v python3 >/dev/null").second != 0) {
    GTEST_SKIP() << "python3 is not installed: no client to run in a PID namespace";
  }
  if (run_shell("unshare --pid --fork true 2>/dev/null").second != 0) {
    GTEST_SKIP() << "cannot make a PID namespace here (unshare --pid --fork failed)";
  }
  DaemonHarness h(noop_cassette());
  auto [inside, inside_status] = run_shell("unshare --pid --fork " + python_client(h.socket()));
  ASSERT_EQ(inside_status, 0) << inside;
  ASSERT_TRUE(inside.ends_with("\n")) << inside;
  wire::Decoded refused = wire::decode_frame(std::string_view(inside).substr(0, inside.size() - 1));
  ASSERT_TRUE(refused.ok()) << inside;
  const auto* e = std::get_if<wire::Error>(&*refused.frame);
  ASSERT_NE(e, nullptr) << inside;
  EXPECT_EQ(e->code, "peer_refused");
  EXPECT_TRUE(e->message.starts_with("connection refused: the peer (pid "));
  EXPECT_TRUE(e->message.ends_with(
      ") is not in this daemon's PID namespace (a command in mecha's sandbox is in a namespace "
      "of its own); to serve such peers, start the daemon with --allow-other-pid-namespaces"))
      << e->message;

  auto [outside, outside_status] = run_shell(python_client(h.socket()));
  ASSERT_EQ(outside_status, 0);
  EXPECT_EQ(outside, wire::encode_frame(wire::Hello{wire::kProtocolVersion, "mecha 0.1.0"}));
  expect_a_good_client_is_served(h);
}

TEST(DaemonHostileClients, AllowOtherPidNamespacesServesAPeerInOne) {
  if (run_shell("command -v python3 >/dev/null").second != 0 ||
      run_shell("unshare --pid --fork true 2>/dev/null").second != 0) {
    GTEST_SKIP() << "cannot run python3 in a new PID namespace here (unshare --pid --fork)";
  }
  DaemonHarness h(noop_cassette(), [](DaemonOptions& o) { o.allow_other_pid_namespaces = true; });
  auto [inside, status] = run_shell("unshare --pid --fork " + python_client(h.socket()));
  ASSERT_EQ(status, 0);
  EXPECT_EQ(inside, wire::encode_frame(wire::Hello{wire::kProtocolVersion, "mecha 0.1.0"}));
}

// Issue 11, finding 9: the daemon sent frames past its own limit, which its clients refuse.
TEST(DaemonHostileClients, AToolResultLargerThanAFrameReachesTheClientInFramesWithinTheLimit) {
  constexpr size_t kLimit = 64 * 1024;
  const std::string url = "http://x/" + std::string(200000, 'p');
  DaemonHarness h(
      cassette_header() +
          cassette_line(Json::array({tool_use("t1", "Fetch", {{"url", url}})}), "tool_use", 1, 1) +
          cassette_line(Json::array({text_block(std::string(150000, 'a'))}), "end_turn", 1, 1),
      [&](DaemonOptions& o) { o.limits.max_frame_bytes = kLimit; });
  RawPeer peer(h.socket());
  peer.write(hello_line() + wire::encode_frame(wire::Open{}) +
             wire::encode_frame(wire::UserTurn{"fetch"}));
  std::vector<wire::Frame> frames;
  while (auto line = peer.line()) {
    ASSERT_LE(line->size(), kLimit);
    wire::Decoded d = wire::decode_frame(*line, wire::Limits{kLimit, 64});
    ASSERT_TRUE(d.ok()) << d.error.message;
    if (std::holds_alternative<wire::TextDelta>(*d.frame)) continue;
    frames.push_back(*d.frame);
    if (std::holds_alternative<wire::TurnDone>(frames.back())) break;
  }
  ASSERT_EQ(frames.size(), 6u);  // hello, opened, tool_call, tool_result, text, turn_done
  const auto& call = std::get<wire::ToolCall>(frames[2]);
  EXPECT_EQ(call.input.at("mecha_not_shown").get<std::string>().substr(0, 46),
            "input not shown: the frame would have been 200");
  const auto& result = std::get<wire::ToolResult>(frames[3]);
  EXPECT_TRUE(result.content.starts_with("page text of http://x/ppp"));
  EXPECT_NE(result.content.find("more bytes not shown: a frame may hold at most 65536 bytes]"),
            std::string::npos);
  EXPECT_TRUE(result.untrusted);
  EXPECT_TRUE(std::get<wire::Text>(frames[4]).text.starts_with("aaaa"));
  EXPECT_TRUE(std::get<wire::TurnDone>(frames[5]).content.ends_with("at most 65536 bytes]"));
}

}  // namespace
}  // namespace mecha::server
