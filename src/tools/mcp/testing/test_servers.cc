#include "tools/mcp/testing/test_servers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/testing/wait_until.h"

extern char** environ;

namespace mecha::mcp::testing {
namespace {

namespace fs = std::filesystem;

// A loopback port nobody listens on right now.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool accepts_connections(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::optional<fs::path> find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

fs::path everything_server_js() {
  return fs::path(MECHA_SOURCE_DIR) /
         "tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

std::string everything_unavailable() {
  if (!find_in_path("node")) return "node is not in PATH: the MCP reference server cannot run";
  if (!fs::exists(everything_server_js())) {
    return fmt::format("{} is missing (scripts/setup --for tests)",
                       everything_server_js().string());
  }
  return "";
}

ServerSpec everything_stdio_spec(const std::string& name) {
  ServerSpec spec;
  spec.name = name;
  spec.command = "node";
  spec.args = {everything_server_js().string(), "stdio"};
  spec.startup_timeout = std::chrono::seconds(20);
  spec.tool_timeout = std::chrono::seconds(60);
  return spec;
}

Result<std::unique_ptr<EverythingHttpServer>> EverythingHttpServer::start() {
  const int port = free_port();
  ChildOptions options;
  options.argv = {"node", everything_server_js().string(), "streamableHttp"};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(fmt::format("PORT={}", port));
  options.env = env;
  auto child = ChildProcess::spawn(options);
  if (!child.ok()) return child.status();
  auto server = std::unique_ptr<EverythingHttpServer>(new EverythingHttpServer());
  server->child_ = std::move(child).value();
  server->url_ = fmt::format("http://127.0.0.1:{}/mcp", port);
  bool exited = false;
  const bool listening = mecha::testing::wait_until(
      [&] {
        if (server->child_->poll_exit()) exited = true;
        return exited || accepts_connections(port);
      },
      std::chrono::seconds(20), std::chrono::milliseconds(50));
  if (!listening || exited) {
    return Status::error(fmt::format("the everything server did not listen on port {}", port));
  }
  return server;
}

ServerSpec EverythingHttpServer::spec(const std::string& name) const {
  ServerSpec spec;
  spec.name = name;
  spec.url = url_;
  spec.startup_timeout = std::chrono::seconds(20);
  spec.tool_timeout = std::chrono::seconds(60);
  return spec;
}

std::string python_server_script(const std::string& script) {
  static constexpr const char* kPrelude = R"PY(import json, os, sys, time
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
def messages():
    for line in sys.stdin:
        msg = json.loads(line)
        yield msg, msg.get("method"), msg.get("id")
)PY";
  return kPrelude + script;
}

ServerSpec python_server_spec(const std::string& name, const fs::path& dir,
                              const std::string& script) {
  const fs::path file = dir / (name + ".py");
  std::ofstream(file) << python_server_script(script);
  ServerSpec spec;
  spec.name = name;
  spec.command = "python3";
  spec.args = {"-u", file.string()};
  spec.startup_timeout = std::chrono::seconds(10);
  spec.tool_timeout = std::chrono::seconds(30);
  return spec;
}

fs::path make_temp_dir(const std::string& prefix) {
  std::string templ = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  char* made = ::mkdtemp(templ.data());
  return made == nullptr ? fs::path() : fs::path(made);
}

}  // namespace mecha::mcp::testing
