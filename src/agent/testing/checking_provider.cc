#include "agent/testing/checking_provider.h"

#include "agent/conversation.h"

namespace mecha::agent::testing {

Result<providers::CompletionResponse> CheckingProvider::complete(
    const providers::CompletionRequest& request, providers::StreamSink* sink) {
  Status pairing = check_pairing(request.messages);
  if (pairing.ok() && (request.messages.empty() || request.messages.back().role != Role::kUser)) {
    pairing = Status::error("a request must end with a user message");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    if (!pairing.ok()) violations_.push_back(pairing.message());
  }
  if (!pairing.ok()) return pairing.prefixed("pairing invariant broken");
  return inner_->complete(request, sink);
}

std::vector<providers::CompletionRequest> CheckingProvider::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<std::string> CheckingProvider::violations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return violations_;
}

}  // namespace mecha::agent::testing
