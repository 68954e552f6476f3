// Cassettes written in tests: each helper makes one response line of DESIGN.md's cassette
// format for an agent, and `cassette` puts the header in front and opens it as a provider.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "providers/cassette.h"
#include "providers/provider.h"

namespace mecha::agent::testing {

// A line whose response calls one tool.
std::string tool_line(const std::string& agent, const std::string& id, const std::string& tool,
                      const Json& input, const Json& usage = Json::object());
// A line whose response is text and ends the turn.
std::string text_line(const std::string& agent, const std::string& text,
                      const Json& usage = Json::object());
// REQUIRES: the lines are valid (the test fails otherwise).
std::shared_ptr<providers::CassetteProvider> cassette(const std::vector<std::string>& lines);

}  // namespace mecha::agent::testing
