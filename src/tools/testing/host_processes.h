// What runs on the host, for tests that check a process a tool started is really gone.
#pragma once

#include <string>

namespace mecha::tools::testing {

// "sleep 1000.NNNNNNN": a sleep whose command line no other process on the machine has.
std::string unique_sleep();

// Whether a live (not zombie) process on the host runs exactly `command` (words separated by
// single spaces).
bool running_on_host(const std::string& command);

}  // namespace mecha::tools::testing
