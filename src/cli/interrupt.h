// Ctrl-C for a run: the first SIGINT (or SIGTERM) cancels the run's token, so the in-flight
// request is aborted and running tools are stopped; a second one exits at once with 130.
#pragma once

#include "base/cancel.h"

namespace mecha::cli {

// Installs the handlers for the lifetime of the object. One at a time per process.
class InterruptScope {
 public:
  explicit InterruptScope(CancelToken* token);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

}  // namespace mecha::cli
