#include "config/agent_def.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/sha256.h"
#include "base/text.h"
#include "config/builtin_agents.h"
#include "config/config.h"
#include "config/section_readers.h"
#include "config/toml_reader.h"
#include "config/yaml_limits.h"

namespace mecha::config {
namespace {

constexpr size_t kMaxDefinitionBytes = 256 * 1024;
constexpr int kMaxTurnsLimit = 1000;
constexpr size_t kMaxClaudeNameBytes = 128;

// Claude Code's documented fields that mecha reads but does not act on (yet); `color` only
// colours Claude Code's own /agents screen.
constexpr std::string_view kUnsupportedClaudeFields[] = {
    "mcpServers", "hooks", "skills", "memory", "isolation", "effort", "background", "color"};

// A field's value, from TOML or YAML, in the few types a definition uses.
struct Value {
  enum class Type { kNull, kString, kInteger, kBoolean, kList, kOther };
  Type type = Type::kNull;
  std::string text;  // kString; for kOther, what it was ("a table", "a float")
  int64_t integer = 0;
  bool boolean = false;
  std::vector<Value> items;
  int line = 0;  // 1-based line in the file; 0 when unknown
};

std::string type_name(const Value& v) {
  switch (v.type) {
    case Value::Type::kNull:
      return "nothing";
    case Value::Type::kString:
      return "a string";
    case Value::Type::kInteger:
      return "an integer";
    case Value::Type::kBoolean:
      return "a boolean";
    case Value::Type::kList:
      return "a list";
    case Value::Type::kOther:
      return v.text;
  }
  return "?";
}

struct Field {
  std::string key;
  Value value;
};

// A value in one short line, for `mecha agents`: "plan", "[a, b]", "(a mapping)".
std::string brief(const Value& v) {
  std::string out;
  switch (v.type) {
    case Value::Type::kNull:
      out = "(empty)";
      break;
    case Value::Type::kString:
      out = v.text;
      break;
    case Value::Type::kInteger:
      out = std::to_string(v.integer);
      break;
    case Value::Type::kBoolean:
      out = v.boolean ? "true" : "false";
      break;
    case Value::Type::kList: {
      std::vector<std::string> items;
      for (const auto& i : v.items) items.push_back(brief(i));
      out = fmt::format("[{}]", fmt::join(items, ", "));
      break;
    }
    case Value::Type::kOther:
      out = fmt::format("({})", v.text);
      break;
  }
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out;
}

// "Task(a, b)" or "Agent(a)": true with the names inside (none for "Task()").
bool task_with_agents(std::string_view entry, std::vector<std::string>* agents) {
  std::string_view head;
  if (entry.substr(0, 5) == "Task(") head = "Task(";
  if (entry.substr(0, 6) == "Agent(") head = "Agent(";
  if (head.empty() || entry.back() != ')') return false;
  std::string_view inside = entry.substr(head.size(), entry.size() - head.size() - 1);
  size_t pos = 0;
  while (pos <= inside.size()) {
    size_t comma = inside.find(',', pos);
    if (comma == std::string_view::npos) comma = inside.size();
    std::string_view name = trim(inside.substr(pos, comma - pos));
    if (!name.empty()) agents->emplace_back(name);
    pos = comma + 1;
  }
  return true;
}

// Sorts `tools` entries: Task(...) and Agent into Task with its targets, mcp__ forms into
// mcp_tools; the rest stay.
void sort_tool_entries(AgentDef* def) {
  std::vector<std::string> kept;
  for (const std::string& entry : *def->tools) {
    std::vector<std::string> agents;
    if (task_with_agents(entry, &agents)) {
      if (!def->task_agents) def->task_agents.emplace();
      for (auto& a : agents) {
        if (std::find(def->task_agents->begin(), def->task_agents->end(), a) ==
            def->task_agents->end())
          def->task_agents->push_back(std::move(a));
      }
      if (std::find(kept.begin(), kept.end(), "Task") == kept.end()) kept.emplace_back("Task");
    } else if (entry.rfind("mcp__", 0) == 0) {
      def->mcp_tools.push_back(entry);
    } else {
      // Claude Code's newer name for Task.
      std::string name = entry == "Agent" ? "Task" : entry;
      if (std::find(kept.begin(), kept.end(), name) == kept.end()) kept.push_back(name);
    }
  }
  // A bare `Task` beside `Task(a)` lifts the limit, as it does in Claude Code.
  if (std::find(def->tools->begin(), def->tools->end(), "Task") != def->tools->end() ||
      std::find(def->tools->begin(), def->tools->end(), "Agent") != def->tools->end())
    def->task_agents.reset();
  def->tools = std::move(kept);
}

// Reads one definition's fields; `where(line)` names the file and line in messages.
class DefReader {
 public:
  DefReader(std::string file, AgentSource source, std::vector<std::string>* warnings = nullptr)
      : file_(std::move(file)), source_(source), warnings_(warnings) {}

  std::string where(int line) const { return line > 0 ? fmt::format("{}:{}", file_, line) : file_; }

  Result<AgentDef> read(const std::vector<Field>& fields, int start_line) {
    AgentDef def;
    def.source = source_;
    def.origin = file_;
    std::set<std::string> seen;
    bool has_name = false;
    bool has_description = false;
    for (const Field& f : fields) {
      const std::string canonical = canonical_key(f.key);
      if (canonical.empty() && is_claude_code_source(source_)) {
        // Claude Code ignores what it does not know; so does mecha, saying so.
        if (warnings_) {
          warnings_->push_back(
              fmt::format("{}: field '{}' is not one of Claude Code's agent fields; ignored",
                          where(f.value.line), f.key));
        }
        continue;
      }
      if (canonical.empty()) {
        return Status::error(fmt::format(
            "{}: unknown field '{}' in agent definition (fields: name, description, tools, "
            "disallowedTools, {}maxTurns, model, provider, permissionMode, trusted_output, "
            "answer_shape)",
            where(f.value.line), f.key, source_ == AgentSource::kConfig ? "system_prompt, " : ""));
      }
      if (!seen.insert(canonical == "unsupported" ? f.key : canonical).second) {
        return Status::error(
            fmt::format("{}: field '{}' is given twice (as '{}' and another "
                        "spelling); give it once",
                        where(f.value.line), canonical, f.key));
      }
      const Value& v = f.value;
      if (canonical == "unsupported") {
        def.unsupported.push_back(fmt::format("{}: {}", f.key, brief(v)));
      } else if (canonical == "name") {
        MECHA_RETURN_IF_ERROR(string_field(f, &def.name));
        has_name = true;
      } else if (canonical == "description") {
        MECHA_RETURN_IF_ERROR(string_field(f, &def.description));
        has_description = true;
      } else if (canonical == "system_prompt") {
        MECHA_RETURN_IF_ERROR(string_field(f, &def.system_prompt));
      } else if (canonical == "model") {
        MECHA_RETURN_IF_ERROR(string_field(f, &def.model));
      } else if (canonical == "provider") {
        MECHA_RETURN_IF_ERROR(string_field(f, &def.provider));
      } else if (canonical == "tools") {
        if (v.type == Value::Type::kNull) continue;  // `tools:` with nothing: as if absent
        auto list = name_list(f);
        if (!list) return list.status();
        def.tools = std::move(*list);
        def.tools_line = v.line;
        sort_tool_entries(&def);
      } else if (canonical == "disallowedTools") {
        if (v.type == Value::Type::kNull) continue;
        auto list = name_list(f);
        if (!list) return list.status();
        def.disallowed_tools = std::move(*list);
      } else if (canonical == "maxTurns") {
        if (v.type != Value::Type::kInteger) return wrong(f, "a positive integer");
        if (v.integer < 1 || v.integer > kMaxTurnsLimit) {
          return Status::error(fmt::format("{}: field '{}' must be between 1 and {}, got {}",
                                           where(v.line), f.key, kMaxTurnsLimit, v.integer));
        }
        def.max_turns = static_cast<int>(v.integer);
      } else if (canonical == "permissionMode") {
        if (v.type != Value::Type::kString) return wrong(f, "a string");
        auto mode = parse_permission_mode(v.text);
        if (!mode) {
          return Status::error(
              fmt::format("{}: field '{}': {}", where(v.line), f.key, mode.status().message()));
        }
        def.permission_mode = *mode;
        def.permission_mode_line = v.line;
      } else if (canonical == "trusted_output") {
        if (v.type != Value::Type::kBoolean) return wrong(f, "true or false");
        def.trusted_output = v.boolean;
      } else if (canonical == "answer_shape") {
        auto shape = answer_shape(f);
        if (!shape) return shape.status();
        def.answer_shape = std::move(*shape);
      }
    }
    if (!has_name) {
      return Status::error(
          fmt::format("{}: agent definition has no 'name' field", where(start_line)));
    }
    if (!has_description) {
      return Status::error(fmt::format(
          "{}: agent '{}' has no 'description' field (the parent model reads it to decide "
          "when to delegate)",
          where(start_line), def.name));
    }
    MECHA_RETURN_IF_ERROR(check_name(def.name, start_line, fields));
    return def;
  }

 private:
  std::string canonical_key(const std::string& key) const {
    static const std::map<std::string, std::string> kCommon = {
        {"name", "name"},
        {"description", "description"},
        {"tools", "tools"},
        {"disallowedTools", "disallowedTools"},
        {"disallowed_tools", "disallowedTools"},
        {"maxTurns", "maxTurns"},
        {"max_turns", "maxTurns"},
        {"model", "model"},
        {"provider", "provider"},
        {"trusted_output", "trusted_output"},
        {"permissionMode", "permissionMode"},
        {"permission_mode", "permissionMode"},
        {"answer_shape", "answer_shape"}};
    if (auto it = kCommon.find(key); it != kCommon.end()) return it->second;
    // In TOML there is no body, so the prompt is a field; in Markdown it is the body.
    if (key == "system_prompt" && source_ == AgentSource::kConfig) return key;
    if (is_claude_code_source(source_)) {
      for (std::string_view u : kUnsupportedClaudeFields) {
        if (key == u) return "unsupported";
      }
    }
    return "";
  }

  Status wrong(const Field& f, const char* expected) const {
    return Status::error(fmt::format("{}: field '{}' must be {}, got {}", where(f.value.line),
                                     f.key, expected, type_name(f.value)));
  }

  Status string_field(const Field& f, std::string* out) const {
    if (f.value.type != Value::Type::kString) return wrong(f, "a string");
    *out = f.value.text;
    return ok_status();
  }

  // A list of names, or Claude Code's comma-separated string of them.
  Result<std::vector<std::string>> name_list(const Field& f) const {
    std::vector<std::string> out;
    auto add = [&](std::string_view raw, int line) -> Status {
      std::string_view name = trim(raw);
      if (name.empty()) {
        return Status::error(
            fmt::format("{}: field '{}' has an empty tool name", where(line), f.key));
      }
      if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
      return ok_status();
    };
    if (f.value.type == Value::Type::kString) {
      std::string_view s = f.value.text;
      if (trim(s).empty()) return out;
      // Commas inside parentheses belong to the entry: "Read, Task(a, b)".
      size_t start = 0;
      int depth = 0;
      for (size_t i = 0; i <= s.size(); ++i) {
        if (i < s.size() && s[i] == '(') ++depth;
        if (i < s.size() && s[i] == ')' && depth > 0) --depth;
        if (i == s.size() || (s[i] == ',' && depth == 0)) {
          MECHA_RETURN_IF_ERROR(add(s.substr(start, i - start), f.value.line));
          start = i + 1;
        }
      }
      return out;
    }
    if (f.value.type != Value::Type::kList) {
      return wrong(f, "a list of tool names or a comma-separated string of them");
    }
    for (const Value& item : f.value.items) {
      if (item.type != Value::Type::kString) {
        return Status::error(fmt::format("{}: field '{}' must list tool names, found {}",
                                         where(item.line ? item.line : f.value.line), f.key,
                                         type_name(item)));
      }
      MECHA_RETURN_IF_ERROR(add(item.text, item.line ? item.line : f.value.line));
    }
    return out;
  }

  Result<AnswerShape> answer_shape(const Field& f) const {
    const Value& v = f.value;
    AnswerShape shape;
    if (v.type == Value::Type::kString) {
      if (v.text == "number") {
        shape.kind = AnswerShape::Kind::kNumber;
        return shape;
      }
      if (v.text == "boolean") {
        shape.kind = AnswerShape::Kind::kBoolean;
        return shape;
      }
      return Status::error(fmt::format(
          "{}: field 'answer_shape' must be \"number\", \"boolean\" or a list of allowed "
          "answers, got \"{}\"",
          where(v.line), v.text));
    }
    if (v.type != Value::Type::kList) {
      return wrong(f, "\"number\", \"boolean\" or a list of allowed answers");
    }
    shape.kind = AnswerShape::Kind::kOneOf;
    for (const Value& item : v.items) {
      if (item.type != Value::Type::kString || trim(item.text).empty()) {
        return Status::error(fmt::format(
            "{}: field 'answer_shape' must list allowed answers as non-empty strings, found {}",
            where(item.line ? item.line : v.line), type_name(item)));
      }
      shape.allowed.emplace_back(trim(item.text));
    }
    if (shape.allowed.empty()) {
      return Status::error(fmt::format(
          "{}: field 'answer_shape' is an empty list, which no answer can match; list the "
          "allowed answers",
          where(v.line)));
    }
    return shape;
  }

  Status check_name(const std::string& name, int start_line,
                    const std::vector<Field>& fields) const {
    int line = start_line;
    for (const Field& f : fields) {
      if (f.key == "name") line = f.value.line;
    }
    if (is_claude_code_source(source_)) {
      // Only ever a Task subagent_type: any printable text, bounded.
      bool ok = !trim(name).empty() && name.size() <= kMaxClaudeNameBytes &&
                std::none_of(name.begin(), name.end(), [](char c) {
                  return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
                });
      if (ok) return ok_status();
      return Status::error(fmt::format(
          "{}: field 'name' must be 1 to {} bytes of printable text, got \"{}\"", where(line),
          kMaxClaudeNameBytes, brief(Value{Value::Type::kString, name, 0, false, {}, 0})));
    }
    bool ok =
        !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        });
    if (!ok) {
      return Status::error(fmt::format(
          "{}: field 'name' must be 1 to 64 letters, digits, '_' or '-' (it becomes a tool "
          "name), got \"{}\"",
          where(line), name));
    }
    return ok_status();
  }

  std::string file_;
  AgentSource source_;
  std::vector<std::string>* warnings_;
};

// ---- TOML

Value from_toml(const toml::node& n) {
  Value v;
  v.line = static_cast<int>(n.source().begin.line);
  if (auto s = n.as_string()) {
    v.type = Value::Type::kString;
    v.text = s->get();
  } else if (auto i = n.as_integer()) {
    v.type = Value::Type::kInteger;
    v.integer = i->get();
  } else if (auto b = n.as_boolean()) {
    v.type = Value::Type::kBoolean;
    v.boolean = b->get();
  } else if (auto a = n.as_array()) {
    v.type = Value::Type::kList;
    for (const auto& item : *a) v.items.push_back(from_toml(item));
  } else {
    v.type = Value::Type::kOther;
    v.text = n.is_table() ? "a table" : n.is_floating_point() ? "a float" : "a date or time";
  }
  return v;
}

// ---- YAML

// A plain (unquoted) scalar is typed by its text, as YAML's core schema does; a quoted one is
// always a string, so `maxTurns: "5"` is refused as a string rather than read as a number.
Value scalar_from_yaml(const YAML::Node& n, int line) {
  Value v;
  v.line = line;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") {
    v.type = Value::Type::kString;
    v.text = s;
    return v;
  }
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    v.type = Value::Type::kNull;
    return v;
  }
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    v.type = Value::Type::kBoolean;
    v.boolean = s[0] == 't' || s[0] == 'T';
    return v;
  }
  int64_t i = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, i);
  if (ec == std::errc() && p == e && b != e) {
    v.type = Value::Type::kInteger;
    v.integer = i;
    return v;
  }
  double d = 0;
  auto [pd, ecd] = std::from_chars(b, e, d);
  if (ecd == std::errc() && pd == e && b != e) {
    v.type = Value::Type::kOther;
    v.text = "a float";
    return v;
  }
  v.type = Value::Type::kString;
  v.text = s;
  return v;
}

// `first_line` is the file line of the front matter's first line (YAML marks are 0-based).
// Recursive, and expands aliases: only ever called on YAML that passed check_yaml_limits, so
// it goes at most YamlLimits::max_depth deep and visits at most max_nodes nodes.
Value from_yaml(const YAML::Node& n, int first_line) {
  const int line = n.Mark().line >= 0 ? n.Mark().line + first_line : 0;
  if (n.IsScalar()) return scalar_from_yaml(n, line);
  Value v;
  v.line = line;
  if (n.IsNull()) {
    v.type = Value::Type::kNull;
  } else if (n.IsSequence()) {
    v.type = Value::Type::kList;
    for (const auto& item : n) v.items.push_back(from_yaml(item, first_line));
  } else {
    v.type = Value::Type::kOther;
    v.text = "a mapping";
  }
  return v;
}

Result<std::string> read_text(const std::filesystem::path& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::error(fmt::format("cannot read {}: {}", path.string(), ec.message()));
  if (size > kMaxDefinitionBytes) {
    return Status::error(fmt::format("{}: agent definition is {} bytes, more than the limit of {}",
                                     path.string(), size, kMaxDefinitionBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(fmt::format("cannot read {}", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<AgentDef> parse_markdown(std::string_view text, const std::string& file, AgentSource source,
                                std::vector<std::string>* warnings, std::string* name_hint);

Status read_dir(const std::filesystem::path& dir, AgentSource source, std::vector<AgentDef>* out,
                std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return ok_status();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".md" && entry.is_regular_file(ec)) {
      files.push_back(entry.path());
    }
  }
  if (ec) return Status::error(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string name_hint;
    std::vector<std::string> file_warnings;
    auto text = read_text(f);
    Result<AgentDef> def =
        text ? parse_markdown(*text, f.string(), source, &file_warnings, &name_hint)
             : Result<AgentDef>(text.status());
    if (!def && is_claude_code_source(source)) {
      // Claude Code skips a bad file; mecha keeps it by name, so asking for it says why.
      AgentDef broken;
      broken.name = name_hint.empty() ? f.stem().string() : name_hint;
      broken.source = source;
      broken.origin = f.string();
      broken.error = def.status().message();
      if (warnings) {
        warnings->push_back(fmt::format("{} (agent '{}' skipped)", broken.error, broken.name));
      }
      out->push_back(std::move(broken));
      continue;
    }
    if (!def) return def.status();
    if (warnings) warnings->insert(warnings->end(), file_warnings.begin(), file_warnings.end());
    def->sha256 = sha256_hex(*text);
    out->push_back(std::move(*def));
  }
  return ok_status();
}

// Whether a duplicate name is an error: only between mecha's own project definitions.
bool duplicate_is_error(AgentSource a, AgentSource b) {
  auto project_strict = [](AgentSource s) {
    return s == AgentSource::kConfig || s == AgentSource::kMechaDir;
  };
  return project_strict(a) && project_strict(b);
}

}  // namespace

bool AnswerShape::matches(std::string_view answer) const {
  std::string_view a = trim(answer);
  switch (kind) {
    case Kind::kNumber: {
      // A number carries a count or a measure, not text: 105 digits would carry 40 bytes of
      // a page back as "a number". 24 characters hold any double as printed.
      if (a.empty() || a.size() > kMaxNumberChars) return false;
      const char* b = a.data();
      const char* e = a.data() + a.size();
      if (*b == '+') ++b;
      double d = 0;
      auto [p, ec] = std::from_chars(b, e, d);
      return ec == std::errc() && p == e && b != e;
    }
    case Kind::kBoolean:
      return iequals(a, "true") || iequals(a, "false") || iequals(a, "yes") || iequals(a, "no");
    case Kind::kOneOf:
      return std::any_of(allowed.begin(), allowed.end(),
                         [&](const std::string& v) { return iequals(trim(v), a); });
  }
  return false;
}

std::string AnswerShape::describe() const {
  switch (kind) {
    case Kind::kNumber:
      return "a number";
    case Kind::kBoolean:
      return "a boolean";
    case Kind::kOneOf:
      return fmt::format("one of {}", fmt::join(allowed, " | "));
  }
  return "";
}

bool is_claude_code_source(AgentSource s) {
  return s == AgentSource::kClaudeDir || s == AgentSource::kUserClaudeDir;
}

bool task_only_source(AgentSource s) {
  return is_claude_code_source(s) || s == AgentSource::kUserMechaDir || s == AgentSource::kBuiltin;
}

Result<AgentDef> parse_agent_markdown(std::string_view text, const std::string& file,
                                      AgentSource source, std::vector<std::string>* warnings) {
  std::string name_hint;
  return parse_markdown(text, file, source, warnings, &name_hint);
}

namespace {

Result<AgentDef> parse_markdown(std::string_view text, const std::string& file, AgentSource source,
                                std::vector<std::string>* warnings, std::string* name_hint) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  // The front matter: a first line of `---`, then YAML up to the next line of `---`.
  auto line_end = [&](size_t pos) {
    size_t nl = text.find('\n', pos);
    return nl == std::string_view::npos ? text.size() : nl;
  };
  auto line_at = [&](size_t pos) {
    std::string_view l = text.substr(pos, line_end(pos) - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return trim(l);
  };
  if (line_at(0) != "---") {
    return Status::error(fmt::format(
        "{}:1: an agent definition starts with YAML front matter: a line '---', the fields, "
        "then another '---'",
        file));
  }
  size_t yaml_begin = std::min(line_end(0) + 1, text.size());
  size_t pos = yaml_begin;
  size_t yaml_end = std::string_view::npos;
  int line = 2;
  while (pos < text.size()) {
    if (line_at(pos) == "---") {
      yaml_end = pos;
      break;
    }
    pos = line_end(pos) + 1;
    ++line;
  }
  if (yaml_end == std::string_view::npos) {
    return Status::error(fmt::format("{}: the front matter has no closing '---' line", file));
  }
  std::string body(text.substr(std::min(line_end(yaml_end) + 1, text.size())));
  std::string yaml(text.substr(yaml_begin, yaml_end - yaml_begin));

  // The name, for a file whose YAML turns out bad: a top-level `name:` line.
  for (size_t p = 0; p < yaml.size();) {
    size_t nl = yaml.find('\n', p);
    std::string_view l = std::string_view(yaml).substr(p, nl == std::string::npos ? nl : nl - p);
    if (l.substr(0, 5) == "name:") {
      std::string_view v = trim(l.substr(5));
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        v = v.substr(1, v.size() - 2);
      }
      *name_hint = std::string(v);
      break;
    }
    if (nl == std::string::npos) break;
    p = nl + 1;
  }
  // Before any node is built: a file a repository ships may be an alias bomb (yaml_limits.h).
  MECHA_RETURN_IF_ERROR(check_yaml_limits(yaml, file, 2, "the front matter"));
  std::vector<Field> fields;
  try {
    YAML::Node root = YAML::Load(yaml);
    if (!root.IsNull() && !root.IsMap()) {
      return Status::error(fmt::format("{}:2: the front matter must be a mapping of fields", file));
    }
    for (const auto& kv : root) {
      Field f;
      f.key = kv.first.Scalar();
      f.value = from_yaml(kv.second, 2);
      if (f.value.line == 0) f.value.line = kv.first.Mark().line + 2;
      if (f.key == "name" && f.value.type == Value::Type::kString) *name_hint = f.value.text;
      fields.push_back(std::move(f));
    }
  } catch (const YAML::Exception& e) {
    int l = e.mark.line >= 0 ? e.mark.line + 2 : 0;
    return Status::error(fmt::format("{}:{}: bad YAML in the front matter: {}", file, l, e.msg));
  }
  DefReader reader(file, source, warnings);
  auto def = reader.read(fields, 1);
  if (!def) return def.status();
  std::string_view prompt = trim(body);
  def->system_prompt = std::string(prompt);
  return def;
}

}  // namespace

UserAgentDirs default_user_agent_dirs() {
  UserAgentDirs d;
  const char* home = std::getenv("HOME");
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    d.mecha = std::filesystem::path(xdg) / "mecha" / "agents";
  } else if (home && *home) {
    d.mecha = std::filesystem::path(home) / ".config" / "mecha" / "agents";
  }
  if (home && *home) d.claude = std::filesystem::path(home) / ".claude" / "agents";
  return d;
}

Status read_subagents(const toml::node& value, const Reading& reading, Config* config) {
  const toml::array* arr = value.as_array();
  if (arr == nullptr) {
    return Status::error(
        fmt::format("{}: 'subagents' must be an array of tables: write each one as [[subagents]]",
                    where(value, reading.file)));
  }
  std::vector<AgentDef> out;
  for (const auto& item : *arr) {
    const toml::table* t = item.as_table();
    if (t == nullptr) {
      return Status::error(
          fmt::format("{}: each entry of 'subagents' must be a table ([[subagents]])",
                      where(item, reading.file)));
    }
    std::vector<Field> fields;
    for (const auto& [k, v] : *t) fields.push_back({std::string(k.str()), from_toml(v)});
    const auto& src = t->source();
    DefReader reader(src.path ? *src.path : reading.file, AgentSource::kConfig);
    auto def = reader.read(fields, static_cast<int>(src.begin.line));
    if (!def) return def.status();
    out.push_back(std::move(*def));
  }
  config->subagents = std::move(out);
  return ok_status();
}

Result<std::vector<AgentDef>> load_agent_defs(const Config& config,
                                              const std::filesystem::path& work_tree,
                                              std::vector<std::string>* warnings,
                                              const UserAgentDirs& user_dirs) {
  std::vector<AgentDef> read = config.subagents;
  MECHA_RETURN_IF_ERROR(
      read_dir(work_tree / ".mecha" / "agents", AgentSource::kMechaDir, &read, warnings));
  MECHA_RETURN_IF_ERROR(
      read_dir(work_tree / ".claude" / "agents", AgentSource::kClaudeDir, &read, warnings));
  if (!user_dirs.mecha.empty()) {
    MECHA_RETURN_IF_ERROR(read_dir(user_dirs.mecha, AgentSource::kUserMechaDir, &read, warnings));
  }
  if (!user_dirs.claude.empty()) {
    MECHA_RETURN_IF_ERROR(read_dir(user_dirs.claude, AgentSource::kUserClaudeDir, &read, warnings));
  }
  std::vector<AgentDef> all;
  std::map<std::string, size_t> by_name;
  for (AgentDef& d : read) {
    auto [it, fresh] = by_name.emplace(d.name, all.size());
    if (fresh) {
      all.push_back(std::move(d));
      continue;
    }
    const AgentDef& kept = all[it->second];
    if (duplicate_is_error(kept.source, d.source)) {
      return Status::error(fmt::format("agent '{}' is defined twice: in {} and in {}; keep one",
                                       d.name, kept.origin, d.origin));
    }
    if (warnings) {
      warnings->push_back(fmt::format("{}: agent '{}' is also defined in {}, which is used",
                                      d.origin, d.name, kept.origin));
    }
  }
  for (AgentDef& b : builtin_agent_defs()) {
    bool replaced =
        std::any_of(all.begin(), all.end(), [&](const AgentDef& d) { return d.name == b.name; });
    if (!replaced) all.push_back(std::move(b));
  }
  return all;
}

Result<std::vector<std::string>> effective_tools(const AgentDef& def,
                                                 const std::vector<std::string>& available,
                                                 const std::vector<std::string>& inherited,
                                                 std::vector<std::string>* dropped) {
  auto denied = [&](const std::string& n) {
    return std::find(def.disallowed_tools.begin(), def.disallowed_tools.end(), n) !=
           def.disallowed_tools.end();
  };
  std::vector<std::string> out;
  if (!def.tools) {
    if (!is_claude_code_source(def.source) && def.source != AgentSource::kBuiltin) return out;
    for (const auto& n : inherited) {
      if (!denied(n)) out.push_back(n);
    }
    return out;
  }
  for (const auto& n : *def.tools) {
    if (std::find(available.begin(), available.end(), n) == available.end()) {
      if (def.source == AgentSource::kBuiltin) continue;
      if (is_claude_code_source(def.source)) {
        if (dropped) dropped->push_back(n);
        continue;
      }
      return Status::error(fmt::format(
          "{}: agent '{}' lists tool '{}', but no tool has that name (tools: {})", def.origin,
          def.name, n,
          available.empty() ? "(none)" : fmt::format("{}", fmt::join(available, ", "))));
    }
    if (!denied(n)) out.push_back(n);
  }
  return out;
}

}  // namespace mecha::config
