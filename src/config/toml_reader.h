// How config/ reads a TOML table: key by key, strictly. Internal to config/: the layers
// above receive the typed structs of config.h and never see TOML.
//
// Every error names where the value is, "FILE:LINE: ...", FILE being the path toml++
// recorded for the node (a merged table keeps each node's own file), else the file being
// read. A key the reader did not ask for is an error naming it and the keys there are.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "base/result.h"

namespace mecha::config {

// "FILE:LINE" for a node, or "FILE" when toml++ recorded no line; FILE is the node's own
// file, else `file`.
std::string where(const toml::node& node, const std::string& file);

// The node as a table; "FILE:LINE: SECTION must be a table" when it is something else.
Result<const toml::table*> table_of(const toml::node& node, const std::string& file,
                                    const std::string& section);

// Reads the keys of one table. Each get() leaves *out as it was when the key is absent
// (so *out holds the default), and refuses a value of another type.
class TableReader {
 public:
  // `section` names the table in messages: "[sandbox]", "[providers.local]".
  TableReader(const toml::table& table, std::string file, std::string section);

  Status get(const char* key, std::string* out);
  Status get(const char* key, bool* out);
  Status get(const char* key, int* out);
  Status get(const char* key, int64_t* out);
  Status get(const char* key, double* out);  // an integer is a number too
  Status get(const char* key, std::optional<int>* out);
  Status get(const char* key, std::optional<double>* out);
  // An array of strings; replaces *out.
  Status get(const char* key, std::vector<std::string>* out);
  Status get(const char* key, std::optional<std::vector<std::string>>* out);
  // A table whose values are strings; replaces *out.
  Status get(const char* key, std::map<std::string, std::string>* out);

  // An integer in [min, max].
  Status get_in_range(const char* key, int64_t* out, int64_t min, int64_t max);
  Status get_in_range(const char* key, int* out, int64_t min, int64_t max);
  // A finite number of at least 0.
  Status get_non_negative(const char* key, double* out);
  // A string that must be one of `allowed`.
  Status get_one_of(const char* key, std::string* out, const std::vector<std::string>& allowed);

  // The key's node; null when absent. Marks the key as read.
  const toml::node* node(const char* key);
  // "FILE:LINE: key 'KEY' in SECTION WHAT", at the key's value (REQUIRES: the key is present).
  Status error_at(const char* key, const std::string& what) const;
  // "FILE:LINE: SECTION WHAT", at the table itself.
  Status error(const std::string& what) const;
  // The key must be present: "FILE:LINE: SECTION needs 'KEY'" otherwise.
  Status require(const char* key) const;

  // Refuses the first key (in file order) that no get() or node() asked for.
  Status finish() const;

  const std::string& file() const { return file_; }
  const std::string& section() const { return section_; }

 private:
  Status wrong(const toml::node& n, const char* key, const char* expected) const;
  const toml::table& table_;
  std::string file_;
  std::string section_;
  std::set<std::string> seen_;
};

}  // namespace mecha::config
