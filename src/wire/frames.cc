#include "wire/frames.h"

namespace mecha::wire {

std::string_view kind_of(const Frame& frame) {
  return std::visit([](const auto& body) { return std::decay_t<decltype(body)>::kKind; }, frame);
}

}  // namespace mecha::wire
