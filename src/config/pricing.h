// Prices per million tokens, by model name, for turning usage into dollars.
//
// A model with no price is unpriced: its calls are counted as unpriced, never as free.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/message.h"

namespace mecha::config {

struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  double cache_read_per_mtok = 0;   // Default: input_per_mtok / 10
  double cache_write_per_mtok = 0;  // Default: input_per_mtok * 1.25
};

class PriceTable {
 public:
  // Published list prices of common hosted models (USD per million tokens), as of 2025.
  static PriceTable defaults();

  void set(const std::string& model, Price price) { prices_[model] = price; }
  // Exact name first, then the longest configured prefix ("claude-sonnet-4-5-20250929"
  // takes the price of "claude-sonnet-4-5").
  std::optional<Price> find(const std::string& model) const;
  // Dollars for this usage, or nullopt when the model has no price or a count is outside
  // [0, kMaxTokenCount].
  std::optional<double> cost(const std::string& model, const Usage& usage) const;

 private:
  std::map<std::string, Price> prices_;
};

}  // namespace mecha::config
