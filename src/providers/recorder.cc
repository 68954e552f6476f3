#include "providers/recorder.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "providers/cassette.h"

namespace mecha::providers {

Result<std::unique_ptr<RecordingProvider>> RecordingProvider::create(
    std::shared_ptr<Provider> inner, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return Status::error(fmt::format("cannot write cassette {}: {}", path, std::strerror(errno)));
  }
  out << dump_json(Json{{"mecha_cassette", 1}, {"note", "recorded from " + inner->model()}})
      << "\n";
  out.flush();
  return std::unique_ptr<RecordingProvider>(
      new RecordingProvider(std::move(inner), std::move(out)));
}

Result<CompletionResponse> RecordingProvider::complete(const CompletionRequest& request,
                                                       StreamSink* sink) {
  auto r = inner_->complete(request, sink);
  if (r) {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << dump_json(cassette_line_json(request.top_level ? "main" : request.agent, *r)) << "\n";
    out_.flush();
  }
  return r;
}

}  // namespace mecha::providers
