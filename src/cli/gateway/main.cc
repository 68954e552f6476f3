// mecha-gateway: the program `mecha gateway` runs (cli/gateway_command.cc), the web page for
// the daemon's sessions (cli/gateway/gateway.h). It is a program of its own because the HTTP
// server brings OpenSSL, zlib and brotli as shared libraries, which would otherwise load at
// every start of mecha.
//
//   mecha gateway [--listen 127.0.0.1:8080] [--socket PATH] [--token-file FILE]
//                 [--tls-cert PEM --tls-key PEM | --insecure] [--serve SERVE OPTIONS...]
//
// Without --serve it is a client of a running `mecha serve`. With it, it first starts one,
// `mecha serve --socket PATH` with the options that follow --serve, as a child process
// that lives and ends with the gateway: the two still share nothing but the socket, and
// the gateway holds none of the daemon's memory. It links no more of mecha than the wire's
// client needs, so an idle gateway stays small.
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/gateway/gateway.h"
#include "server/client.h"
#include "server/unix_socket.h"

namespace mecha::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct GatewayFlags {
  std::string listen = "127.0.0.1:8080";
  std::string socket;  // empty: the daemon's default (server::default_socket_path)
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  bool insecure = false;
  std::optional<std::vector<std::string>> serve;  // --serve and what followed it
};

int fail(const Status& s) {
  std::fprintf(stderr, "mecha gateway: %s\n", s.message().c_str());
  return s.kind() == ErrorKind::kUsage ? kExitUsage : kExitError;
}

// `mecha serve --socket SOCKET ARGS...`, from the mecha beside this program.
Result<pid_t> start_daemon(const std::string& socket, const std::vector<std::string>& args) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::error("cannot find this program's own path: " + ec.message());
  const std::string mecha = (self.parent_path() / "mecha").string();
  std::vector<std::string> argv{mecha, "serve", "--socket", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid < 0) return Status::error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    ::execv(mecha.c_str(), raw.data());
    std::fprintf(stderr, "mecha gateway: cannot start %s: %s\n", mecha.c_str(),
                 std::strerror(errno));
    ::_exit(127);
  }
  // Ready once the socket answers hello; gone if the child exits first.
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return Status::error(fmt::format("mecha serve exited before it served (status {})",
                                       WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    }
    if (server::Client::connect(socket, "mecha-gateway").ok()) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  return Status::error("mecha serve did not answer on " + socket + " within 10 s");
}

// "HOST:PORT", "[V6]:PORT" or ":PORT" (loopback).
Result<std::pair<std::string, int>> parse_listen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Status::usage(fmt::format("--listen {}: expected HOST:PORT", listen));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "127.0.0.1";
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (...) {
  }
  if (port < 0 || port > 65535) {
    return Status::usage(
        fmt::format("--listen {}: the port must be a number from 0 to 65535", listen));
  }
  return std::make_pair(host, port);
}

// The token in `path`, or a new one written there (0600) when the file does not exist.
Result<std::string> token_from_file(const std::string& path) {
  std::ifstream in(path);
  if (in) {
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.size() < 16) {
      return Status::usage(
          fmt::format("--token-file {}: the token must be at least 16 "
                      "characters, on the first line",
                      path));
    }
    return token;
  }
  std::string token = gateway::random_secret();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::error(
        fmt::format("--token-file {}: cannot create it: {}", path, std::strerror(errno)));
  }
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!written) return Status::error(fmt::format("--token-file {}: cannot write it", path));
  return token;
}

int gateway_main(const GatewayFlags& flags) {
  auto where = parse_listen(flags.listen);
  if (!where) return fail(where.status());
  const bool tls = !flags.tls_cert.empty() || !flags.tls_key.empty();
  if (!gateway::loopback_host(where->first) && !tls && !flags.insecure) {
    return fail(Status::usage(fmt::format(
        "--listen {}: not a loopback address, and the token and cookies would cross the "
        "network in clear: give --tls-cert and --tls-key, or say --insecure",
        flags.listen)));
  }
  std::string token;
  if (!flags.token_file.empty()) {
    auto t = token_from_file(flags.token_file);
    if (!t) return fail(t.status());
    token = *t;
  } else {
    token = gateway::random_secret();
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A browser that goes away mid-stream must not kill the gateway.
  std::signal(SIGPIPE, SIG_IGN);

  const std::string socket =
      flags.socket.empty() ? server::default_socket_path().string() : flags.socket;
  pid_t daemon = -1;
  if (flags.serve) {
    auto started = start_daemon(socket, *flags.serve);
    if (!started) return fail(started.status());
    daemon = *started;
  }
  gateway::GatewayOptions options;
  options.host = where->first;
  options.port = where->second;
  options.socket = socket;
  options.token = token;
  options.tls_cert = flags.tls_cert;
  options.tls_key = flags.tls_key;
  options.software = "mecha-gateway";
  gateway::Gateway gateway(options);
  auto stop_daemon = [&] {
    if (daemon < 0) return;
    ::kill(daemon, SIGTERM);  // it drains its running turns, then removes its socket
    ::waitpid(daemon, nullptr, 0);
  };
  if (Status s = gateway.bind(); !s.ok()) {
    stop_daemon();
    return fail(s);
  }
  std::fprintf(stderr, "mecha gateway: serving %s/ for the daemon at %s\n",
               gateway.origin().c_str(), socket.c_str());
  std::printf("%s/login?token=%s\n", gateway.origin().c_str(), token.c_str());
  std::fflush(stdout);

  std::atomic<bool> served{false};
  std::thread waiter([&] {
    timespec step{0, 200 * 1000 * 1000};
    while (!served.load()) {
      const int sig = ::sigtimedwait(&signals, nullptr, &step);
      if (sig == SIGTERM || sig == SIGINT) {
        gateway.stop();
        return;
      }
    }
  });
  Status s = gateway.serve();
  served = true;
  waiter.join();
  stop_daemon();
  if (!s.ok()) return fail(s);
  std::fprintf(stderr, "mecha gateway: stopped\n");
  return kExitOk;
}

}  // namespace
}  // namespace mecha::cli

int main(int argc, char** argv) {
  using namespace mecha::cli;
  // Each HTTP thread would get a malloc arena of its own; the gateway's work is small and
  // two arenas serve it, at a fraction of the idle memory.
  mallopt(M_ARENA_MAX, 2);
  GatewayFlags flags;
  // What follows --serve is mecha serve's, not the gateway's.
  int own = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--serve") {
      own = i;
      flags.serve.emplace(argv + i + 1, argv + argc);
      break;
    }
  }
  CLI::App app{"mecha gateway: the web page for the daemon's sessions, chat and approvals",
               "mecha gateway"};
  app.add_option("--listen", flags.listen,
                 "Address and port to serve on (default 127.0.0.1:8080; port 0 picks one)");
  app.add_option("--socket", flags.socket,
                 "The daemon's socket (default: mecha serve's, $XDG_RUNTIME_DIR/mecha.sock)");
  app.add_option("--token-file", flags.token_file,
                 "Read the access token from this file, or write a new one there (0600)");
  app.add_option("--tls-cert", flags.tls_cert, "Serve HTTPS with this certificate chain (PEM)");
  app.add_option("--tls-key", flags.tls_key, "The TLS certificate's private key (PEM)");
  app.add_flag("--insecure", flags.insecure, "Allow plain HTTP on an address other than loopback");
  app.footer(
      "  --serve OPTIONS...   Start `mecha serve --socket SOCKET OPTIONS...` first, as a child\n"
      "                       that ends with the gateway (all that follows is mecha serve's,\n"
      "                       e.g. --serve --model cassette:run.jsonl -C ~/project)");
  try {
    app.parse(own, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "mecha gateway: %s (see mecha gateway --help)\n", e.what());
    return kExitUsage;
  }
  return gateway_main(flags);
}
