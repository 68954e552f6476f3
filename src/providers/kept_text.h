// KeptText: the JSON text of a part of a request that stays the same from one turn to the
// next (a system prompt, the tools), written again only when its source changes.
// Not thread-safe: the writer that holds it locks.
#pragma once

#include <optional>
#include <string>

namespace mecha::providers {

template <typename Source>
class KeptText {
 public:
  // The text `make()` wrote for `source` and `flag`, from the last call when both are the same.
  template <typename Make>
  const std::string& get(const Source& source, bool flag, Make make) {
    if (!text_ || flag_ != flag || source_ != source) {
      source_ = source;
      flag_ = flag;
      text_ = make();
    }
    return *text_;
  }

 private:
  Source source_{};
  bool flag_ = false;
  std::optional<std::string> text_;
};

}  // namespace mecha::providers
