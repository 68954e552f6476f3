// Memory per idle session of `mecha serve`: starts the daemon as its own process, opens
// 1,000 sessions on 1,000 connections and holds them, and reports the growth of the
// daemon's resident set (VmRSS) divided by the number of sessions. Target: < 200 KB.
//
// Usage: server_idle_bench [--sessions N] [--mecha PATH]
// (default PATH: the mecha binary beside this program's directory, i.e. build/mecha)
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/client.h"
#include "store/testing/temp_dir.h"

namespace fs = std::filesystem;
using namespace mecha;

namespace {

long rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int sessions = 1000;
  fs::path mecha = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--sessions")
      sessions = std::stoi(argv[++i]);
    else if (std::string(argv[i]) == "--mecha")
      mecha = argv[++i];
  }
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  store::testing::TempDir dir;
  const fs::path socket = dir.path() / "d.sock";
  std::ofstream(dir.path() / "c.jsonl")
      << R"({"mecha_cassette": 1, "note": "idle"})"
         "\n"
      << R"({"response": {"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}})"
         "\n";
  const std::string model = "cassette:" + (dir.path() / "c.jsonl").string();
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    const std::string store = (dir.path() / "sessions.db").string();  // not the user's
    execl(mecha.c_str(), "mecha", "serve", "--socket", socket.c_str(), "--model", model.c_str(),
          "-C", dir.path().c_str(), "--store", store.c_str(), nullptr);
    _exit(127);
  }
  std::unique_ptr<server::Client> probe;
  for (int i = 0; i < 200 && !probe; ++i) {
    if (auto c = server::Client::connect(socket, "bench"); c.ok())
      probe = std::move(*c);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!probe) {
    std::fprintf(stderr, "mecha serve did not start (%s)\n", mecha.c_str());
    return 1;
  }
  // Warm up: one session opened and closed, so first-use allocations are not counted.
  (void)probe->open("");
  probe.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const long before = rss_kb(pid);

  std::vector<std::unique_ptr<server::Client>> held;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < sessions; ++i) {
    auto c = server::Client::connect(socket, "bench");
    if (!c.ok()) {
      std::fprintf(stderr, "connection %d: %s\n", i, c.message().c_str());
      break;
    }
    auto opened = (*c)->open("");
    if (!opened.ok()) {
      std::fprintf(stderr, "session %d: %s\n", i, opened.message().c_str());
      break;
    }
    held.push_back(std::move(*c));
  }
  const double open_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long after = rss_kb(pid);

  std::printf("idle sessions open:        %zu\n", held.size());
  std::printf("daemon RSS before:         %ld KB\n", before);
  std::printf("daemon RSS with sessions:  %ld KB\n", after);
  std::printf("memory per idle session:   %.1f KB (target < 200 KB)\n",
              held.empty() ? 0.0 : double(after - before) / double(held.size()));
  std::printf("time to open them:         %.2f s (%.1f ms per session, store fsync included)\n",
              open_s, held.empty() ? 0.0 : open_s * 1000 / double(held.size()));
  held.clear();
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  return 0;
}
