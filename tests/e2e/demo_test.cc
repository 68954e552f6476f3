// Runs the demo of examples/demo end to end with the built binary: the scripted model
// greps, reads and edits the project, and the project's failing test passes afterwards.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/subprocess.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;

class DemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mecha-demo-test-XXXXXX").string();
    dir_ = fs::path(::mkdtemp(tmpl.data())) / "project";
    fs::copy(fs::path(MECHA_SOURCE_DIR) / "examples/demo/project", dir_,
             fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  SubprocessResult run(std::vector<std::string> argv) {
    SubprocessOptions opt;
    opt.argv = std::move(argv);
    opt.cwd = dir_;
    opt.timeout = std::chrono::seconds(120);
    auto r = run_subprocess(opt);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? std::move(*r) : SubprocessResult{};
  }
  std::string read(const std::string& rel) {
    std::ifstream in(dir_ / rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

TEST_F(DemoTest, TheScriptedModelFixesTheBug) {
  const std::vector<std::string> unit_tests = {"python3", "-B", "-m", "unittest", "-q"};
  SubprocessResult before = run(unit_tests);
  ASSERT_EQ(before.exit_code, 1) << before.err.text();
  EXPECT_NE(before.err.text().find("FAIL: test_median_even_length"), std::string::npos);

  SubprocessResult agent =
      run({std::string(MECHA_BINARY_DIR) + "/mecha", "run", "--permission-mode", "acceptEdits",
           "--model", "cassette:" + std::string(MECHA_SOURCE_DIR) + "/examples/demo/cassette.jsonl",
           "The test test_median_even_length fails. Find the bug and fix it."});
  ASSERT_EQ(agent.exit_code, 0) << agent.err.text();
  EXPECT_EQ(agent.out.text(),
            "Fixed median() in stats.py: for an even number of values it now averages the two "
            "middle values, ordered[middle - 1] and ordered[middle], instead of ordered[middle] "
            "and ordered[middle + 1] (which gave 3.5 instead of 2.5 for [1, 2, 3, 4] and an "
            "IndexError for two values). test_median_even_length should pass now.\n");
  for (const char* call : {"● Grep(", "● Read(", "● Edit("}) {
    EXPECT_NE(agent.err.text().find(call), std::string::npos) << call << " in " << agent.err.text();
  }
  const std::string stats = read("stats.py");
  EXPECT_NE(stats.find("    return (ordered[middle - 1] + ordered[middle]) / 2\n"),
            std::string::npos);
  EXPECT_EQ(stats.find("ordered[middle + 1]"), std::string::npos);

  SubprocessResult after = run(unit_tests);
  EXPECT_EQ(after.exit_code, 0) << after.err.text();
}

}  // namespace
}  // namespace mecha::cli
