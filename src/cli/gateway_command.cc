// `mecha gateway`: runs mecha-gateway (cli/gateway/main.cc), installed beside mecha, with the
// arguments that follow. The gateway's HTTP server and its libraries live in that program
// so that no other command pays for loading them.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "cli/command.h"

namespace mecha::cli {
namespace {

int exec_gateway(const std::vector<std::string>& args) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return report_failure(Status::error(
        fmt::format("mecha gateway: cannot find this program's own path: {}", ec.message())));
  }
  const std::filesystem::path program = self.parent_path() / "mecha-gateway";
  std::vector<std::string> argv_strings{"mecha-gateway"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(program.c_str(), argv.data());
  return report_failure(Status::error(fmt::format(
      "mecha gateway runs {}, which could not be started: {} (it is built and installed "
      "beside mecha)",
      program.string(), std::strerror(errno))));
}

}  // namespace

void define_gateway_command(CLI::App& sub, Action* chosen) {
  // Every argument, --help included, is the gateway's own.
  sub.set_help_flag();
  sub.prefix_command();
  sub.allow_extras();
  sub.callback(
      [&sub, chosen] { *chosen = [args = sub.remaining()] { return exec_gateway(args); }; });
}

}  // namespace mecha::cli
