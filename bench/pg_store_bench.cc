// The PostgreSQL session store beside the SQLite one: appends per second, on a throwaway
// cluster this bench starts (testing/pg_cluster.h, with fsync on, over a Unix socket).
//
//   ninja -C build pg_store_bench && ./build/bench/pg_store_bench
//
// BM_AppendCommitted/<backend>: appends alone, each committed when it returns (safe from a
// killed process), synced only at the end. BM_Append/<backend>: each thread is a writer with a
// session of its own and a store of its own (as separate processes are), appending typical records
// and syncing once per step of 5 (what a run does). BM_AppendSyncedEach/<backend>: a sync after
// every record, what each append would cost if every commit waited for the disk. Backend 0 is
// SQLite, 1 PostgreSQL. items_per_second is appends per second, all threads together.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "store/open_store.h"
#include "store/testing/pg_cluster.h"

namespace mecha::store {
namespace {

void check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.message().c_str());
    std::abort();
  }
}

// The stores the benchmarks write to: made once, removed when the process exits.
struct Stores {
  std::filesystem::path dir;
  std::unique_ptr<testing::PgCluster> cluster;
  std::string postgres;
  Stores() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir = tmpl;
    auto started = testing::PgCluster::start({.fsync = true});
    check(started.status());
    cluster = std::move(*started);
    auto url = cluster->fresh_store();
    check(url.status());
    postgres = *url;
  }
  ~Stores() {
    cluster.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string spec(int64_t backend) const {
    return backend == 0 ? (dir / "sessions.db").string() : postgres;
  }
};

const Stores& stores() {
  static Stores s;
  return s;
}

Record typical_record(int64_t n) {
  switch (n % 4) {
    case 0:
      return Record::usage("main", "claude-sonnet-4-5", Usage{12000, 300, 9000, 0}, 0.04);
    case 1:
      return Record::note("main", "Let me look at the test output first.");
    case 2:
      return Record::tool_call("main", "toolu_1", "Bash", Json{{"command", "ctest -R store"}});
    default:
      return Record::tool_result("main", "toolu_1", false, false,
                                 std::string(300, 'x') + "\n100% tests passed, 0 tests failed");
  }
}

void run_appends(benchmark::State& state, int64_t records_per_sync) {
  if (std::string why = testing::PgCluster::unavailable(); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  static std::mutex setup;  // the first thread starts the cluster, the others wait for it
  std::string spec;
  {
    std::lock_guard<std::mutex> lock(setup);
    spec = stores().spec(state.range(0));
  }
  auto store = open_store(spec);
  check(store.status());
  check((*store)->prepare_sync());
  auto session = (*store)->create(fmt::format("bench thread {}", state.thread_index()));
  check(session.status());
  int64_t n = 0;
  for (auto _ : state) {
    check((*session)->append(typical_record(n++)).status());
    if (n % records_per_sync == 0) check((*session)->sync());
  }
  check((*session)->sync());
  state.SetItemsProcessed(state.iterations());
}

void BM_AppendCommitted(benchmark::State& state) { run_appends(state, 1'000'000'000); }
BENCHMARK(BM_AppendCommitted)->Arg(0)->Arg(1)->Threads(1)->UseRealTime()->MinTime(2);

void BM_Append(benchmark::State& state) { run_appends(state, 5); }
BENCHMARK(BM_Append)->Arg(0)->Arg(1)->Threads(1)->Threads(4)->UseRealTime()->MinTime(2);

void BM_AppendSyncedEach(benchmark::State& state) { run_appends(state, 1); }
BENCHMARK(BM_AppendSyncedEach)->Arg(0)->Arg(1)->Threads(1)->Threads(4)->UseRealTime()->MinTime(2);

}  // namespace
}  // namespace mecha::store

BENCHMARK_MAIN();
