// ScopedEnv: sets an environment variable of this process for the life of the object, then
// puts back what was there (or unsets it). For tests.
#pragma once

#include <optional>
#include <string>

namespace mecha::tools::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace mecha::tools::testing
