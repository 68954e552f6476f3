#include "tools/testing/host_processes.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

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
    std::ifstream stat(e.path() / "stat");
    std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = s.rfind(')');
    if (paren != std::string::npos && paren + 2 < s.size() && s[paren + 2] == 'Z') continue;
    return true;
  }
  return false;
}

}  // namespace mecha::tools::testing
