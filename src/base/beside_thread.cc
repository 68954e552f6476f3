#include "base/beside_thread.h"

#include <sched.h>

#include <memory>

namespace mecha {
namespace {

struct Start {
  std::function<void()> body;
  bool narrowed = false;  // started on the caller's CPUs minus its own; widen to `allowed`
  cpu_set_t allowed;
};

void* run_start(void* arg) {
  std::unique_ptr<Start> start(static_cast<Start*>(arg));
  if (start->narrowed) {
    // Best effort: a thread left narrowed still runs, only on fewer CPUs.
    (void)pthread_setaffinity_np(pthread_self(), sizeof start->allowed, &start->allowed);
  }
  start->body();
  return nullptr;
}

}  // namespace

BesideThread::BesideThread(std::function<void()> body) {
  auto start = std::make_unique<Start>();
  start->body = std::move(body);
  pthread_attr_t attr;
  const bool have_attr = pthread_attr_init(&attr) == 0;
  if (have_attr && sched_getaffinity(0, sizeof start->allowed, &start->allowed) == 0) {
    const int here = sched_getcpu();
    cpu_set_t others = start->allowed;
    if (here >= 0 && here < CPU_SETSIZE && CPU_ISSET(here, &others)) {
      CPU_CLR(here, &others);
      start->narrowed =
          CPU_COUNT(&others) > 0 && pthread_attr_setaffinity_np(&attr, sizeof others, &others) == 0;
    }
  }
  int rc = pthread_create(&thread_, start->narrowed ? &attr : nullptr, run_start, start.get());
  if (rc != 0 && start->narrowed) {
    start->narrowed = false;
    rc = pthread_create(&thread_, nullptr, run_start, start.get());
  }
  if (have_attr) pthread_attr_destroy(&attr);
  if (rc != 0) {
    start->body();  // no thread to be had: the work is done before the constructor returns
    return;
  }
  start.release();  // run_start owns it now
  joinable_ = true;
}

void BesideThread::join() {
  if (!joinable_) return;
  pthread_join(thread_, nullptr);
  joinable_ = false;
}

}  // namespace mecha
