#include "agent/run_context.h"

namespace mecha::agent {

void SpendMeter::add(const Usage& usage, std::optional<double> cost) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    usage_ += usage;
    if (cost) {
      cost_ += *cost;
      ++priced_;
    } else {
      ++unpriced_;
    }
  }
  if (parent_) parent_->add(usage, cost);
}

Usage SpendMeter::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}
double SpendMeter::cost() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cost_;
}
int SpendMeter::priced_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return priced_;
}
int SpendMeter::unpriced_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unpriced_;
}

}  // namespace mecha::agent
