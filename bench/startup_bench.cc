// Start-up cost of the binary: `mecha --version` spawned N times, one after another, with
// wall time per start (mean and median), peak RSS, and the shared libraries the loader
// maps. The same figures for /bin/true are printed first: they are what spawning any
// process costs on this machine, and the part of mecha's figure that is not mecha's.
// Targets: mecha --version < 5 ms and < 10 MB peak RSS.
//
// Usage: startup_bench [--runs N] [--mecha PATH]
// (default PATH: the mecha binary beside this program's directory, i.e. build/mecha)
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace {

struct Figures {
  double mean_ms = 0;
  double median_ms = 0;
  long max_rss_kb = 0;
};

// Runs `argv` `runs` times with stdout on /dev/null. Exits on the first failure.
Figures measure(const std::vector<std::string>& args, int runs) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);

  std::vector<double> ms;
  Figures f;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      std::fprintf(stderr, "cannot start %s\n", argv[0]);
      std::exit(1);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "%s failed (status %d)\n", argv[0], status);
      std::exit(1);
    }
    f.max_rss_kb = std::max(f.max_rss_kb, usage.ru_maxrss);
  }
  posix_spawn_file_actions_destroy(&actions);
  for (double m : ms) f.mean_ms += m / ms.size();
  std::sort(ms.begin(), ms.end());
  f.median_ms = ms[ms.size() / 2];
  return f;
}

// The shared objects the dynamic loader maps for `binary`, as ldd lists them.
int shared_libraries(const fs::path& binary) {
  std::string cmd = "ldd '" + binary.string() + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  int n = 0;
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    if (std::string_view(line).find("linux-vdso") == std::string_view::npos) ++n;
  }
  pclose(p);
  return n;
}

void report(const char* what, const Figures& f, int runs) {
  std::printf("%-16s mean %6.2f ms  median %6.2f ms  peak RSS %6.1f MB  (%d runs)\n", what,
              f.mean_ms, f.median_ms, f.max_rss_kb / 1024.0, runs);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 300;
  fs::path mecha = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mecha";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--runs")
      runs = std::stoi(argv[++i]);
    else if (std::string(argv[i]) == "--mecha")
      mecha = argv[++i];
  }
  measure({mecha.string(), "--version"}, 10);  // warm the page cache
  report("/bin/true", measure({"/bin/true"}, runs), runs);
  report("mecha --version", measure({mecha.string(), "--version"}, runs), runs);
  std::printf("shared libraries loaded at start: %d (%s)\n", shared_libraries(mecha),
              mecha.c_str());
  return 0;
}
