#include "tools/testing/host_processes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "base/process_state.h"

namespace mecha::tools::testing {

std::string unique_sleep() {
  std::random_device rd;
  return fmt::format("sleep 1000.{}", rd() % 1000000 + 1000000);
}

bool running_on_host(const std::string& command) {
  std::string want = command;
  std::replace(want.begin(), want.end(), ' ', '\0');
  want.push_back('\0');
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (c != want) continue;
    // A zombie waiting for its parent to reap it runs nothing.
    if (process_alive(static_cast<pid_t>(std::atol(e.path().filename().c_str())))) return true;
  }
  return false;
}

}  // namespace mecha::tools::testing
