// TerminalApprover: asks the person at the controlling terminal (/dev/tty) whether a held
// call may run, for `mecha run` started from a terminal. Where there is no terminal (a
// script, CI, a pipe with no controlling tty) there is nobody to ask: open() says so, and
// the run refuses what would have been asked.
//
// Thread-safety: approve() may be called from several threads; one question at a time.
#pragma once

#include <memory>
#include <mutex>

#include "agent/run_context.h"
#include "base/cancel.h"
#include "base/unique_fd.h"

namespace mecha::cli {

class TerminalApprover final : public agent::Approver {
 public:
  // Null when the process has no controlling terminal it can read and write.
  static std::unique_ptr<TerminalApprover> open(const CancelToken* cancel);

  // "y"/"yes" allows once, "a"/"always" allows for the session (a permission ask only),
  // anything else, end of input or a cancelled run denies.
  agent::ApprovalReply approve(const agent::ApprovalRequest& request) override;

 private:
  TerminalApprover(UniqueFd tty, const CancelToken* cancel)
      : tty_(std::move(tty)), cancel_(cancel) {}
  UniqueFd tty_;
  const CancelToken* cancel_;
  std::mutex mu_;
};

}  // namespace mecha::cli
