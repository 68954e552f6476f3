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

#include "base/result.h"

namespace mecha {

using Json = nlohmann::json;

// "string", "number", "object", ... as a person would say it.
std::string json_type_name(const Json& j);

// Parses text as JSON; the error names `where` and the parser's position.
Result<Json> parse_json(std::string_view text, const std::string& where);

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
