// libFuzzer target over the command guard: any byte string, screened as a shell line, must
// give a verdict without crashing, hanging, or growing memory without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "guard/command_guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mecha::guard::CommandGuard guard = [] {
    auto g = mecha::guard::CommandGuard::create(
        mecha::guard::default_policy("/work/tree", "/home/user"));
    if (!g.ok()) __builtin_trap();
    return std::move(*g);
  }();
  std::string_view line(reinterpret_cast<const char*>(data), size);
  mecha::guard::Verdict v = guard.screen(line);
  if (!v.allowed && v.rule.empty()) __builtin_trap();  // a refusal always names its rule
  return 0;
}
