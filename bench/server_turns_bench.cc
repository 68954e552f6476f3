// Turns per second through the daemon: C clients, each on its own session, each running T
// turns back to back; every turn is two model calls replayed from a cassette and one call
// of a no-op tool, and every turn's records are committed (fsynced) to the session store
// before its turn_done. The daemon runs in this process, on a real Unix socket.
//
// Usage: server_turns_bench [--turns T] [--clients C,C,...]
// The store lives under $TMPDIR (default /tmp): TMPDIR=/dev/shm measures without disk syncs.
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

int main(int argc, char** argv) {
  int turns = 100;
  std::vector<int> clients = {1, 8, 32};
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--turns") turns = std::stoi(argv[++i]);
    if (std::string(argv[i]) == "--clients") {
      clients.clear();
      std::stringstream s(argv[++i]);
      for (std::string x; std::getline(s, x, ',');) clients.push_back(std::stoi(x));
    }
  }
  std::string cassette = cassette_header();
  for (int t = 0; t < turns; ++t) {
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
  return 0;
}
