// Placeholder until the HTTP clients land: lets the binary build with cassettes only.
#include "providers/factory.h"

#include <fmt/format.h>

namespace mecha::providers {

Result<std::shared_ptr<Provider>> make_http_provider(const config::ProviderConfig& cfg,
                                                     std::string) {
  return Status::error(fmt::format("provider kind '{}' is not available in this build", cfg.kind));
}

}  // namespace mecha::providers
