// Turns per second through the daemon: C clients, each on its own session, each running T
// turns back to back; every turn is two model calls replayed from a cassette and one call
// of a no-op tool, and every turn's records are committed (fsynced) to the session store
// before its turn_done. The daemon runs in this process, on a real Unix socket.
//
// Then one session of S turns (default 2,000) on one connection: the cost of a turn at turns
// 10, 100, 1,000 and S (the median of the turns around each), which should stay flat since
// the daemon keeps the session's conversation in memory (server/live_session.h).
//
// Usage: server_turns_bench [--turns T] [--clients C,C,...] [--session-turns S]
// The store lives under $TMPDIR (default /tmp): TMPDIR=/dev/shm measures without disk syncs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/testing/daemon_harness.h"

using namespace mecha;
using server::testing::cassette_header;
using server::testing::cassette_line;

// The median of the turn times in [from, to).
double median_ms(std::vector<double> ms, int from, int to) {
  from = std::max(from, 0);
  to = std::min(to, static_cast<int>(ms.size()));
  std::vector<double> window(ms.begin() + from, ms.begin() + to);
  std::nth_element(window.begin(), window.begin() + window.size() / 2, window.end());
  return window[window.size() / 2];
}

int one_long_session(const std::string& cassette, int turns) {
  server::testing::DaemonHarness h(cassette);
  auto conn = h.connect();
  if (!conn || !conn->open("").ok()) return 1;
  std::vector<double> ms;
  ms.reserve(turns);
  for (int t = 0; t < turns; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    auto frames = server::testing::run_turn(*conn, "go");
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (frames.empty() || !std::holds_alternative<wire::TurnDone>(frames.back())) {
      std::fprintf(stderr, "turn %d did not finish\n", t + 1);
      return 1;
    }
  }
  std::printf("\none session, %d turns (each: a tool call and an answer, 6 records)\n", turns);
  std::printf("%-8s %-16s %-10s\n", "turn", "ms/turn (median)", "vs turn 10");
  const double base = median_ms(ms, 0, 21);
  for (int at : {10, 100, 1000, turns}) {
    if (at > turns) continue;
    const double m = median_ms(ms, at - 11, at + 10);
    std::printf("%-8d %-16.3f %-+10.1f%%\n", at, m, 100.0 * (m - base) / base);
  }
  return 0;
}

int main(int argc, char** argv) {
  int turns = 100;
  int session_turns = 2000;
  std::vector<int> clients = {1, 8, 32};
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--turns") turns = std::stoi(argv[++i]);
    if (std::string(argv[i]) == "--session-turns") session_turns = std::stoi(argv[++i]);
    if (std::string(argv[i]) == "--clients") {
      clients.clear();
      std::stringstream s(argv[++i]);
      for (std::string x; std::getline(s, x, ',');) clients.push_back(std::stoi(x));
    }
  }
  const int lines = std::max(turns, session_turns);
  std::string cassette = cassette_header();
  for (int t = 0; t < lines; ++t) {
    cassette += cassette_line(Json::array({Json{{"type", "tool_use"},
                                                {"id", "t" + std::to_string(t)},
                                                {"name", "Noop"},
                                                {"input", Json::object()}}}),
                              "tool_use", 10, 2);
    cassette +=
        cassette_line(Json::array({Json{{"type", "text"}, {"text", "done"}}}), "end_turn", 12, 1);
  }
  std::printf("%-8s %-8s %-10s %-12s\n", "clients", "turns", "seconds", "turns/s");
  for (int c : clients) {
    server::testing::DaemonHarness h(cassette,
                                     [c](server::DaemonOptions& o) { o.workers = std::max(c, 1); });
    std::vector<std::unique_ptr<server::Client>> conns;
    for (int i = 0; i < c; ++i) {
      conns.push_back(h.connect());
      if (!conns.back() || !conns.back()->open("").ok()) return 1;
    }
    std::atomic<int> done{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < c; ++i) {
      threads.emplace_back([&, i] {
        for (int t = 0; t < turns; ++t) {
          auto frames = server::testing::run_turn(*conns[i], "go");
          if (!frames.empty() && std::holds_alternative<wire::TurnDone>(frames.back())) ++done;
        }
      });
    }
    for (auto& t : threads) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-8d %-8d %-10.2f %-12.1f\n", c, done.load(), s, done.load() / s);
  }
  return session_turns > 0 ? one_long_session(cassette, session_turns) : 0;
}
