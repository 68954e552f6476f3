#include "base/strict_json.h"

#include <fmt/format.h>

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

Result<Json> parse_json(std::string_view text, const std::string& where) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return Status::error(
        fmt::format("{}: invalid JSON at byte {}: {}", where, e.byte,
                    std::string_view(e.what()).substr(std::string_view(e.what()).find(':') + 2)));
  }
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
