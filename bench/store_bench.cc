// The session store's costs: appending one record, and a step of records made durable
// (median and p99), reopening a session of 100,000 records, and listing 10,000 sessions (in
// the library, and through `mecha sessions list` as a whole process).
//
//   ninja -C build store_bench mecha && ./build/bench/store_bench
//
// Stores live in a temp dir on the same file system as $TMPDIR; fsync costs depend on it.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "store/conversation_log.h"
#include "store/session_store.h"
#include "store/sqlite.h"

namespace mecha::store {
namespace {

// Temp dirs made by the benchmarks, removed when the process exits.
struct TempDirs {
  std::vector<std::filesystem::path> dirs;
  ~TempDirs() {
    for (const auto& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};
TempDirs temp_dirs;

std::filesystem::path make_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  temp_dirs.dirs.push_back(tmpl);
  return tmpl;
}

void check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::abort();
  }
}

// The n-th record of a typical run: prompt, then rounds of usage, an assistant message with
// a tool call, the call, and its result of a few hundred bytes.
Record typical_record(int64_t n) {
  if (n == 0) return Record::user_message(Message::user_text("fix the failing test in src/"));
  std::string id = fmt::format("toolu_{:08}", n / 4);
  switch (n % 4) {
    case 0:
      return Record::usage("main", "claude-sonnet-4-5", Usage{12000, 300, 9000, 0}, 0.04);
    case 1:
      return Record::assistant_message(
          "main", Message{Role::kAssistant,
                          {TextBlock{"Let me look at the test output first."},
                           ToolUseBlock{id, "Bash", Json{{"command", "ctest -R store"}}, "", ""}}});
    case 2:
      return Record::tool_call("main", id, "Bash", Json{{"command", "ctest -R store"}});
    default:
      return Record::tool_result("main", id, false, false,
                                 std::string(300, 'x') + "\n100% tests passed, 0 tests failed");
  }
}

// Writes `count` records into session `id` in one transaction, as the store would have.
void bulk_fill(const std::filesystem::path& db_path, const std::string& id, int64_t count) {
  auto db = Database::open(db_path, 10000);
  check(db.status());
  auto tx = Transaction::begin(*db);
  check(tx.status());
  auto ins =
      db->prepare("INSERT INTO records(session_id, seq, at_ms, kind, body) VALUES(?, ?, ?, ?, ?)");
  check(ins.status());
  SessionSummary sum;
  std::vector<Record> all;
  for (int64_t i = 0; i < count; ++i) {
    Record r = typical_record(i);
    ins->bind(1, id);
    ins->bind(2, i + 1);
    ins->bind(3, int64_t{1'780'000'000'000} + i);
    ins->bind(4, record_kind_name(r.kind));
    ins->bind(5, r.body.dump());
    check(ins->run());
    all.push_back(std::move(r));
  }
  summarize(all, &sum);
  auto upd = db->prepare(
      "UPDATE sessions SET records = ?, turns = ?, cost_usd = ?, priced_calls = ? WHERE id = ?");
  check(upd.status());
  upd->bind(1, sum.records);
  upd->bind(2, sum.turns);
  upd->bind(3, sum.cost_usd);
  upd->bind(4, sum.priced_calls);
  upd->bind(5, id);
  check(upd->run());
  check(tx->commit());
}

void report_percentiles(benchmark::State& state, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["max_us"] = us.back();
}

// Appending one record: committed (safe from a killed process) when append() returns, not
// yet synced.
void BM_AppendRecord(benchmark::State& state) {
  auto dir = make_temp_dir();
  auto st = SessionStore::open(dir / "sessions.db");
  check(st.status());
  auto session = (*st)->create("bench");
  check(session.status());
  std::vector<double> us;
  int64_t n = 0;
  for (auto _ : state) {
    Record r = typical_record(n++);
    auto t0 = std::chrono::steady_clock::now();
    auto seq = (*session)->append(std::move(r));
    auto t1 = std::chrono::steady_clock::now();
    check(seq.status());
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  report_percentiles(state, std::move(us));
}
BENCHMARK(BM_AppendRecord)->Iterations(1000)->Unit(benchmark::kMicrosecond);

// A step's records made durable: `records` appends, then one sync (range(0) = 1 is what
// every record cost when each append was its own fsynced commit).
void BM_DurableStep(benchmark::State& state) {
  auto dir = make_temp_dir();
  auto st = SessionStore::open(dir / "sessions.db");
  check(st.status());
  auto session = (*st)->create("bench");
  check(session.status());
  std::vector<double> us;
  int64_t n = 0;
  const int64_t before = (*st)->flushes();
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < state.range(0); ++i)
      check((*session)->append(typical_record(n++)).status());
    check((*session)->sync());
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  state.counters["flushes_per_step"] =
      static_cast<double>((*st)->flushes() - before) / static_cast<double>(us.size());
  report_percentiles(state, std::move(us));
}
BENCHMARK(BM_DurableStep)->Arg(1)->Arg(5)->Iterations(300)->Unit(benchmark::kMicrosecond);

struct BigSession {
  std::filesystem::path dir;
  std::string id;
};

const BigSession& big_session() {
  static const BigSession big = [] {
    BigSession b;
    b.dir = make_temp_dir();
    auto st = SessionStore::open(b.dir / "sessions.db");
    check(st.status());
    auto s = (*st)->create("a long session");
    check(s.status());
    b.id = (*s)->id();
    s->reset();
    bulk_fill(b.dir / "sessions.db", b.id, 100'000);
    return b;
  }();
  return big;
}

// Opening the store and the session: every record read back and parsed, the lock taken.
void BM_ReopenSession100k(benchmark::State& state) {
  const BigSession& big = big_session();
  for (auto _ : state) {
    auto st = SessionStore::open(big.dir / "sessions.db");
    check(st.status());
    auto s = (*st)->open_session(big.id);
    check(s.status());
    if ((*s)->record_count() != 100'000) std::abort();
    benchmark::DoNotOptimize((*s)->untrusted());
  }
}
BENCHMARK(BM_ReopenSession100k)->Unit(benchmark::kMillisecond)->MinTime(3);

// The same, and the conversation rebuilt for the model (what --resume does).
void BM_ReopenAndRebuild100k(benchmark::State& state) {
  const BigSession& big = big_session();
  for (auto _ : state) {
    auto st = SessionStore::open(big.dir / "sessions.db");
    check(st.status());
    auto s = (*st)->open_session(big.id);
    check(s.status());
    auto conv = (*s)->conversation();
    check(conv.status());
    benchmark::DoNotOptimize(conv->size());
  }
}
BENCHMARK(BM_ReopenAndRebuild100k)->Unit(benchmark::kMillisecond)->MinTime(3);

const std::filesystem::path& many_sessions() {
  static const std::filesystem::path path = [] {
    auto dir = make_temp_dir();
    auto st = SessionStore::open(dir / "sessions.db");
    check(st.status());
    st->reset();
    auto db = Database::open(dir / "sessions.db", 10000);
    check(db.status());
    auto tx = Transaction::begin(*db);
    check(tx.status());
    auto ins = db->prepare(
        "INSERT INTO sessions(id, started_ms, updated_ms, title, records, turns, cost_usd, "
        "priced_calls, untrusted) VALUES(?, ?, ?, ?, 40, 10, 0.37, 10, ?)");
    check(ins.status());
    for (int i = 0; i < 10'000; ++i) {
      ins->bind(1, fmt::format("20261129-{:06}-abcd", i));
      ins->bind(2, int64_t{1'780'000'000'000} + i * 1000);
      ins->bind(3, int64_t{1'780'000'000'000} + i * 1000 + 500);
      ins->bind(4, fmt::format("task number {}: fix the failing test in the store layer", i));
      ins->bind(5, int64_t{i % 7 == 0});
      check(ins->run());
    }
    check(tx->commit());
    return dir / "sessions.db";
  }();
  return path;
}

void BM_List10kSessions(benchmark::State& state) {
  auto st = SessionStore::open(many_sessions());
  check(st.status());
  for (auto _ : state) {
    auto all = (*st)->list();
    check(all.status());
    if (all->size() != 10'000) std::abort();
  }
}
BENCHMARK(BM_List10kSessions)->Unit(benchmark::kMillisecond);

// The whole `mecha sessions list --store PATH` process (start, open, list, print table).
void BM_SessionsListCommand10k(benchmark::State& state) {
  std::filesystem::path mecha =
      std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  if (!std::filesystem::exists(mecha)) {
    state.SkipWithError("build the mecha binary first (ninja -C build mecha)");
    return;
  }
  const std::string store = many_sessions().string();
  double child_cpu_ms = 0;
  for (auto _ : state) {
    pid_t pid = fork();
    if (pid == 0) {
      freopen("/dev/null", "w", stdout);
      execl(mecha.c_str(), "mecha", "sessions", "list", "--store", store.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    wait4(pid, &status, 0, &usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
    child_cpu_ms += (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                    (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  }
  // The process's own CPU time (user + system): what it costs on an idle machine.
  state.counters["child_cpu_ms"] =
      benchmark::Counter(child_cpu_ms, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SessionsListCommand10k)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace mecha::store

BENCHMARK_MAIN();
