#include "config/pricing.h"

namespace mecha::config {

PriceTable PriceTable::defaults() {
  PriceTable t;
  auto add = [&](const char* model, double in, double out, double cache_read, double cache_write) {
    t.set(model, Price{in, out, cache_read, cache_write});
  };
  // Anthropic: cache reads are 0.1x input, 5-minute cache writes 1.25x input.
  add("claude-opus-4-1", 15.0, 75.0, 1.5, 18.75);
  add("claude-opus-4", 15.0, 75.0, 1.5, 18.75);
  add("claude-sonnet-4-5", 3.0, 15.0, 0.3, 3.75);
  add("claude-sonnet-4", 3.0, 15.0, 0.3, 3.75);
  add("claude-3-7-sonnet", 3.0, 15.0, 0.3, 3.75);
  add("claude-haiku-4-5", 1.0, 5.0, 0.1, 1.25);
  add("claude-3-5-haiku", 0.8, 4.0, 0.08, 1.0);
  // OpenAI: cached input as published; no separate write price.
  add("gpt-5", 1.25, 10.0, 0.125, 1.25);
  add("gpt-5-mini", 0.25, 2.0, 0.025, 0.25);
  add("gpt-5-nano", 0.05, 0.4, 0.005, 0.05);
  add("gpt-4.1", 2.0, 8.0, 0.5, 2.0);
  add("gpt-4.1-mini", 0.4, 1.6, 0.1, 0.4);
  add("gpt-4o", 2.5, 10.0, 1.25, 2.5);
  add("gpt-4o-mini", 0.15, 0.6, 0.075, 0.15);
  return t;
}

std::optional<Price> PriceTable::find(const std::string& model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return it->second;
  const Price* best = nullptr;
  size_t best_len = 0;
  for (const auto& [name, price] : prices_) {
    if (model.size() > name.size() && model.compare(0, name.size(), name) == 0 &&
        model[name.size()] == '-' && name.size() > best_len) {
      best = &price;
      best_len = name.size();
    }
  }
  if (best) return *best;
  return std::nullopt;
}

std::optional<double> PriceTable::cost(const std::string& model, const Usage& u) const {
  auto p = find(model);
  if (!p) return std::nullopt;
  // Counts a provider could not vouch for are not priced at all (providers check them; this
  // is the last line, so a cost is never negative).
  for (int64_t n : {u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens}) {
    if (n < 0 || n > kMaxTokenCount) return std::nullopt;
  }
  return (u.input_tokens * p->input_per_mtok + u.output_tokens * p->output_per_mtok +
          u.cache_read_tokens * p->cache_read_per_mtok +
          u.cache_write_tokens * p->cache_write_per_mtok) /
         1e6;
}

}  // namespace mecha::config
