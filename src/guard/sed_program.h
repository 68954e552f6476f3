// What a sed program does besides editing its input, read from its text: the files it
// writes (`w FILE`, `s/a/b/w FILE`), the files it reads (`r FILE`), and whether it runs
// commands (`e`, `s///e`). A scan of sed's command syntax, not an interpreter; reentrant.
#pragma once

#include <string>
#include <vector>

namespace mecha::guard {

struct SedEffects {
  std::vector<std::string> writes;
  std::vector<std::string> reads;
  bool executes = false;
};
SedEffects sed_effects(const std::string& program);

}  // namespace mecha::guard
