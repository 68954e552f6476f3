// Per-turn cost of mecha alone, measured as ../shared/bench/anchors measures it (issue 19),
// without npm or Python.
//
// A scripted model on loopback (an httplib server in this process) speaks the Anthropic
// Messages API (a POST to any path ending in /messages) with SSE streaming, as
// anchors/mockmodel.py does: it counts the tool results
// already in the conversation it is sent, and while there are fewer than N it answers with
// one call of the offered Bash tool running `echo step K` (K = count + 1), else with the
// text "done". Each event goes in its own HTTP chunk; connections stay open (HTTP/1.1
// keep-alive, TCP_NODELAY), as the mock's do.
//
// For every N and sandbox mode (mecha: Bash in bubblewrap; mecha-nosb: sandbox off) a
// series gets a fresh HOME holding ~/.config/mecha/config.toml for that provider, and
// each run a fresh git-initialised work dir with one committed README. A run is
// `mecha run --provider mock --max-turns 1000 "do the task"`, spawned in a new session
// through GNU time (as the anchors do, for the peak RSS: a process spawned from this one
// would otherwise start its ru_maxrss at this process's size), with stdin on /dev/null
// and a minimal environment. Wall is a monotonic clock read around the spawn and the reap;
// CPU is user+sys of the wait4 rusage (mecha and every descendant it waited for, plus GNU
// time's own ~0.5 ms); peak RSS is GNU time's %M, the largest single process of the tree.
// Runs of all series are interleaved (A B C, C B A, ...) after one warm-up round, so that
// a drift in the machine's speed falls on every series alike. A run is ok when it exits 0,
// the model saw exactly N tool results in its last request, and nothing it started is
// left in its process group.
//
// Printed per series: median wall [min-max], median CPU, median peak RSS, median time from
// the spawn to the first model request, and ok; then per mode the per-turn figure
// (wall(N=50) - wall(N=1)) / 49, and the same for CPU.
//
// Beside the N=0 runs, the series "floor" runs one_turn_floor (built beside this program) the
// same way: a client that only syncs the prompt, makes the one request and syncs the reply.
// The distance between it and mecha's N=0 run is what mecha itself costs at start and end.
//
// With --model-ms D the model waits D ms before it answers each request, as a real one
// takes its time to the first token (hundreds of ms for a hosted model, tens for a local
// one). The per-turn line then also gives what mecha adds beyond the model: the per-turn
// wall less D. Work that mecha overlaps with the request (the next command's fresh bash is
// started while the model thinks) is hidden there, as it is with a real model; with D = 0,
// the anchors' figure, nothing is.
//
// Usage: turn_overhead_bench [MECHA] [--runs R] [--ns 0,1,10,50] [--modes bwrap,off,floor]
//                            [--model-ms D]
// (default MECHA: the mecha binary beside this program's directory, i.e. build/mecha;
// flags it does not know, such as Google Benchmark's, are ignored so `make bench` can pass
// its own).
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/strict_json.h"

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using mecha::dump_json;
using mecha::Json;
using mecha::parse_json;

namespace {

double seconds_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double>(t - t0).count();
}

// ---------------------------------------------------------------------------------------
// The scripted model
// ---------------------------------------------------------------------------------------

// What the model saw in one request, kept to tell whether a run was answered correctly.
struct Seen {
  Clock::time_point arrived;
  int tool_results = 0;
  int ran = 0;  // of those, the ones that are what `echo step K` prints: the shell ran it
  bool answered_tool_call = false;
};

// The text of a tool_result's content (a string, or text blocks).
std::string result_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const auto& b : content)
      if (b.is_object() && b.value("type", "") == "text") text += b.value("text", "");
  return text;
}

void count_tool_results(const Json& body, Seen* s) {
  if (!body.contains("messages") || !body["messages"].is_array()) return;
  for (const auto& m : body["messages"]) {
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    for (const auto& b : m["content"]) {
      if (!b.is_object() || b.value("type", "") != "tool_result") continue;
      ++s->tool_results;
      // A refused or failed call answers with why; only a run command prints its step.
      const std::string want = "step " + std::to_string(s->tool_results);
      if (result_text(b.value("content", Json())).rfind(want, 0) == 0) ++s->ran;
    }
  }
}

// Arguments for the shell tool from its schema, as mockmodel.py's _args_for_schema builds
// them: the command, a description when the schema has one, other required fields minimal.
Json shell_arguments(const Json& schema, int k) {
  Json args = Json::object();
  args["command"] = "echo step " + std::to_string(k);
  const Json props = schema.value("properties", Json::object());
  if (schema.contains("required") && schema["required"].is_array()) {
    for (const auto& r : schema["required"]) {
      if (!r.is_string() || args.contains(r.get<std::string>())) continue;
      const std::string name = r.get<std::string>();
      const std::string type = props.contains(name) ? props[name].value("type", "") : "";
      if (name == "description") {
        args[name] = "Print step " + std::to_string(k);
      } else if (type == "string") {
        args[name] = ".";
      } else if (type == "integer" || type == "number") {
        args[name] = 10000;
      } else if (type == "boolean") {
        args[name] = false;
      } else if (type == "array") {
        args[name] = Json::array();
      } else {
        args[name] = nullptr;
      }
    }
  }
  if (props.contains("description") && !args.contains("description"))
    args["description"] = "Print step " + std::to_string(k);
  return args;
}

std::string sse(const std::string& event, const Json& data) {
  return "event: " + event + "\ndata: " + dump_json(data) + "\n\n";
}

// The events of one Anthropic streamed message, one string per HTTP chunk, in the order and
// shape mockmodel.py sends them.
std::vector<std::string> anthropic_events(const Json* tool, int k, int serial) {
  const Json usage_in = {{"input_tokens", 100},
                         {"cache_creation_input_tokens", 0},
                         {"cache_read_input_tokens", 0},
                         {"output_tokens", 1},
                         {"service_tier", "standard"}};
  const Json usage_out = {{"input_tokens", 100},
                          {"cache_creation_input_tokens", 0},
                          {"cache_read_input_tokens", 0},
                          {"output_tokens", 10}};
  std::vector<std::string> out;
  out.push_back(sse("message_start", {{"type", "message_start"},
                                      {"message",
                                       {{"id", "msg_mock" + std::to_string(serial)},
                                        {"type", "message"},
                                        {"role", "assistant"},
                                        {"model", "mock-model"},
                                        {"content", Json::array()},
                                        {"stop_reason", nullptr},
                                        {"stop_sequence", nullptr},
                                        {"usage", usage_in}}}}));
  std::string stop;
  if (tool != nullptr) {
    out.push_back(sse("content_block_start", {{"type", "content_block_start"},
                                              {"index", 0},
                                              {"content_block",
                                               {{"type", "tool_use"},
                                                {"id", "toolu_mock" + std::to_string(serial)},
                                                {"name", (*tool)["name"]},
                                                {"input", Json::object()}}}}));
    out.push_back(sse("ping", {{"type", "ping"}}));
    const std::string js = dump_json(shell_arguments(tool->value("input_schema", Json()), k));
    const size_t cut = std::max<size_t>(1, js.size() / 2);
    for (const std::string& part : {std::string(), js.substr(0, cut), js.substr(cut)}) {
      out.push_back(sse("content_block_delta",
                        {{"type", "content_block_delta"},
                         {"index", 0},
                         {"delta", {{"type", "input_json_delta"}, {"partial_json", part}}}}));
    }
    stop = "tool_use";
  } else {
    out.push_back(
        sse("content_block_start", {{"type", "content_block_start"},
                                    {"index", 0},
                                    {"content_block", {{"type", "text"}, {"text", ""}}}}));
    out.push_back(sse("ping", {{"type", "ping"}}));
    out.push_back(
        sse("content_block_delta", {{"type", "content_block_delta"},
                                    {"index", 0},
                                    {"delta", {{"type", "text_delta"}, {"text", "done"}}}}));
    stop = "end_turn";
  }
  out.push_back(sse("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
  out.push_back(
      sse("message_delta", {{"type", "message_delta"},
                            {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                            {"usage", usage_out}}));
  out.push_back(sse("message_stop", {{"type", "message_stop"}}));
  return out;
}

// The mock model. The number of tool calls it asks for is set before each run
// (set_turns); the runs are sequential, so one server serves every series.
class ScriptedModel {
 public:
  explicit ScriptedModel(std::chrono::milliseconds latency) : latency_(latency) {
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(1000000);
    server_.Post(R"(.*/messages)",
                 [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedModel() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  void begin_run(int turns) {
    std::lock_guard<std::mutex> lock(mu_);
    turns_ = turns;
    seen_.clear();
  }
  std::vector<Seen> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    Seen s;
    s.arrived = Clock::now();
    auto body = parse_json(req.body, "request");
    if (!body.ok() || !body->is_object()) {
      res.status = 400;
      res.set_content(R"({"type":"error","error":{"type":"invalid_request_error"}})",
                      "application/json");
      return;
    }
    const Json* tool = nullptr;
    if (body->contains("tools") && (*body)["tools"].is_array()) {
      for (const auto& t : (*body)["tools"]) {
        if (t.is_object() && t.value("name", "") == "Bash") tool = &t;
      }
    }
    count_tool_results(*body, &s);
    int turns = 0;
    int serial = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      turns = turns_;
      serial = ++serial_;
    }
    if (tool == nullptr || s.tool_results >= turns) tool = nullptr;
    s.answered_tool_call = tool != nullptr;
    auto events = std::make_shared<std::vector<std::string>>(
        anthropic_events(tool, s.tool_results + 1, serial));
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(s);
    }
    if (latency_.count() > 0) std::this_thread::sleep_for(latency_);
    res.set_header("request-id", "req_mock" + std::to_string(serial));
    res.set_chunked_content_provider("text/event-stream; charset=utf-8",
                                     [events](size_t, httplib::DataSink& sink) {
                                       for (const auto& e : *events) {
                                         if (!sink.write(e.data(), e.size())) return false;
                                       }
                                       sink.done();
                                       return true;
                                     });
  }

  const std::chrono::milliseconds latency_;  // before each answer
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  int turns_ = 0;           // GUARDED_BY(mu_)
  int serial_ = 0;          // GUARDED_BY(mu_)
  std::vector<Seen> seen_;  // GUARDED_BY(mu_)
};

// ---------------------------------------------------------------------------------------
// Running mecha
// ---------------------------------------------------------------------------------------

struct Run {
  double wall = 0;
  double cpu = 0;
  long rss_kb = 0;
  double first_request = -1;  // seconds from the spawn to the first model request
  bool ok = false;
  std::string why;  // when not ok
};

// Runs argv quietly and waits; true when it exited 0.
bool run_quiet(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A fresh work dir holding a git repository with one committed README, as the anchors'.
fs::path fresh_workdir(const fs::path& base) {
  std::string tmpl = (base / "run-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  const fs::path wd = tmpl;
  const std::vector<std::string> git = {"git",
                                        "-c",
                                        "user.name=bench",
                                        "-c",
                                        "user.email=bench@example.invalid",
                                        "-c",
                                        "init.defaultBranch=main"};
  auto with = [&](std::vector<std::string> rest) {
    std::vector<std::string> a = git;
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  };
  std::ofstream(wd / "README.md") << "# scratch repo for harness benchmarks\n";
  if (!run_quiet(with({"init", "-q", wd.string()})) ||
      !run_quiet(with({"-C", wd.string(), "add", "README.md"})) ||
      !run_quiet(with({"-C", wd.string(), "commit", "-q", "-m", "init"}))) {
    std::fprintf(stderr, "git could not set up %s\n", wd.c_str());
    std::exit(1);
  }
  return wd;
}

// Processes whose process group is `pgid`.
std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid) out.push_back(std::stoi(name));
  }
  return out;
}

struct Series {
  std::string mode;  // "bwrap" or "off"
  int n = 0;
  fs::path home;
  std::vector<Run> runs;  // measured runs only
};

const char* profile_name(const std::string& mode) {
  if (mode == "floor") return "floor";
  return mode == "bwrap" ? "mecha" : "mecha-nosb";
}

fs::path make_home(const fs::path& base, const std::string& mode, int n, int port) {
  std::string tmpl =
      (base / ("home-" + std::string(profile_name(mode)) + "_N" + std::to_string(n) + "-XXXXXX"))
          .string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  const fs::path home = tmpl;
  fs::create_directories(home / ".config" / "mecha");
  std::ofstream(home / ".config" / "mecha" / "config.toml")
      << "[providers.mock]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:" << port
      << "\"\nmodel = \"mock-model\"\napi_key_env = \"MOCK_API_KEY\"\n[sandbox]\nmode = \"" << mode
      << "\"\n"
      // As the other clients are run (Claude Code with --dangerously-skip-permissions): with
      // no terminal to ask at, the default mode would refuse every Bash call, and the run
      // would measure refusals instead of the shell.
      << "[permissions]\ndefaultMode = \"bypassPermissions\"\n";
  return home;
}

// The program one_turn_floor, beside this one.
fs::path floor_client() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "one_turn_floor";
}

Run run_once(const fs::path& mecha, const Series& s, const fs::path& base, ScriptedModel* model,
             bool gnu_time) {
  const fs::path wd = fresh_workdir(base);
  const fs::path tfile = base / "time.out";
  std::vector<std::string> args;
  if (gnu_time) args = {"/usr/bin/time", "-f", "%e %U %S %M", "-o", tfile.string()};
  if (s.mode == "floor") {
    for (const std::string& a :
         {floor_client().string(), std::to_string(model->port()), (s.home / "journal").string()}) {
      args.push_back(a);
    }
  } else {
    for (const char* a :
         {mecha.c_str(), "run", "--provider", "mock", "--max-turns", "1000", "do the task"}) {
      args.push_back(a);
    }
  }
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                  "TERM=dumb",
                                  "LANG=C.UTF-8",
                                  "SHELL=/bin/bash",
                                  "USER=bench",
                                  "LOGNAME=bench",
                                  "HOME=" + s.home.string(),
                                  "MOCK_API_KEY=dummy"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, (base / "last.err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addchdir_np(&fa, wd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);

  model->begin_run(s.n);
  Run r;
  const auto t0 = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), envp.data()) != 0) {
    std::fprintf(stderr, "cannot start %s\n", argv[0]);
    std::exit(1);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  const auto t1 = Clock::now();
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);

  r.wall = seconds_since(t0, t1);
  r.cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
          ru.ru_stime.tv_usec / 1e6;
  r.rss_kb = ru.ru_maxrss;
  if (gnu_time) {
    std::ifstream tf(tfile);
    std::string line, last;
    while (std::getline(tf, line)) {
      if (!line.empty()) last = line;
    }
    std::istringstream fields(last);
    double e = 0, u = 0, sy = 0;
    long m = 0;
    if (fields >> e >> u >> sy >> m) r.rss_kb = m;
  }
  const std::vector<pid_t> left = group_members(pid);
  for (pid_t p : left) kill(p, SIGKILL);

  const std::vector<Seen> seen = model->seen();
  if (!seen.empty()) r.first_request = seconds_since(t0, seen.front().arrived);
  const int answered = static_cast<int>(
      std::count_if(seen.begin(), seen.end(), [](const Seen& x) { return x.answered_tool_call; }));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream err(base / "last.err");
    std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    r.why = "exit status " + std::to_string(status) + ": " + text.substr(0, 300);
  } else if (seen.empty() || seen.back().tool_results != s.n || answered != s.n) {
    r.why = "the model saw " + std::to_string(seen.empty() ? -1 : seen.back().tool_results) +
            " tool results and asked for " + std::to_string(answered) + " calls, not " +
            std::to_string(s.n);
  } else if (seen.back().ran != s.n) {
    r.why = std::to_string(s.n - seen.back().ran) + " of the " + std::to_string(s.n) +
            " calls were not run (refused or failed)";
  } else if (!left.empty()) {
    r.why = std::to_string(left.size()) + " processes left in the run's group";
  }
  r.ok = r.why.empty();
  std::error_code ec;
  fs::remove_all(wd, ec);
  return r;
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const size_t m = xs.size() / 2;
  return xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

template <typename F>
std::vector<double> column(const Series& s, F f) {
  std::vector<double> out;
  for (const Run& r : s.runs) out.push_back(f(r));
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path mecha = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  int runs = 10;
  std::vector<int> ns = {0, 1, 10, 50};
  std::vector<std::string> modes = {"bwrap", "off", "floor"};
  int model_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--ns" && i + 1 < argc) {
      ns.clear();
      for (const auto& n : split(argv[++i], ',')) ns.push_back(std::atoi(n.c_str()));
    } else if (a == "--modes" && i + 1 < argc) {
      modes = split(argv[++i], ',');
    } else if (a == "--model-ms" && i + 1 < argc) {
      model_ms = std::max(0, std::atoi(argv[++i]));
    } else if (a.rfind("--", 0) != 0) {
      mecha = a;
    }
  }
  if (!fs::exists(mecha)) {
    std::fprintf(stderr, "no mecha binary at %s (pass its path)\n", mecha.c_str());
    return 1;
  }
  mecha = fs::absolute(mecha);
  for (const auto& m : modes) {
    if (m != "bwrap" && m != "off" && m != "floor") {
      std::fprintf(stderr, "unknown mode \"%s\" (bwrap, off or floor)\n", m.c_str());
      return 1;
    }
  }
  if (std::find(modes.begin(), modes.end(), "floor") != modes.end() &&
      access(floor_client().c_str(), X_OK) != 0) {
    std::fprintf(stderr, "no %s: the floor series is left out\n", floor_client().c_str());
    modes.erase(std::find(modes.begin(), modes.end(), "floor"));
  }
  const bool gnu_time = access("/usr/bin/time", X_OK) == 0;

  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp != nullptr ? tmp : "/var/tmp") + "/mecha-turn-bench.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path base = tmpl;

  ScriptedModel model{std::chrono::milliseconds(model_ms)};
  std::vector<Series> series;
  for (const auto& m : modes) {
    for (int n : ns) {
      if (m == "floor" && n != 0) continue;  // it makes one request and runs no tool
      series.push_back({m, n, make_home(base, m, n, model.port()), {}});
    }
  }
  const int warmup = 1;
  for (int i = 0; i < warmup + runs; ++i) {
    std::vector<Series*> order;
    for (auto& s : series) order.push_back(&s);
    if (i % 2 == 1) std::reverse(order.begin(), order.end());
    for (Series* s : order) {
      Run r = run_once(mecha, *s, base, &model, gnu_time);
      if (!r.ok)
        std::fprintf(stderr, "%s N=%d run %d: %s\n", profile_name(s->mode), s->n, i, r.why.c_str());
      if (i >= warmup) s->runs.push_back(r);
    }
  }

  std::printf("mecha %s, %d runs after %d warm-up, interleaved; peak RSS from %s\n", mecha.c_str(),
              runs, warmup, gnu_time ? "GNU time %M" : "wait4 ru_maxrss");
  if (model_ms > 0) std::printf("the model waits %d ms before each answer\n", model_ms);
  std::printf("%-11s %4s %9s %19s %9s %9s %10s %s\n", "profile", "N", "wall ms", "[min-max]",
              "cpu ms", "rss MiB", "1st req ms", "ok");
  bool all_ok = true;
  for (const auto& s : series) {
    const auto wall = column(s, [](const Run& r) { return r.wall * 1e3; });
    const bool ok = std::all_of(s.runs.begin(), s.runs.end(), [](const Run& r) { return r.ok; });
    all_ok = all_ok && ok;
    std::printf("%-11s %4d %9.1f [%7.1f-%9.1f] %9.1f %9.1f %10.1f %s\n", profile_name(s.mode), s.n,
                median(wall), *std::min_element(wall.begin(), wall.end()),
                *std::max_element(wall.begin(), wall.end()),
                median(column(s, [](const Run& r) { return r.cpu * 1e3; })),
                median(column(s, [](const Run& r) { return r.rss_kb / 1024.0; })),
                median(column(s, [](const Run& r) { return r.first_request * 1e3; })),
                ok ? "ok" : "FAILED");
  }
  // Per turn: from the smallest N >= 1 to the largest, as (wall(50) - wall(1)) / 49.
  for (const auto& m : modes) {
    const Series* lo = nullptr;
    const Series* hi = nullptr;
    for (const auto& s : series) {
      if (s.mode != m || s.n < 1) continue;
      if (lo == nullptr || s.n < lo->n) lo = &s;
      if (hi == nullptr || s.n > hi->n) hi = &s;
    }
    if (lo == nullptr || hi == nullptr || lo->n == hi->n) continue;
    auto med = [](const Series* s, double Run::*field) {
      return median(column(*s, [field](const Run& r) { return r.*field * 1e3; }));
    };
    const int d = hi->n - lo->n;
    const double wall = (med(hi, &Run::wall) - med(lo, &Run::wall)) / d;
    std::printf("%-11s per turn: wall %.2f ms  cpu %.2f ms  ((N=%d - N=%d) / %d)", profile_name(m),
                wall, (med(hi, &Run::cpu) - med(lo, &Run::cpu)) / d, hi->n, lo->n, d);
    if (model_ms > 0) std::printf("; beyond the model: %.2f ms", wall - model_ms);
    std::printf("\n");
  }
  std::error_code ec;
  fs::remove_all(base, ec);
  return all_ok ? 0 : 1;
}
