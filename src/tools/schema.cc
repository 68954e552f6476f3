#include "tools/schema.h"

#include <fmt/format.h>

#include <vector>

namespace mecha::tools {
namespace {

constexpr int kMaxSchemaDepth = 64;

// 3.0 is an integer; 1e300 is not one a tool can take (casting it to int64_t is undefined).
bool whole_int64(double d) {
  return d >= -9.2e18 && d <= 9.2e18 && d == static_cast<double>(static_cast<int64_t>(d));
}

bool has_type(const Json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") {
    return value.is_number_integer() || value.is_number_unsigned() ||
           (value.is_number_float() && whole_int64(value.get<double>()));
  }
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return true;
}

std::string field_name(const std::string& path) {
  return path.empty() ? "input" : fmt::format("field \"{}\"", path);
}

std::string describe(const Json& v) {
  if (v.is_number_float()) return "number";
  return json_type_name(v);
}

struct Item {
  const Json* value;
  const Json* schema;
  std::string path;
  int depth;
};

}  // namespace

std::string validate_input(const Json& input, const Json& schema) {
  std::vector<Item> stack{{&input, &schema, "", 0}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const Json& v = *it.value;
    const Json& s = *it.schema;
    if (!s.is_object()) continue;
    if (it.depth > kMaxSchemaDepth)
      return fmt::format("{}: nested too deeply", field_name(it.path));

    if (auto t = s.find("type"); t != s.end()) {
      std::vector<std::string> types;
      if (t->is_string()) types.push_back(t->get<std::string>());
      if (t->is_array()) {
        for (const auto& x : *t) {
          if (x.is_string()) types.push_back(x.get<std::string>());
        }
      }
      bool fits = types.empty();
      for (const auto& ty : types) fits = fits || has_type(v, ty);
      if (!fits) {
        return fmt::format("{}: expected {}, got {}", field_name(it.path), fmt::join(types, " or "),
                           describe(v));
      }
    }
    if (auto e = s.find("enum"); e != s.end() && e->is_array()) {
      bool found = false;
      for (const auto& x : *e) found = found || x == v;
      if (!found) {
        return fmt::format("{}: expected one of {}, got {}", field_name(it.path), e->dump(),
                           dump_json(v));
      }
    }
    if (v.is_number()) {
      if (auto m = s.find("minimum");
          m != s.end() && m->is_number() && v.get<double>() < m->get<double>()) {
        return fmt::format("{}: must be at least {}, got {}", field_name(it.path), m->dump(),
                           dump_json(v));
      }
      if (auto m = s.find("maximum");
          m != s.end() && m->is_number() && v.get<double>() > m->get<double>()) {
        return fmt::format("{}: must be at most {}, got {}", field_name(it.path), m->dump(),
                           dump_json(v));
      }
    }
    if (v.is_string()) {
      size_t n = v.get_ref<const std::string&>().size();
      if (auto m = s.find("minLength");
          m != s.end() && m->is_number_unsigned() && n < m->get<size_t>()) {
        return fmt::format("{}: must be at least {} characters long", field_name(it.path),
                           m->dump());
      }
      if (auto m = s.find("maxLength");
          m != s.end() && m->is_number_unsigned() && n > m->get<size_t>()) {
        return fmt::format("{}: must be at most {} characters long", field_name(it.path),
                           m->dump());
      }
    }
    if (v.is_object()) {
      auto props = s.find("properties");
      if (auto r = s.find("required"); r != s.end() && r->is_array()) {
        for (const auto& name : *r) {
          if (name.is_string() && !v.contains(name.get<std::string>())) {
            std::string p =
                it.path.empty() ? name.get<std::string>() : it.path + "." + name.get<std::string>();
            const Json* ps = nullptr;
            if (props != s.end() && props->contains(name.get<std::string>())) {
              ps = &(*props)[name.get<std::string>()];
            }
            std::string ty = ps && ps->contains("type") && (*ps)["type"].is_string()
                                 ? " (" + (*ps)["type"].get<std::string>() + ")"
                                 : "";
            return fmt::format("field \"{}\"{} is required but missing", p, ty);
          }
        }
      }
      auto extra = s.find("additionalProperties");
      for (const auto& [key, child] : v.items()) {
        std::string p = it.path.empty() ? key : it.path + "." + key;
        if (props != s.end() && props->is_object() && props->contains(key)) {
          stack.push_back({&child, &(*props)[key], p, it.depth + 1});
        } else if (extra != s.end()) {
          if (extra->is_boolean() && !extra->get<bool>()) {
            std::vector<std::string> known;
            if (props != s.end() && props->is_object()) {
              for (const auto& [k, _] : props->items()) known.push_back(k);
            }
            return fmt::format("field \"{}\" is not accepted (fields: {})", p,
                               fmt::join(known, ", "));
          }
          if (extra->is_object()) stack.push_back({&child, &*extra, p, it.depth + 1});
        }
      }
    }
    if (v.is_array()) {
      if (auto items = s.find("items"); items != s.end() && items->is_object()) {
        for (size_t i = 0; i < v.size(); ++i) {
          stack.push_back({&v[i], &*items, fmt::format("{}[{}]", it.path, i), it.depth + 1});
        }
      }
    }
  }
  return "";
}

}  // namespace mecha::tools
