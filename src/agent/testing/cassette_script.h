// Cassettes written in tests: each helper makes one response line of DESIGN.md's cassette
// format for an agent, and `cassette` puts the header in front and opens it as a provider.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "providers/cassette.h"
#include "providers/provider.h"

namespace mecha::agent::testing {

// A line whose response calls one tool.
std::string tool_line(const std::string& agent, const std::string& id, const std::string& tool,
                      const Json& input, const Json& usage = Json::object());
// A line whose response is text and ends the turn.
std::string text_line(const std::string& agent, const std::string& text,
                      const Json& usage = Json::object());
// REQUIRES: the lines are valid (the test fails otherwise).
std::shared_ptr<providers::CassetteProvider> cassette(const std::vector<std::string>& lines);

// Passes requests to another provider and keeps a copy of each. Thread-safe.
class RequestLog final : public providers::Provider {
 public:
  explicit RequestLog(std::shared_ptr<providers::Provider> inner) : inner_(std::move(inner)) {}
  Result<providers::CompletionResponse> complete(const providers::CompletionRequest& request,
                                                 providers::StreamSink* sink) override;
  std::string model() const override { return inner_->model(); }
  std::vector<providers::CompletionRequest> requests() const;

 private:
  std::shared_ptr<providers::Provider> inner_;
  mutable std::mutex mu_;
  std::vector<providers::CompletionRequest> requests_;
};

}  // namespace mecha::agent::testing
