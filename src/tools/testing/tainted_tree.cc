#include "tools/testing/tainted_tree.h"

#include "store/session_store.h"

namespace mecha::tools::testing {

void TaintedTreeTest::SetUp() {
  const auto db = state_.path() / "sessions.db";
  ASSERT_TRUE(store::SessionStore::open(db).ok());
  auto taint = store::FileTaint::open(db);
  ASSERT_TRUE(taint.ok()) << taint.message();
  taint_ = std::move(*taint);
  t_.ctx().file_taint = taint_.get();
  t_.ctx().session_id = "s-run";
}

std::vector<std::string> TaintedTreeTest::marks() {
  auto all = taint_->list(t_.root());
  EXPECT_TRUE(all.ok()) << all.message();
  std::vector<std::string> out;
  for (const auto& f : *all) out.push_back(f.path + "@" + f.session_id);
  return out;
}

}  // namespace mecha::tools::testing
