// wait_until: the one way a test waits for something to happen. It polls a condition until
// it holds or a time limit passes, so that a test waits exactly as long as the thing takes
// (no fixed sleep that is too short on a loaded machine and too long everywhere else) and
// fails, instead of hanging, when it never happens:
//
//   ASSERT_TRUE(wait_until([&] { return server.is_running(); }, 10s)) << "the server starts";
//
// A fixed sleep is right only where time itself is what is tested: a check that nothing
// happens within a while, or a delay a fake injects to test a timeout.
#pragma once

#include <chrono>
#include <functional>

namespace mecha::testing {

// Calls `ready` at once, then every `step`, until it returns true (true) or `timeout` has
// passed (false); it is called once more at the end of the time, so a condition that holds
// by then is seen. The caller says what it waited for in its assertion.
// `ready` runs on the calling thread and may have side effects (keep the last value read).
// Default: step 10 ms; a condition that is costly to check (a process started for it)
// passes a longer one.
[[nodiscard]] bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                              std::chrono::milliseconds step = std::chrono::milliseconds(10));

}  // namespace mecha::testing
