// CheckingProvider: wraps a provider for tests, records every request, and checks the
// pairing invariant (agent::check_pairing) on each one before passing it on. A request that
// breaks the invariant fails the call and is kept in violations().
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "providers/provider.h"

namespace mecha::agent::testing {

class CheckingProvider final : public providers::Provider {
 public:
  explicit CheckingProvider(std::shared_ptr<providers::Provider> inner)
      : inner_(std::move(inner)) {}

  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& request,
                                                 providers::StreamSink* sink) override;
  std::string model() const override { return inner_->model(); }

  std::vector<providers::CompletionRequest> requests() const;
  std::vector<std::string> violations() const;

 private:
  std::shared_ptr<providers::Provider> inner_;
  mutable std::mutex mu_;
  std::vector<providers::CompletionRequest> requests_;  // GUARDED_BY(mu_)
  std::vector<std::string> violations_;                 // GUARDED_BY(mu_)
};

}  // namespace mecha::agent::testing
