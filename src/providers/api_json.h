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
#include "providers/reply_limits.h"

namespace mecha::providers {

// j[key] when j is an object holding a value of that type; else the fallback.
// `s`, or its first 300 bytes and its size when longer: how an error quotes what it got.
std::string quote_excerpt(std::string_view s);

std::string string_field(const Json& j, std::string_view key, std::string fallback = "");
int64_t int_field(const Json& j, std::string_view key, int64_t fallback = 0);
// j[key] when it is an object, else null.
const Json* object_field(const Json& j, std::string_view key);

// A tool call from the model's raw arguments: "" (or blanks) means {}; text that is not a
// JSON object gives input {}, raw_input and an input_error that says what was wrong. So do
// arguments larger than limits.max_tool_input_bytes or nested deeper than
// limits.max_json_depth (then raw_input keeps only their start).
ToolUseBlock tool_use_from_arguments(std::string id, std::string name, std::string raw,
                                     const ReplyLimits& limits = {});

// Parses one event's data as JSON; the error quotes (the start of) the data, or names the
// depth limit it passed (checked before a tree is built).
Result<Json> parse_event_data(std::string_view data, const ReplyLimits& limits = {});

// Reads usage[key] as a token count into *out; absent (or null) leaves *out as it is. A
// count must be an integer from 0 to kMaxTokenCount: anything else (-5, 1e308, 2.5, "7")
// is an error naming the key and quoting the value, and *out is left as it is.
Status read_token_count(const Json& usage, std::string_view key, int64_t* out);

}  // namespace mecha::providers
