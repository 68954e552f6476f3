// RecordingApprover: gives every approval request the same answer and keeps each request in
// its `--json` shape, for tests to look at afterwards.
#pragma once

#include <vector>

#include "agent/events.h"
#include "agent/run_context.h"

namespace mecha::agent::testing {

class RecordingApprover final : public Approver {
 public:
  explicit RecordingApprover(bool allow = false) : allow_(allow) {}
  ApprovalReply approve(const ApprovalRequest& request) override {
    requests.push_back(to_json(request));
    return allow_ ? ApprovalReply::kAllow : ApprovalReply::kDeny;
  }
  std::vector<Json> requests;

 private:
  bool allow_;
};

}  // namespace mecha::agent::testing
