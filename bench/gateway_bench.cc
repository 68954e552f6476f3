// The web gateway's targets (issue 20): what the page weighs, what an idle gateway holds in
// memory, and what the gateway adds to a turn's frames.
//
// Starts `mecha serve` (a cassette that answers "hi") and `mecha gateway` as their own
// processes, then:
//   - page weight: the bytes of /, /app.js and /app.css as served (target < 100 KB);
//   - idle memory: the gateway's VmRSS after the page was loaded and one session opened and
//     answered, then left idle (target < 10 MB);
//   - latency: the median time from asking for a turn to its turn_done, straight over the
//     wire and through the gateway (POST the turn, turn_done read from the event stream);
//     the difference is what the gateway adds (target < 1 ms).
//
// Usage: gateway_bench [--turns N] [--mecha PATH]   (default PATH: build/mecha)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "base/strict_json.h"
#include "server/client.h"
#include "store/testing/temp_dir.h"

namespace fs = std::filesystem;
using namespace mecha;
using Clock = std::chrono::steady_clock;

namespace {

// A field of /proc/PID/status in KB ("VmRSS", "RssAnon", "RssFile").
long status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Starts `argv`; its stdout comes back through *out_fd.
pid_t spawn(const std::vector<std::string>& argv, int* out_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    (void)!freopen("/dev/null", "w", stderr);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int turns = 200;
  fs::path mecha = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--turns")
      turns = std::stoi(argv[++i]);
    else if (std::string(argv[i]) == "--mecha")
      mecha = argv[++i];
  }
  store::testing::TempDir dir;
  {
    std::ofstream cassette(dir.path() / "c.jsonl");
    cassette << R"({"mecha_cassette": 1, "note": "gateway bench"})"
             << "\n";
    for (int i = 0; i < turns + 10; ++i) {
      cassette << R"({"response": {"content": [{"type": "text", "text": "hi"}], )"
                  R"("stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}})"
               << "\n";
    }
  }
  const std::string socket = (dir.path() / "d.sock").string();
  int serve_out = -1;
  const pid_t serve = spawn({mecha.string(), "serve", "--socket", socket, "--model",
                             "cassette:" + (dir.path() / "c.jsonl").string(), "-C",
                             dir.path().string(), "--store", (dir.path() / "s.db").string()},
                            &serve_out);
  for (int i = 0; i < 200 && !fs::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int gateway_out = -1;
  const pid_t gateway = spawn(
      {mecha.string(), "gateway", "--listen", "127.0.0.1:0", "--socket", socket}, &gateway_out);
  std::string first_line;
  char c;
  while (read(gateway_out, &c, 1) == 1 && c != '\n') first_line += c;
  std::smatch m;
  if (!std::regex_search(first_line, m,
                         std::regex(R"(http://127\.0\.0\.1:(\d+)/login\?token=(\w+))"))) {
    std::fprintf(stderr, "mecha gateway did not start: \"%s\"\n", first_line.c_str());
    kill(serve, SIGTERM);
    return 1;
  }
  const int port = std::stoi(m[1]);
  const std::string token = m[2];
  const httplib::Headers auth{{"Authorization", "Bearer " + token}};
  httplib::Client http("127.0.0.1", port);

  size_t page_bytes = 0;
  for (const char* path : {"/", "/app.js", "/app.css"}) {
    auto r = http.Get(path, auth);
    if (r && r->status == 200) page_bytes += r->body.size();
  }

  // Idle: the page was loaded, nothing is open yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const long fresh_kb = status_kb(gateway, "VmRSS");
  const long fresh_anon_kb = status_kb(gateway, "RssAnon");

  // Through the gateway: POST the turn, read the stream until turn_done.
  auto opened = http.Post("/api/sessions", auth, "{}", "application/json");
  if (!opened || opened->status != 200) {
    std::fprintf(stderr, "could not open a session through the gateway\n");
    kill(gateway, SIGTERM);
    kill(serve, SIGTERM);
    return 1;
  }
  const std::string id = Json::parse(opened->body)["id"];
  std::vector<double> via_gateway;
  {
    httplib::Client stream("127.0.0.1", port);
    std::thread reader;
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    reader = std::thread([&] {
      std::string buffer;
      stream.Get(("/api/sessions/" + id + "/events").c_str(), auth, [&](const char* d, size_t n) {
        buffer.append(d, n);
        size_t at;
        while ((at = buffer.find("\n\n")) != std::string::npos) {
          if (buffer.substr(0, at).find("\"type\":\"turn_done\"") != std::string::npos) {
            std::lock_guard<std::mutex> lock(mu);
            ++done;
            cv.notify_all();
          }
          buffer.erase(0, at + 2);
        }
        return true;
      });
    });
    for (int i = 0; i < turns; ++i) {
      const auto t0 = Clock::now();
      http.Post(("/api/sessions/" + id + "/turn").c_str(), auth, R"({"text": "hello"})",
                "application/json");
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return done > i; });
      via_gateway.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    stream.stop();
    reader.join();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long idle_kb = status_kb(gateway, "VmRSS");
  const long anon_kb = status_kb(gateway, "RssAnon");
  const long file_kb = status_kb(gateway, "RssFile");

  // Straight over the wire, on a session of its own.
  std::vector<double> direct;
  auto client = server::Client::connect(socket, "bench");
  if (client.ok() && (*client)->open("").ok()) {
    for (int i = 0; i < turns; ++i) {
      const auto t0 = Clock::now();
      if (!(*client)->send(wire::UserTurn{"hello"}).ok()) break;
      while (auto d = (*client)->receive()) {
        if (d->ok() && std::holds_alternative<wire::TurnDone>(*d->frame)) break;
      }
      direct.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }

  const double g = median_ms(via_gateway);
  const double w = median_ms(direct);
  std::printf("page weight (/, app.js, app.css): %.1f KB (target < 100 KB)\n",
              double(page_bytes) / 1024);
  std::printf(
      "gateway idle RSS, page loaded:     %.1f MB (target < 10 MB), %.1f MB of it its own\n",
      double(fresh_kb) / 1024, double(fresh_anon_kb) / 1024);
  std::printf(
      "gateway RSS after the turns:      %.1f MB: %.1f MB its own (heap, stacks, the "
      "session's events), %.1f MB mapped files (its code, libc, libstdc++, OpenSSL)\n",
      double(idle_kb) / 1024, double(anon_kb) / 1024, double(file_kb) / 1024);
  std::printf("turn, straight over the wire:     %.3f ms median of %zu\n", w, direct.size());
  std::printf("turn, through the gateway:        %.3f ms median of %zu\n", g, via_gateway.size());
  std::printf("added by the gateway:             %.3f ms (target < 1 ms)\n", g - w);
  kill(gateway, SIGTERM);
  kill(serve, SIGTERM);
  waitpid(gateway, nullptr, 0);
  waitpid(serve, nullptr, 0);
  return 0;
}
