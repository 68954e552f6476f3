#include "tools/schema.h"

#include <gtest/gtest.h>

namespace mecha::tools {
namespace {

const Json kSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "file_path": {"type": "string"},
    "limit": {"type": "integer", "minimum": 1},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
    "list": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["file_path"],
  "additionalProperties": false
})");

struct SchemaCase {
  const char* input;
  const char* error;
};

TEST(ValidateInput, Table) {
  const SchemaCase cases[] = {
      {R"({"file_path": "a"})", ""},
      {R"({"file_path": "a", "limit": 3, "mode": "b", "opts": {"deep": true}, "list": ["x"]})", ""},
      {R"({"file_path": "a", "limit": 3.0})", ""},
      {R"({})", R"(field "file_path" (string) is required but missing)"},
      {R"({"file_path": 7})", R"(field "file_path": expected string, got integer)"},
      {R"({"file_path": "a", "limit": "3"})", R"(field "limit": expected integer, got string)"},
      {R"({"file_path": "a", "limit": 1.5})", R"(field "limit": expected integer, got number)"},
      {R"({"file_path": "a", "limit": 0})", R"(field "limit": must be at least 1, got 0)"},
      {R"({"file_path": "a", "mode": "c"})", R"(field "mode": expected one of ["a","b"], got "c")"},
      {R"({"file_path": "a", "opts": {"deep": 1}})",
       R"(field "opts.deep": expected boolean, got integer)"},
      {R"({"file_path": "a", "list": ["x", 2]})",
       R"(field "list[1]": expected string, got integer)"},
      {R"({"file_path": "a", "nope": 1})",
       R"(field "nope" is not accepted (fields: file_path, limit, list, mode, opts))"},
      {R"([1])", R"(input: expected object, got array)"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(validate_input(Json::parse(c.input), kSchema), c.error) << c.input;
  }
}

}  // namespace
}  // namespace mecha::tools
