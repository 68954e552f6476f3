#include "cli/interrupt.h"

#include <unistd.h>
#include <csignal>

#include <atomic>

namespace mecha::cli {
namespace {

// A signal handler can reach only static state; this is the one place mecha keeps any.
std::atomic<CancelToken*> g_token{nullptr};
std::atomic<int> g_signals{0};

void on_signal(int) {
  if (g_signals.fetch_add(1) >= 1) _exit(130);
  if (CancelToken* t = g_token.load()) t->cancel();
  static const char msg[] = "\nmecha: cancelling (press Ctrl-C again to quit at once)\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace

InterruptScope::InterruptScope(CancelToken* token) {
  g_token.store(token);
  g_signals.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

InterruptScope::~InterruptScope() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  g_token.store(nullptr);
}

}  // namespace mecha::cli
