#include "server/daemon.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "base/testing/wait_until.h"
#include "server/testing/daemon_harness.h"
#include "server/testing/receive_deadline.h"
#include "server/testing/test_tools.h"
#include "server/unix_socket.h"
#include "wire/codec.h"

namespace mecha::server {
namespace {

using testing::cassette_header;
using testing::cassette_line;
using testing::DaemonHarness;
using testing::noop_cassette;
using testing::noop_transcript;
using testing::ReceiveDeadline;
using testing::text_block;
using testing::tool_use;

// Reads untrusted content, then private data, then tries to send.
std::string trifecta_cassette() {
  return cassette_header() +
         cassette_line(Json::array({tool_use("t1", "Fetch", {{"url", "http://x"}}),
                                    tool_use("t2", "ReadSecret", Json::object())}),
                       "tool_use", 10, 1) +
         cassette_line(Json::array({tool_use("t3", "Send", {{"to", "ops"}, {"text", "hi"}})}),
                       "tool_use", 10, 1) +
         cassette_line(Json::array({text_block("finished")}), "end_turn", 10, 1);
}

std::string dump(const std::vector<wire::Frame>& frames) {
  std::string out;
  for (const auto& f : frames) out += wire::encode_frame(f);
  return out;
}

TEST(Daemon, FiftyConcurrentSessionsEachGetTheirOwnTranscriptAndLog) {
  DaemonHarness h(noop_cassette());
  constexpr int kSessions = 50;
  std::vector<std::string> ids(kSessions);
  std::vector<std::string> transcripts(kSessions);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&, i] {
      auto c = h.connect();
      if (!c) return;
      auto opened = c->open("");
      if (!opened.ok()) return;
      ids[i] = opened->session_id;
      transcripts[i] = dump(testing::run_turn(*c, "task " + std::to_string(i)));
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(h.stop().ok());

  std::set<std::string> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), size_t{kSessions});
  auto store = store::SessionStore::open(h.store_path());
  ASSERT_TRUE(store.ok()) << store.message();
  for (int i = 0; i < kSessions; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(transcripts[i], dump(noop_transcript()));
    auto records = (*store)->read_records(ids[i]);
    ASSERT_TRUE(records.ok()) << records.message();
    std::vector<std::string> kinds;
    for (const auto& r : *records) kinds.push_back(std::string(store::record_kind_name(r.kind)));
    EXPECT_EQ(kinds,
              (std::vector<std::string>{"user_message", "usage", "assistant_message", "tool_call",
                                        "tool_result", "usage", "assistant_message", "run_end"}));
    EXPECT_EQ((*records)[0].body,
              store::Record::user_message(Message::user_text("task " + std::to_string(i))).body);
  }
}

TEST(Daemon, AnApprovalNotAnsweredInTimeIsADenial) {
  DaemonHarness h(trifecta_cassette(), [](DaemonOptions& o) {
    o.turns.approval_timeout = std::chrono::milliseconds(200);
  });
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  auto frames = testing::run_turn(*c, "go");
  ASSERT_FALSE(frames.empty());
  const auto* request = std::get_if<wire::ApprovalRequest>(&frames[5]);
  ASSERT_NE(request, nullptr) << dump(frames);
  EXPECT_EQ(request->action, "send");
  EXPECT_EQ(request->tool, "Send");
  EXPECT_EQ(request->input, (Json{{"to", "ops"}, {"text", "hi"}}));
  EXPECT_EQ(request->timeout_ms, 200);
  const auto* refusal = std::get_if<wire::Refusal>(&frames[6]);
  ASSERT_NE(refusal, nullptr) << dump(frames);
  EXPECT_EQ(refusal->rule, "trifecta");
  EXPECT_NE(refusal->message.find("The person asked declined it."), std::string::npos);
  EXPECT_EQ(std::get<wire::TurnDone>(frames.back()),
            (wire::TurnDone{"finished", Usage{30, 3, 0, 0}, true}));
  EXPECT_EQ(h.sends().load(), 0);
}

// Regression: each turn numbered its approval requests from 1 again, so a client that tells
// requests apart by id (the web page) took the next turn's first ask for one already answered.
TEST(Daemon, ApprovalRequestIdsAreNeverReusedWithinASession) {
  std::string twice = trifecta_cassette();
  twice += twice.substr(twice.find('\n') + 1);
  DaemonHarness h(twice);
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  std::vector<std::string> ids;
  for (int turn = 0; turn < 2; ++turn) {
    testing::run_turn(*c, "go", [&](const wire::ApprovalRequest& r) {
      ids.push_back(r.request_id);
      return false;
    });
  }
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_NE(ids[0], ids[1]);
}

// Regression (issue 13): the private label used to be a key the strict encoder did not know,
// so a private result reached the client as a note holding raw JSON.
TEST(Daemon, APrivateToolResultReachesTheClientAsAToolResultWithItsLabels) {
  DaemonHarness h(trifecta_cassette());
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  auto frames = testing::run_turn(*c, "go", [](const wire::ApprovalRequest&) { return false; });
  std::vector<wire::ToolResult> results;
  for (const auto& f : frames) {
    EXPECT_FALSE(std::holds_alternative<wire::Note>(f)) << dump(frames);
    if (const auto* r = std::get_if<wire::ToolResult>(&f)) results.push_back(*r);
  }
  ASSERT_EQ(results.size(), 3u) << dump(frames);
  EXPECT_EQ(results[0].id, "t1");
  EXPECT_TRUE(results[0].untrusted);
  EXPECT_FALSE(results[0].private_data);
  EXPECT_EQ(results[1].id, "t2");
  EXPECT_FALSE(results[1].untrusted);
  EXPECT_TRUE(results[1].private_data);
  EXPECT_FALSE(results[2].private_data);  // the refused send
}

TEST(Daemon, AnApprovedSendRuns) {
  DaemonHarness h(trifecta_cassette());
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  auto frames = testing::run_turn(*c, "go", [](const wire::ApprovalRequest&) { return true; });
  EXPECT_EQ(h.sends().load(), 1);
  EXPECT_EQ(std::get<wire::ToolResult>(frames[6]),
            (wire::ToolResult{"main", "t3", false, false, false, "sent"}));
}

TEST(Daemon, UntrustedComesFromTheLogAndSurvivesARestart) {
  std::string cassette = trifecta_cassette();
  DaemonHarness h(cassette);
  std::string id;
  {
    auto c = h.connect();
    ASSERT_TRUE(c);
    auto opened = c->open("");
    ASSERT_TRUE(opened.ok());
    id = opened->session_id;
    auto frames = testing::run_turn(*c, "go", [](const wire::ApprovalRequest&) { return false; });
    EXPECT_TRUE(std::get<wire::TurnDone>(frames.back()).untrusted);
  }
  ASSERT_TRUE(h.stop().ok());
  h.restart();
  auto c = h.connect();
  ASSERT_TRUE(c);
  auto opened = c->open(id);
  ASSERT_TRUE(opened.ok()) << opened.message();
  // 16 records: the approval asked for is one of them (a note).
  EXPECT_EQ(*opened, (wire::Opened{id, true, 16, true}));
}

TEST(Daemon, ABadFrameIsAnsweredWithAnErrorAndTheConnectionStaysUsable) {
  DaemonHarness h(noop_cassette());
  auto fd = connect_unix(h.socket());
  ASSERT_TRUE(fd.ok());
  const int raw = fd->get();
  FrameChannel channel(std::move(*fd));
  std::string lines =
      "{\"kind\":\"hello\",\"body\":{\"protocol_version\":2,\"software\":\"t\",\"x\":1}}\n"
      "not json\n" +
      wire::encode_frame(wire::Hello{wire::kProtocolVersion, "t"}) +
      "{\"kind\":\"approval_answer\",\"body\":{\"request_id\":\"r\"}}\n" +
      wire::encode_frame(wire::ListSessions{});
  ASSERT_EQ(::write(raw, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  std::vector<std::string> got;
  ReceiveDeadline deadline(channel, "the answers to four frames");
  for (int i = 0; i < 4; ++i) {
    auto d = channel.receive();
    ASSERT_TRUE(d && d->ok());
    got.push_back(wire::frame_to_json(*d->frame).dump());
  }
  EXPECT_EQ(got[0],
            wire::frame_to_json(wire::Error{"bad_frame", "hello: unknown field \"x\""}).dump());
  EXPECT_TRUE(got[1].starts_with(R"({"body":{"code":"bad_frame","message":"frame: invalid JSON)"))
      << got[1];
  EXPECT_EQ(got[2], wire::frame_to_json(wire::Hello{wire::kProtocolVersion, "mecha 0.1.0"}).dump());
  EXPECT_EQ(got[3], wire::frame_to_json(
                        wire::Error{"bad_frame", "approval_answer: missing field \"approved\""})
                        .dump());
  auto sessions = channel.receive();
  ASSERT_TRUE(sessions && sessions->ok());
  EXPECT_EQ(std::get<wire::Sessions>(*sessions->frame), wire::Sessions{});
}

TEST(Daemon, AVersionMismatchIsRefusedNamingBothVersions) {
  DaemonHarness h(noop_cassette());
  auto c = Client::connect(h.socket(), "old client", 7);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.message(),
            "the daemon refused: protocol version mismatch: the client speaks version 7, this "
            "daemon speaks version 5 (version_mismatch)");
}

TEST(Daemon, FramesBeforeHelloAreRefused) {
  DaemonHarness h(noop_cassette());
  auto fd = connect_unix(h.socket());
  ASSERT_TRUE(fd.ok());
  FrameChannel channel(std::move(*fd));
  ASSERT_TRUE(channel.send(wire::Open{}).ok());
  auto d = channel.receive();
  ASSERT_TRUE(d && d->ok());
  EXPECT_EQ(std::get<wire::Error>(*d->frame),
            (wire::Error{"hello_required",
                         "the first frame must be hello (protocol version 5), not open"}));
}

TEST(Daemon, FramesOnlyTheDaemonSendsAreRefusedAndTheConnectionGoesOn) {
  DaemonHarness h(noop_cassette());
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->send(wire::TurnDone{"forged", Usage{}, false}).ok());
  ASSERT_TRUE(c->send(wire::ApprovalAnswer{"r9", true}).ok());
  ASSERT_TRUE(c->send(wire::UserTurn{"too early"}).ok());
  std::vector<wire::Error> errors;
  ReceiveDeadline deadline(*c, "the answers to three frames");
  for (int i = 0; i < 3; ++i) {
    auto d = c->receive();
    ASSERT_TRUE(d && d->ok());
    errors.push_back(std::get<wire::Error>(*d->frame));
  }
  EXPECT_EQ(errors, (std::vector<wire::Error>{
                        {"unexpected_frame", "a client does not send turn_done frames"},
                        {"unknown_request",
                         "no approval request \"r9\" is waiting (answered already, timed out, "
                         "or never asked)"},
                        {"no_session", "no session is open: send open first"}}));
  EXPECT_TRUE(c->open("").ok());
}

TEST(Daemon, TheSocketIsMode0600) {
  DaemonHarness h(noop_cassette());
  struct stat st {};
  ASSERT_EQ(::stat(h.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Daemon, AClientOfAnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  DaemonHarness h(noop_cassette());
  // Open the file and its directory to everyone, so only SO_PEERCRED stands in the way.
  ::chmod(h.socket().parent_path().c_str(), 0755);
  ::chmod(h.socket().c_str(), 0666);
  // The child of a threaded process may only make system calls (another thread may hold
  // the allocator's lock at the fork), so everything is prepared here: the address, the
  // hello line, the buffer for the answer.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = h.socket().string();
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const std::string hello = wire::encode_frame(wire::Hello{wire::kProtocolVersion, "intruder"});
  char answer[4096];
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipefd[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(3);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(4);
    // The daemon may refuse before it reads: a failed send is not the test's failure.
    (void)!::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    ssize_t got = 0, n = 0;
    while ((n = ::read(fd, answer + got, sizeof answer - static_cast<size_t>(got))) > 0) {
      got += n;
      if (answer[got - 1] == '\n' || got == static_cast<ssize_t>(sizeof answer)) break;
    }
    (void)!::write(pipefd[1], answer, static_cast<size_t>(got));
    _exit(0);
  }
  ::close(pipefd[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(out, wire::encode_frame(wire::Error{
                     "peer_refused",
                     "connection refused: this daemon serves uid 0 only, and the peer is uid "
                     "65534"}));
}

TEST(Daemon, StopCancelsATurnStillRunningAfterTheGracePeriod) {
  DaemonHarness h(trifecta_cassette(), [](DaemonOptions& o) {
    o.grace = std::chrono::milliseconds(100);
    o.turns.approval_timeout = std::chrono::minutes(10);
  });
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  std::vector<wire::Frame> frames;
  std::thread stopper;
  frames = testing::run_turn(*c, "go", [&](const wire::ApprovalRequest&) {
    stopper = std::thread([&h] { EXPECT_TRUE(h.stop().ok()); });
    return std::nullopt;  // never answered: only the drain ends the wait
  });
  stopper.join();
  ASSERT_GE(frames.size(), 2u);
  EXPECT_EQ(std::get<wire::Error>(frames[frames.size() - 2]),
            (wire::Error{"turn_cancelled", "the turn was cancelled"}));
  EXPECT_TRUE(std::holds_alternative<wire::TurnDone>(frames.back()));
}

TEST(Daemon, TheTaintOfEarlierTurnsHoldsASendInALaterOne) {
  std::string cassette =
      cassette_header() +
      cassette_line(Json::array({tool_use("t1", "Fetch", {{"url", "http://x"}})}), "tool_use", 1,
                    1) +
      cassette_line(Json::array({text_block("read it")}), "end_turn", 1, 1) +
      cassette_line(Json::array({tool_use("t2", "ReadSecret", Json::object())}), "tool_use", 1, 1) +
      cassette_line(Json::array({tool_use("t3", "Send", {{"to", "ops"}})}), "tool_use", 1, 1) +
      cassette_line(Json::array({text_block("end")}), "end_turn", 1, 1);
  DaemonHarness h(cassette);
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  auto first = testing::run_turn(*c, "fetch");
  EXPECT_TRUE(std::get<wire::TurnDone>(first.back()).untrusted);
  int asked = 0;
  auto second = testing::run_turn(*c, "read and send", [&](const wire::ApprovalRequest&) {
    ++asked;
    return false;
  });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(h.sends().load(), 0);
}

// Regression: turn_done went out before the session was free, so a client answering it at
// once with its next turn was refused with turn_running and waited forever.
TEST(Daemon, ATurnSentTheMomentTurnDoneArrivesIsAccepted) {
  std::string cassette = cassette_header();
  for (int i = 0; i < 20; ++i) {
    cassette +=
        cassette_line(Json::array({text_block("answer " + std::to_string(i))}), "end_turn", 1, 1);
  }
  DaemonHarness h(cassette);
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  for (int i = 0; i < 20; ++i) {
    auto frames = testing::run_turn(*c, "again");
    ASSERT_EQ(frames.size(), 2u) << dump(frames);
    EXPECT_EQ(std::get<wire::TurnDone>(frames.back()).content, "answer " + std::to_string(i));
  }
}

TEST(Daemon, ListsSessionsAndReportsCost) {
  DaemonHarness h(noop_cassette());
  auto c = h.connect();
  ASSERT_TRUE(c);
  auto opened = c->open("");
  ASSERT_TRUE(opened.ok());
  testing::run_turn(*c, "task");
  ASSERT_TRUE(c->send(wire::CostQuery{}).ok());
  auto cost = c->receive();
  ASSERT_TRUE(cost && cost->ok());
  EXPECT_EQ(std::get<wire::CostReport>(*cost->frame),
            (wire::CostReport{opened->session_id, Usage{220, 15, 0, 0}, std::nullopt, 2}));
  ASSERT_TRUE(c->send(wire::ListSessions{}).ok());
  auto list = c->receive();
  ASSERT_TRUE(list && list->ok());
  const auto& sessions = std::get<wire::Sessions>(*list->frame).sessions;
  ASSERT_EQ(sessions.size(), 1u);
  const wire::SessionSummary& s = sessions[0];
  EXPECT_EQ(s.session_id, opened->session_id);
  EXPECT_EQ(s.title, "task");
  EXPECT_GT(s.started_ms, 0);
  EXPECT_GE(s.updated_ms, s.started_ms);
  EXPECT_EQ(s.records, 8);
  EXPECT_EQ(s.turns, 2);
  EXPECT_EQ(s.cost_usd, std::nullopt);
  EXPECT_FALSE(s.untrusted);
  EXPECT_TRUE(s.attached);
}

TEST(Daemon, TheCostReportCarriesThePerTurnBudget) {
  DaemonHarness h(noop_cassette(), [](DaemonOptions& o) {
    o.turns.max_cost_usd = 0.5;
    o.turns.max_turns = 12;
  });
  auto c = h.connect();
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->open("").ok());
  ASSERT_TRUE(c->send(wire::CostQuery{}).ok());
  auto cost = c->receive();
  ASSERT_TRUE(cost && cost->ok());
  const auto& report = std::get<wire::CostReport>(*cost->frame);
  EXPECT_EQ(report.max_cost_usd, 0.5);
  EXPECT_EQ(report.max_turns, 12);
  EXPECT_EQ(report.max_time_s, std::nullopt);
}

// Holds the calls of the tool it wraps while the test keeps the gate shut: a turn in such a
// call keeps its worker busy for as long as the test needs. A cancelled turn passes it, and so
// does every call after a minute, so that a test that fails to open the gate ends.
struct Gate {
  std::atomic<bool> shut{false};
  std::atomic<bool> holding{false};  // a call waits at the gate now
};

class GatedTool final : public tools::Tool {
 public:
  GatedTool(std::shared_ptr<tools::Tool> inner, std::shared_ptr<Gate> gate)
      : inner_(std::move(inner)), gate_(std::move(gate)) {}
  std::string name() const override { return inner_->name(); }
  std::string description() const override { return inner_->description(); }
  Json input_schema() const override { return inner_->input_schema(); }
  bool read_only() const override { return inner_->read_only(); }
  tools::Capabilities capabilities() const override { return inner_->capabilities(); }
  tools::ToolOutput call(const Json& input, tools::ToolContext& ctx) override {
    gate_->holding = true;
    (void)mecha::testing::wait_until(
        [&] { return !gate_->shut || (ctx.cancel != nullptr && ctx.cancel->cancelled()); },
        std::chrono::minutes(1));
    gate_->holding = false;
    return inner_->call(input, ctx);
  }

 private:
  std::shared_ptr<tools::Tool> inner_;
  std::shared_ptr<Gate> gate_;
};

// The frames of a history replay up to and including history_done; what came before the
// daemon closed the connection or sent a bad frame, or before the deadline, otherwise.
std::vector<wire::Frame> read_replay(Client& c) {
  ReceiveDeadline deadline(c, "history_done");
  std::vector<wire::Frame> frames;
  while (auto d = c.receive()) {
    EXPECT_TRUE(d->ok()) << d->error.message;
    if (!d->ok()) break;
    frames.push_back(*d->frame);
    if (std::holds_alternative<wire::HistoryDone>(frames.back())) break;
  }
  return frames;
}

// A client that resumes a session (the web gateway) shows what was said before: the past
// turns come back as the frames a live turn sends, each closed by turn_done.
TEST(Daemon, HistoryReplaysThePastTurnsOfAResumedSessionAsTheirFrames) {
  std::string cassette =
      cassette_header() +
      cassette_line(Json::array({text_block("first answer")}), "end_turn", 5, 1) +
      cassette_line(Json::array({tool_use("t1", "Fetch", {{"url", "http://x"}})}), "tool_use", 5,
                    1) +
      cassette_line(Json::array({text_block("read it")}), "end_turn", 5, 1);
  auto gate = std::make_shared<Gate>();
  // One worker, so that a turn held at the gate keeps a replay waiting behind it (below).
  DaemonHarness h(
      cassette, [](DaemonOptions& o) { o.workers = 1; },
      [gate](testing::HarnessRun& run) {
        auto others = run.tools.subset({"Noop", "ReadSecret", "Send"});
        ASSERT_TRUE(others.ok()) << others.message();
        run.tools = std::move(*others);
        ASSERT_TRUE(run.tools.add(std::make_shared<GatedTool>(testing::fetch_tool(), gate)).ok());
      });
  std::string id;
  {
    auto c = h.connect();
    ASSERT_TRUE(c);
    auto opened = c->open("");
    ASSERT_TRUE(opened.ok());
    id = opened->session_id;
    testing::run_turn(*c, "hello there");
    testing::run_turn(*c, "fetch it");
    ASSERT_TRUE(c->open("").ok());  // lets the session go before the next connection asks
  }
  auto c = h.connect();
  ASSERT_TRUE(c);
  auto resumed = c->open(id);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  ASSERT_TRUE(c->send(wire::History{}).ok());
  const std::vector<wire::Frame> frames = read_replay(*c);
  ASSERT_EQ(frames.size(), 9u) << dump(frames);
  EXPECT_EQ(std::get<wire::PastTurn>(frames[0]).text, "hello there");
  EXPECT_EQ(std::get<wire::Text>(frames[1]), (wire::Text{"main", "first answer"}));
  EXPECT_EQ(std::get<wire::TurnDone>(frames[2]),
            (wire::TurnDone{"first answer", Usage{5, 1, 0, 0}, false}));
  EXPECT_EQ(std::get<wire::PastTurn>(frames[3]).text, "fetch it");
  EXPECT_EQ(std::get<wire::ToolCall>(frames[4]).name, "Fetch");
  const auto& result = std::get<wire::ToolResult>(frames[5]);
  EXPECT_EQ(result.id, "t1");
  EXPECT_TRUE(result.untrusted);
  EXPECT_EQ(std::get<wire::Text>(frames[6]).text, "read it");
  EXPECT_EQ(std::get<wire::TurnDone>(frames[7]),
            (wire::TurnDone{"read it", Usage{10, 2, 0, 0}, true}));
  EXPECT_EQ(std::get<wire::HistoryDone>(frames[8]).turns, 2);

  // A turn is refused while history replays. The replay runs on a worker, which may finish it
  // before the turn arrives however soon after it is sent; so the daemon's only worker is held
  // at the gate by another session's turn until the refusal has come.
  auto other = h.connect();
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->open("").ok());
  testing::run_turn(*other, "hello");  // its next turn calls Fetch
  gate->shut = true;
  std::vector<wire::Frame> held;
  std::thread holder([&] { held = testing::run_turn(*other, "fetch"); });
  EXPECT_TRUE(
      mecha::testing::wait_until([&] { return gate->holding.load(); }, std::chrono::seconds(20)))
      << "the other session's turn never reached its Fetch";
  EXPECT_TRUE(c->send(wire::History{}).ok());
  EXPECT_TRUE(c->send(wire::UserTurn{"x"}).ok());
  std::optional<wire::Decoded> refusal;
  {
    ReceiveDeadline deadline(*c, "the refusal of a turn sent while history replays");
    refusal = c->receive();
  }
  gate->shut = false;
  holder.join();
  ASSERT_TRUE(refusal && refusal->ok());
  EXPECT_EQ(std::get<wire::Error>(*refusal->frame),
            (wire::Error{std::string(wire::codes::kTurnRunning),
                         "a turn is running in session " + id +
                             ": wait for its turn_done or cancel it first"}))
      << "a turn is refused while history replays";
  ASSERT_FALSE(held.empty());
  EXPECT_EQ(std::get<wire::TurnDone>(held.back()).content, "read it");
  // The replay goes on once the worker is free...
  EXPECT_EQ(dump(read_replay(*c)), dump(frames));
  // ...and the session takes a turn the moment history_done has arrived.
  EXPECT_EQ(dump(testing::run_turn(*c, "again")),
            dump({wire::Text{"main", "first answer"},
                  wire::TurnDone{"first answer", Usage{5, 1, 0, 0}, true}}));
}

// The lock files of the store's sessions, by name.
std::vector<std::string> lock_files(const std::filesystem::path& store_path) {
  std::filesystem::path dir = store_path;
  dir += "-locks";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Polls until the store has `want` lock files or 10 s passed; returns the last listing.
std::vector<std::string> await_lock_files(const std::filesystem::path& store_path, size_t want) {
  std::vector<std::string> names;
  (void)mecha::testing::wait_until(
      [&] {
        names = lock_files(store_path);
        return names.size() == want;
      },
      std::chrono::seconds(10));
  return names;
}

// Regression: the daemon left one lock file per session (34,000 after a minute of load).
TEST(Daemon, ASessionClosedByTheNextOpenOrAHangUpLeavesNoLockFile) {
  DaemonHarness h(noop_cassette());
  auto c = h.connect();
  ASSERT_TRUE(c);
  std::string last;
  for (int i = 0; i < 30; ++i) {
    auto opened = c->open("");
    ASSERT_TRUE(opened.ok()) << opened.message();
    last = opened->session_id;
    if (i % 3 == 0) testing::run_turn(*c, "task");
  }
  EXPECT_EQ(await_lock_files(h.store_path(), 1), std::vector<std::string>{last + ".lock"});
  c.reset();  // hang up: the daemon, still running, closes the session
  EXPECT_EQ(await_lock_files(h.store_path(), 0), std::vector<std::string>{});

  auto again = h.connect();  // and the session opens again
  ASSERT_TRUE(again);
  auto resumed = again->open(last);
  ASSERT_TRUE(resumed.ok()) << resumed.message();
  EXPECT_EQ(await_lock_files(h.store_path(), 1), std::vector<std::string>{last + ".lock"});
  ASSERT_TRUE(h.stop().ok());
}

}  // namespace
}  // namespace mecha::server
