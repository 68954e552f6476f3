#include "config/toml_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace mecha::config {

std::string where(const toml::node& node, const std::string& file) {
  const auto& src = node.source();
  std::string f = src.path ? *src.path : file;
  if (src.begin.line == 0) return f;
  return fmt::format("{}:{}", f, src.begin.line);
}

Result<const toml::table*> table_of(const toml::node& node, const std::string& file,
                                    const std::string& section) {
  if (const toml::table* t = node.as_table()) return t;
  return Status::error(fmt::format("{}: {} must be a table", where(node, file), section));
}

TableReader::TableReader(const toml::table& table, std::string file, std::string section)
    : table_(table), file_(std::move(file)), section_(std::move(section)) {}

const toml::node* TableReader::node(const char* key) {
  seen_.insert(key);
  return table_.get(key);
}

Status TableReader::wrong(const toml::node& n, const char* key, const char* expected) const {
  return Status::error(
      fmt::format("{}: key '{}' in {} must be {}", where(n, file_), key, section_, expected));
}

Status TableReader::error_at(const char* key, const std::string& what) const {
  const toml::node* n = table_.get(key);
  return Status::error(
      fmt::format("{}: key '{}' in {} {}", n ? where(*n, file_) : file_, key, section_, what));
}

Status TableReader::error(const std::string& what) const {
  return Status::error(fmt::format("{}: {} {}", where(table_, file_), section_, what));
}

Status TableReader::require(const char* key) const {
  if (table_.contains(key)) return ok_status();
  return error(fmt::format("needs '{}'", key));
}

Status TableReader::get(const char* key, std::string* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  auto v = n->value<std::string>();
  if (!v) return wrong(*n, key, "a string");
  *out = *v;
  return ok_status();
}

Status TableReader::get(const char* key, bool* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  if (!n->is_boolean()) return wrong(*n, key, "true or false");
  *out = n->as_boolean()->get();
  return ok_status();
}

Status TableReader::get(const char* key, int64_t* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  if (!n->is_integer()) return wrong(*n, key, "an integer");
  *out = n->as_integer()->get();
  return ok_status();
}

Status TableReader::get(const char* key, int* out) {
  return get_in_range(key, out, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
}

Status TableReader::get(const char* key, double* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  if (!n->is_number()) return wrong(*n, key, "a number");
  *out = *n->value<double>();
  return ok_status();
}

Status TableReader::get(const char* key, std::optional<int>* out) {
  if (!table_.contains(key)) {
    seen_.insert(key);
    return ok_status();
  }
  int v = 0;
  MECHA_RETURN_IF_ERROR(get(key, &v));
  *out = v;
  return ok_status();
}

Status TableReader::get(const char* key, std::optional<double>* out) {
  if (!table_.contains(key)) {
    seen_.insert(key);
    return ok_status();
  }
  double v = 0;
  MECHA_RETURN_IF_ERROR(get(key, &v));
  *out = v;
  return ok_status();
}

Status TableReader::get(const char* key, std::vector<std::string>* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  const toml::array* a = n->as_array();
  if (a == nullptr) return wrong(*n, key, "an array of strings");
  std::vector<std::string> list;
  for (const auto& e : *a) {
    auto v = e.value<std::string>();
    if (!v) return wrong(e, key, "an array of strings");
    list.push_back(*v);
  }
  *out = std::move(list);
  return ok_status();
}

Status TableReader::get(const char* key, std::optional<std::vector<std::string>>* out) {
  if (!table_.contains(key)) {
    seen_.insert(key);
    return ok_status();
  }
  std::vector<std::string> v;
  MECHA_RETURN_IF_ERROR(get(key, &v));
  *out = std::move(v);
  return ok_status();
}

Status TableReader::get(const char* key, std::map<std::string, std::string>* out) {
  const toml::node* n = node(key);
  if (n == nullptr) return ok_status();
  const toml::table* t = n->as_table();
  if (t == nullptr) return wrong(*n, key, "a table of strings");
  std::map<std::string, std::string> map;
  for (const auto& [k, v] : *t) {
    auto s = v.value<std::string>();
    if (!s) return wrong(v, key, "a table of strings");
    map[std::string(k.str())] = *s;
  }
  *out = std::move(map);
  return ok_status();
}

Status TableReader::get_in_range(const char* key, int64_t* out, int64_t min, int64_t max) {
  int64_t v = *out;
  const bool present = table_.contains(key);
  Status s = get(key, &v);
  if (present && (!s.ok() || v < min || v > max)) {
    std::string value = s.ok() ? fmt::format(", not {}", v) : "";
    return wrong(*table_.get(key), key,
                 fmt::format("an integer from {} to {}{}", min, max, value).c_str());
  }
  *out = v;
  return ok_status();
}

Status TableReader::get_in_range(const char* key, int* out, int64_t min, int64_t max) {
  int64_t v = *out;
  MECHA_RETURN_IF_ERROR(get_in_range(key, &v, min, max));
  *out = static_cast<int>(v);
  return ok_status();
}

Status TableReader::get_non_negative(const char* key, double* out) {
  MECHA_RETURN_IF_ERROR(get(key, out));
  if (table_.contains(key) && (!(*out >= 0) || !std::isfinite(*out))) {
    return wrong(*table_.get(key), key,
                 fmt::format("a number of at least 0, not {}", *out).c_str());
  }
  return ok_status();
}

Status TableReader::get_one_of(const char* key, std::string* out,
                               const std::vector<std::string>& allowed) {
  std::string v = *out;
  const bool present = table_.contains(key);
  Status s = get(key, &v);
  bool listed = false;
  for (const auto& a : allowed) listed |= a == v;
  if (present && (!s.ok() || !listed)) {
    std::string choices;
    for (size_t i = 0; i < allowed.size(); ++i) {
      choices += i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ";
      choices += fmt::format("\"{}\"", allowed[i]);
    }
    return wrong(*table_.get(key), key, choices.c_str());
  }
  *out = v;
  return ok_status();
}

Status TableReader::finish() const {
  const toml::node* first = nullptr;
  std::string first_key;
  for (const auto& [k, v] : table_) {
    if (seen_.count(std::string(k.str()))) continue;
    if (first == nullptr || v.source().begin.line < first->source().begin.line) {
      first = &v;
      first_key = k.str();
    }
  }
  if (first == nullptr) return ok_status();
  std::string keys;
  for (const auto& k : seen_) keys += (keys.empty() ? "" : ", ") + k;
  return Status::error(fmt::format("{}: unknown key '{}' in {} (keys: {})", where(*first, file_),
                                   first_key, section_, keys));
}

}  // namespace mecha::config
