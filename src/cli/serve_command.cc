// `mecha serve`: the session host on a Unix socket (server/daemon.h).
//
// SIGTERM or SIGINT drains: no new turns, running ones get --grace seconds, then are
// cancelled; the socket file is removed and the exit code is 0.
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/daemon_setup.h"
#include "cli/printable.h"
#include "server/unix_socket.h"

namespace mecha::cli {
namespace {

// Each connection and each open session holds a descriptor: allow as many as the hard limit.
void raise_fd_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

int serve_main(const DaemonFlags& flags) {
  raise_fd_limit();
  // Blocked here, so every thread the daemon starts inherits the mask and only the waiter
  // below sees the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto assembled = assemble_daemon(flags, [](const std::string& message) {
    write_printable(stderr, "mecha serve: " + message + "\n");
  });
  if (!assembled) return report_failure(assembled.status());
  const std::string path = socket_path(flags);
  auto listener = server::listen_unix(path);
  if (!listener) return report_failure(listener.status());
  std::fprintf(stderr, "mecha serve: listening on %s (sessions in %s)\n", path.c_str(),
               assembled->store_path.c_str());

  server::Daemon& daemon = *assembled->daemon;
  std::atomic<bool> served{false};
  std::thread waiter([&] {
    timespec step{0, 200 * 1000 * 1000};
    while (!served.load()) {
      int sig = ::sigtimedwait(&signals, nullptr, &step);
      if (sig == SIGTERM || sig == SIGINT) {
        std::fprintf(stderr, "mecha serve: draining (running turns get %.0f s)\n", flags.grace_s);
        daemon.stop();
        return;
      }
    }
  });
  Status s = daemon.serve(std::move(*listener));
  served.store(true);
  waiter.join();
  ::unlink(path.c_str());
  if (!s.ok()) return report_failure(s);
  std::fprintf(stderr, "mecha serve: stopped\n");
  return kExitOk;
}

}  // namespace

void define_serve_command(CLI::App& sub, Action* chosen) {
  auto flags = std::make_shared<DaemonFlags>();
  CLI::App* serve = &sub;
  add_daemon_flags(serve, flags.get());
  // A flag, not a config key: a config file in the work tree must not be able to open the
  // daemon to commands running in the sandbox.
  serve->add_flag("--allow-other-pid-namespaces", flags->allow_other_pid_namespaces,
                  "Serve clients in other PID namespaces too (by default a peer outside the "
                  "daemon's own, such as a command in mecha's sandbox, is refused)");
  serve
      ->add_option("--hello-timeout", flags->hello_timeout_s,
                   "Seconds a new connection has to say hello before it is closed (default 10)")
      ->check(CLI::PositiveNumber);
  serve->callback([flags, chosen] { *chosen = [flags] { return serve_main(*flags); }; });
}

}  // namespace mecha::cli
