// A fixture for file taint in the tools: a TempTree whose context keeps marks in a
// FileTaint of a fresh session database, for the run "s-run".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/file_taint.h"
#include "store/testing/temp_dir.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools::testing {

class TaintedTreeTest : public ::testing::Test {
 protected:
  // Opens the store and wires it into t_.ctx(). A subclass that overrides SetUp calls this
  // first and returns on HasFatalFailure().
  void SetUp() override;
  // The tree's marks as "path@session".
  std::vector<std::string> marks();

  store::testing::TempDir state_;
  TempTree t_;
  std::unique_ptr<store::FileTaint> taint_;
};

}  // namespace mecha::tools::testing
