// Small tools for the loop's own tests: they do nothing useful, but each exercises one path
// of the loop (success, failure, cancellation, a schema with required fields).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "tools/registry.h"

namespace mecha::agent::testing {

// Echo {text}: returns the text. Read-only.
std::shared_ptr<tools::Tool> make_echo_tool();
// Fail {}: always an is_error result "the tool failed on purpose".
std::shared_ptr<tools::Tool> make_fail_tool();
// Noop {}: returns "ok". The cheapest possible tool, for benchmarks.
std::shared_ptr<tools::Tool> make_noop_tool();
// Hang {}: waits until the run is cancelled, then returns "stopped". `started` is set when
// it begins, so a test can cancel at the right moment. Not cancelled within 60 s, it returns
// "never stopped: ..." instead, so that a test that fails to cancel fails, not hangs.
std::shared_ptr<tools::Tool> make_hang_tool(std::shared_ptr<std::atomic<bool>> started);

// A registry of Echo, Fail and Noop.
tools::ToolRegistry loop_test_registry();

}  // namespace mecha::agent::testing
