// Strict reading of JSON objects from hostile or hand-written input.
//
// StrictObject reads one JSON object field by field, and refuses instead of guessing: a
// field of the wrong type is an error naming the field and both types; a required field
// that is absent is an error naming it; finish() refuses any key that was not read. Every
// message starts with `where`, a path such as `line 3: response.content[1]`.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/json_limits.h"
#include "base/result.h"

namespace mecha {

using Json = nlohmann::json;

// "string", "number", "object", ... as a person would say it.
std::string json_type_name(const Json& j);

// Parses JSON from outside. Never throws: every failure is an error starting with `where`,
//  - nesting deeper than max_depth, found before any tree is built (json_limits.h);
//  - a syntax error, with the parser's byte position;
//  - a number too large for a double ("1e400");
// and bytes of the input quoted in a message are made valid UTF-8.
Result<Json> parse_json(std::string_view text, const std::string& where,
                        int max_depth = kDefaultMaxJsonDepth);

// JSON text for a value that may hold text from outside: invalid UTF-8 in a string becomes
// U+FFFD instead of an exception. REQUIRES: j nests at most kDefaultMaxJsonDepth levels, or
// as deep as the caller's own limit allowed (dumping recurses once per level).
std::string dump_json(const Json& j, int indent = -1);

class StrictObject {
 public:
  // Fails unless j is an object. j must outlive the StrictObject.
  static Result<StrictObject> of(const Json& j, std::string where);

  // Required fields: absent is an error.
  Status get(std::string_view key, std::string* out);
  Status get(std::string_view key, bool* out);
  Status get(std::string_view key, int64_t* out);
  Status get(std::string_view key, double* out);
  Status get(std::string_view key, Json* out);  // any JSON value

  // Optional fields: absent (or null) leaves *out as it is.
  Status get_optional(std::string_view key, std::string* out);
  Status get_optional(std::string_view key, bool* out);
  Status get_optional(std::string_view key, int64_t* out);
  Status get_optional(std::string_view key, double* out);
  Status get_optional(std::string_view key, Json* out);

  // The raw value, or nullptr when absent; marks the key as read.
  const Json* find(std::string_view key);
  bool has(std::string_view key) const;

  // Refuses any key that no getter asked for.
  Status finish() const;

  const std::string& where() const { return where_; }
  // The path of a field, for nested readers: "<where>.key".
  std::string where_of(std::string_view key) const;

 private:
  StrictObject(const Json& j, std::string where) : j_(&j), where_(std::move(where)) {}
  template <class T>
  Status read(std::string_view key, T* out, bool required);

  const Json* j_;
  std::string where_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace mecha
