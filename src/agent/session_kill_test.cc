// Resume after SIGKILL at random moments: a child process resumes one session and runs a
// cassette in it, reporting each record's seq on a pipe once append() has returned; the
// parent kills it at a random time. After every kill, every acknowledged record is in the
// store with the same body, the store reopens cleanly, and the rebuilt conversation passes
// check_pairing. The same session is resumed by the next child, so the kills pile up in
// one log.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include <fmt/format.h>

#include "agent/agent.h"
#include "agent/session_journal.h"
#include "providers/cassette.h"
#include "store/conversation_log.h"
#include "store/testing/temp_dir.h"

namespace mecha::agent {
namespace {

constexpr int kKills = 200;

class SlowEcho final : public tools::Tool {
 public:
  std::string name() const override { return "Echo"; }
  std::string description() const override { return "Echoes."; }
  Json input_schema() const override { return Json{{"type", "object"}}; }
  bool read_only() const override { return true; }
  tools::Capabilities capabilities() const override { return {true, false, false}; }
  tools::ToolOutput call(const Json& input, tools::ToolContext&) override {
    // A call that takes time, so that some kills land inside a tool call.
    std::this_thread::sleep_for(std::chrono::microseconds(input.value("sleep_us", 0)));
    tools::ToolOutput out = tools::ToolOutput::ok(input.dump());
    out.external = input.value("external", false);
    return out;
  }
};

// What the child reports for each committed record.
struct Ack {
  int64_t seq;
  uint64_t hash;
};

uint64_t hash_of(const store::Record& r) {
  return std::hash<std::string>{}(
      fmt::format("{}|{}", store::record_kind_name(r.kind), r.body.dump()));
}

// Three model calls with 2, 1 and 3 tool calls, then an answer. Ids are unique per run.
std::string cassette_for(int run, std::mt19937& rng) {
  std::string text = "{\"mecha_cassette\": 1}\n";
  int n = 0;
  for (int calls : {2, 1, 3}) {
    Json content = Json::array({{{"type", "text"}, {"text", fmt::format("step {}", n)}}});
    for (int c = 0; c < calls; ++c) {
      content.push_back({{"type", "tool_use"},
                         {"id", fmt::format("r{}c{}", run, n++)},
                         {"name", "Echo"},
                         {"input", {{"sleep_us", rng() % 3000}, {"external", rng() % 4 == 0}}}});
    }
    text +=
        Json{{"response", {{"content", content}, {"usage", {{"input_tokens", 3}}}}}}.dump() + "\n";
  }
  text += R"({"response": {"content": [{"type": "text", "text": "done"}]}})"
          "\n";
  return text;
}

// The child: resume the session, append the prompt, run the cassette. Exit code 0 when the
// run completed; never returns.
[[noreturn]] void child(const std::filesystem::path& db, const std::string& id, int run,
                        const std::string& cassette_text, int ack_fd) {
  auto st = store::SessionStore::open(db);
  if (!st) _exit(10);
  auto session = (*st)->open_session(id);
  if (!session) _exit(11);
  (*session)->set_commit_observer([ack_fd](const store::Record& r) {
    Ack a{r.seq, hash_of(r)};
    if (write(ack_fd, &a, sizeof a) != sizeof a) _exit(12);
  });
  auto appended = (*session)->append(
      store::Record::user_message(Message::user_text(fmt::format("go {}", run))));
  if (!appended) _exit(13);
  auto messages = (*session)->conversation();
  if (!messages || !check_pairing(*messages).ok()) _exit(14);
  auto provider = providers::CassetteProvider::parse(cassette_text, "kill.cassette");
  if (!provider) _exit(15);
  tools::ToolRegistry registry;
  if (!registry.add(std::make_shared<SlowEcho>()).ok()) _exit(16);
  Agent agent(AgentSpec{}, std::shared_ptr<providers::Provider>(std::move(*provider)),
              std::move(registry));
  Conversation conv(std::move(*messages));
  SessionJournal journal(session->get());
  RunContext ctx;
  ctx.journal = &journal;
  Outcome o = agent.run(ctx, conv, nullptr);
  _exit(o.status == RunStatus::kCompleted ? 0 : 20);
}

TEST(SessionKill, EveryAcknowledgedRecordSurvivesSigkillAndResumeStaysValid) {
  store::testing::TempDir dir;
  const auto db = dir.path() / "sessions.db";
  std::string id;
  {
    auto st = store::SessionStore::open(db);
    ASSERT_TRUE(st.ok()) << st.message();
    auto s = (*st)->create("killed again and again");
    ASSERT_TRUE(s.ok());
    id = (*s)->id();
  }
  std::mt19937 rng(20261129);
  std::map<int64_t, uint64_t> acked;  // every acknowledged record so far
  int completed = 0;
  // Run -1 is not killed: it measures how long a whole run takes here, so the kills can be
  // spread over the same span on a fast disk or a slow one.
  int64_t span_us = 0;
  for (int run = -1; run < kKills; ++run) {
    std::string cassette_text = cassette_for(run, rng);
    auto started = std::chrono::steady_clock::now();
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child(db, id, run, cassette_text, fds[1]);
    }
    close(fds[1]);
    if (run >= 0) {
      // The kill lands at a random moment of the run: the time is what is tested.
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % (span_us + 1)));
      kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (run < 0) {
      // At most 120 ms, to keep the test short on a slow disk (kills then land earlier).
      span_us = std::min<int64_t>(120'000, std::chrono::duration_cast<std::chrono::microseconds>(
                                               std::chrono::steady_clock::now() - started)
                                               .count());
    }
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0) << "run " << run;
      if (run >= 0) ++completed;
    }
    Ack a;
    while (read(fds[0], &a, sizeof a) == sizeof a) acked[a.seq] = a.hash;
    close(fds[0]);

    auto st = store::SessionStore::open(db);
    ASSERT_TRUE(st.ok()) << "after kill " << run << ": " << st.message();
    auto records = (*st)->read_records(id);
    ASSERT_TRUE(records.ok()) << "after kill " << run << ": " << records.message();
    for (const auto& [seq, hash] : acked) {
      ASSERT_LE(seq, static_cast<int64_t>(records->size())) << "after kill " << run;
      ASSERT_EQ(hash_of((*records)[seq - 1]), hash) << "record " << seq << ", kill " << run;
    }
    auto conv = store::rebuild_conversation(*records);
    ASSERT_TRUE(conv.ok()) << conv.message();
    Status pairing = check_pairing(*conv);
    ASSERT_TRUE(pairing.ok()) << "after kill " << run << ": " << pairing.message();
  }
  // The kills landed inside the runs, not all before or after them. How many records a run
  // writes before its kill depends on the machine (a sanitizer build starts slowly), so this
  // asks only that some were written, not how many.
  EXPECT_GT(acked.size(), 0u);
  EXPECT_LT(completed, kKills / 2);
  std::printf(
      "%d kills over %lld us, %d runs completed before their kill, %zu records acknowledged\n",
      kKills, static_cast<long long>(span_us), completed, acked.size());
}

}  // namespace
}  // namespace mecha::agent
