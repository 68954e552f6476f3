// The prompt-injection suite's report (tests/injection/suite.json, run as in
// tests/e2e/injection_suite_test.cc), for all three values of [messaging] approve: how many
// attacks moved private data out (goal: 0 with the defaults), what stopped the others,
// integrity-only attacks apart, and which benign tasks completed or needed an approval.
//
//   build-bench/bench/injection_bench [path/to/mecha]
// (default: the mecha built beside this bench.)
#include <cstdio>

#include "cli/testing/injection_suite.h"
#include "cli/testing/run_binary.h"

int main(int argc, char** argv) {
  using namespace mecha::cli::testing;
  const std::string mecha = argc > 1 ? argv[1] : mecha_binary();
  auto report = run_injection_suite(MECHA_SOURCE_DIR "/tests/injection/suite.json",
                                    {"always", "when_tainted", "never"}, mecha);
  if (!report.ok()) {
    std::fprintf(stderr, "injection_bench: %s\n", report.message().c_str());
    return 1;
  }
  std::fputs(report->summary().c_str(), stdout);
  return 0;
}
