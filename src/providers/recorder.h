// RecordingProvider: passes requests to a live provider and writes each response as a line
// of a version 1 cassette (DESIGN.md), so a live run can be replayed with
// --model cassette:PATH. Thread-safe; each line is flushed as it is written.
#pragma once

#include <fstream>
#include <memory>
#include <mutex>

#include "providers/provider.h"

namespace mecha::providers {

class RecordingProvider final : public Provider {
 public:
  // Creates (or truncates) the file and writes the header.
  static Result<std::unique_ptr<RecordingProvider>> create(std::shared_ptr<Provider> inner,
                                                           const std::string& path);

  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink* sink) override;
  std::string model() const override { return inner_->model(); }

 private:
  RecordingProvider(std::shared_ptr<Provider> inner, std::ofstream out)
      : inner_(std::move(inner)), out_(std::move(out)) {}
  std::shared_ptr<Provider> inner_;
  std::mutex mu_;
  std::ofstream out_;  // GUARDED_BY(mu_)
};

}  // namespace mecha::providers
