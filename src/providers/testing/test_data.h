// The recorded API streams under src/providers/testdata/, for tests (MECHA_SOURCE_DIR is
// defined for test executables only).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace mecha::providers::testing {

inline std::string read_test_data(const std::string& name) {
  std::ifstream in(std::string(MECHA_SOURCE_DIR) + "/src/providers/testdata/" + name,
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mecha::providers::testing
