#include "base/strict_json.h"

#include <fmt/format.h>

#include "base/json_text.h"

namespace mecha {

std::string json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string_view library_message(const Json::exception& e) {
  std::string_view what = e.what();
  const size_t end = what.find("] ");
  return end == std::string_view::npos ? what : what.substr(end + 2);
}

}  // namespace

Result<Json> parse_json(std::string_view text, const std::string& where, int max_depth) {
  MECHA_RETURN_IF_ERROR(check_json_depth(text, max_depth, where));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    std::string_view said = library_message(e);
    said = said.substr(said.find(':') + 2);  // "parse error at line 1, column 5: "
    return Status::error(
        fmt::format("{}: invalid JSON at byte {}: {}", where, e.byte, replace_invalid_utf8(said)));
  } catch (const Json::exception& e) {
    // out_of_range 406: a number past the range of a double.
    return Status::error(
        fmt::format("{}: invalid JSON: {}", where, replace_invalid_utf8(library_message(e))));
  } catch (const std::exception& e) {
    return Status::error(fmt::format("{}: cannot read JSON: {}", where, e.what()));
  }
}

std::string dump_json(const Json& j, int indent) {
  if (indent >= 0) return j.dump(indent, ' ', false, Json::error_handler_t::replace);
  std::string out;
  append_json(out, j);
  return out;
}

Result<StrictObject> StrictObject::of(const Json& j, std::string where) {
  if (!j.is_object()) {
    return Status::error(fmt::format("{}: expected an object, got {}", where, json_type_name(j)));
  }
  return StrictObject(j, std::move(where));
}

std::string StrictObject::where_of(std::string_view key) const {
  return fmt::format("{}.{}", where_, key);
}

const Json* StrictObject::find(std::string_view key) {
  auto it = j_->find(key);
  if (it == j_->end()) return nullptr;
  read_.emplace(key);
  return &*it;
}

bool StrictObject::has(std::string_view key) const { return j_->contains(key); }

namespace {

Status wrong_type(const std::string& where, const char* expected, const Json& got) {
  return Status::error(
      fmt::format("{}: expected {}, got {}", where, expected, json_type_name(got)));
}

Status convert(const Json& v, const std::string& where, std::string* out) {
  if (!v.is_string()) return wrong_type(where, "a string", v);
  *out = v.get<std::string>();
  return ok_status();
}
Status convert(const Json& v, const std::string& where, bool* out) {
  if (!v.is_boolean()) return wrong_type(where, "a boolean", v);
  *out = v.get<bool>();
  return ok_status();
}
Status convert(const Json& v, const std::string& where, int64_t* out) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) {
      return Status::error(fmt::format("{}: integer out of range", where));
    }
    *out = v.get<int64_t>();
    return ok_status();
  }
  return wrong_type(where, "an integer", v);
}
Status convert(const Json& v, const std::string&, Json* out) {
  *out = v;
  return ok_status();
}
Status convert(const Json& v, const std::string& where, double* out) {
  if (!v.is_number()) return wrong_type(where, "a number", v);
  *out = v.get<double>();
  return ok_status();
}

}  // namespace

template <class T>
Status StrictObject::read(std::string_view key, T* out, bool required) {
  const Json* v = find(key);
  if (v == nullptr || (!required && v->is_null())) {
    if (required) return Status::error(fmt::format("{}: missing field \"{}\"", where_, key));
    return ok_status();
  }
  return convert(*v, where_of(key), out);
}

Status StrictObject::get(std::string_view key, std::string* out) { return read(key, out, true); }
Status StrictObject::get(std::string_view key, bool* out) { return read(key, out, true); }
Status StrictObject::get(std::string_view key, int64_t* out) { return read(key, out, true); }
Status StrictObject::get(std::string_view key, double* out) { return read(key, out, true); }
Status StrictObject::get(std::string_view key, Json* out) { return read(key, out, true); }
Status StrictObject::get_optional(std::string_view key, std::string* out) {
  return read(key, out, false);
}
Status StrictObject::get_optional(std::string_view key, bool* out) { return read(key, out, false); }
Status StrictObject::get_optional(std::string_view key, int64_t* out) {
  return read(key, out, false);
}
Status StrictObject::get_optional(std::string_view key, double* out) {
  return read(key, out, false);
}
Status StrictObject::get_optional(std::string_view key, Json* out) { return read(key, out, false); }

Status StrictObject::finish() const {
  for (const auto& [key, _] : j_->items()) {
    if (read_.find(key) == read_.end()) {
      return Status::error(fmt::format("{}: unknown field \"{}\"", where_, key));
    }
  }
  return ok_status();
}

}  // namespace mecha
