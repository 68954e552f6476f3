// The result of tools/call as text a model reads.
//
// Content blocks become text, joined with newlines:
//   text                -> its text
//   image, audio        -> "[image/png image of 1234 bytes left out]" (the bytes are never
//                          shown to a text model; the note says what was there)
//   resource_link       -> "[resource link: NAME <URI>]"
//   resource (embedded) -> "[resource URI]" followed by its text, or a note for a blob
//   anything else       -> "[a content block of type \"T\" left out]"
// structuredContent is kept; when no block gave any text it becomes the text, as JSON.
// isError becomes is_error. A result of the wrong shape is an error naming `where`.
#pragma once

#include <string>

#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::mcp {

struct CallResult {
  std::string text;
  bool is_error = false;
  Json structured;  // null when the server sent none
  bool operator==(const CallResult&) const = default;
};

Result<CallResult> read_call_result(const Json& result, const std::string& where);

}  // namespace mecha::mcp
