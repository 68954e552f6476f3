// Reading the JSON that model APIs stream back.
//
// APIs add fields all the time, so unknown fields are ignored; but a field we read must
// have the type we expect, or it counts as absent. Tool arguments are the model's own
// output and may be anything: they never fail a call (see ToolUseBlock).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/message.h"

namespace mecha::providers {

// j[key] when j is an object holding a value of that type; else the fallback.
std::string string_field(const Json& j, std::string_view key, std::string fallback = "");
int64_t int_field(const Json& j, std::string_view key, int64_t fallback = 0);
// j[key] when it is an object, else null.
const Json* object_field(const Json& j, std::string_view key);

// A tool call from the model's raw arguments: "" (or blanks) means {}; text that is not a
// JSON object gives input {}, raw_input and an input_error that says what was wrong.
ToolUseBlock tool_use_from_arguments(std::string id, std::string name, std::string raw);

// Parses one event's data as JSON; the error quotes (the start of) the data.
Result<Json> parse_event_data(std::string_view data);

}  // namespace mecha::providers
