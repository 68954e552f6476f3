#include "config/config.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "config/project_trust.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

std::string where(const std::string& file, const toml::node& node) {
  const auto& src = node.source();
  if (src.begin.line == 0) return file;
  return fmt::format("{}:{}", file, src.begin.line);
}

// Reads one table's keys, refusing unknown ones and wrong types.
class TableReader {
 public:
  TableReader(const toml::table& t, std::string file, std::string section)
      : t_(t), file_(std::move(file)), section_(std::move(section)) {}

  template <class T>
  Status get(const char* key, T* out) {
    seen_.insert(key);
    const toml::node* n = t_.get(key);
    if (n == nullptr) return ok_status();
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = n->value<std::string>()) {
        *out = *v;
        return ok_status();
      }
      return wrong(*n, key, "a string");
    } else if constexpr (std::is_same_v<T, double>) {
      if (auto v = n->value<double>()) {
        *out = *v;
        return ok_status();
      }
      return wrong(*n, key, "a number");
    } else if constexpr (std::is_same_v<T, int>) {
      if (n->is_integer()) {
        *out = static_cast<int>(n->as_integer()->get());
        return ok_status();
      }
      return wrong(*n, key, "an integer");
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (n->is_integer()) {
        *out = n->as_integer()->get();
        return ok_status();
      }
      return wrong(*n, key, "an integer");
    } else if constexpr (std::is_same_v<T, std::optional<int>>) {
      int v = 0;
      bool present = n != nullptr;
      MECHA_RETURN_IF_ERROR(get(key, &v));
      if (present) *out = v;
      return ok_status();
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      double v = 0;
      MECHA_RETURN_IF_ERROR(get(key, &v));
      *out = v;
      return ok_status();
    }
  }

  // A key that must be an integer in [min, max] when present.
  template <class T>
  Status get_in_range(const char* key, T* out, int64_t min, int64_t max) {
    int64_t v = *out;
    MECHA_RETURN_IF_ERROR(get(key, &v));
    if (v < min || v > max) {
      return Status::error(
          fmt::format("{}: key '{}' in {} must be an integer from {} to {}, not {}",
                      where(file_, *t_.get(key)), key, section_, min, max, v));
    }
    *out = static_cast<T>(v);
    return ok_status();
  }

  // A number that must not be negative, when present.
  Status get_non_negative(const char* key, double* out) {
    MECHA_RETURN_IF_ERROR(get(key, out));
    if (!(*out >= 0) || !std::isfinite(*out)) {
      return Status::error(fmt::format("{}: key '{}' in {} must be a number of at least 0, not {}",
                                       where(file_, *t_.get(key)), key, section_, *out));
    }
    return ok_status();
  }

  // Marks a key as handled elsewhere.
  void known(const char* key) { seen_.insert(key); }

  Status finish() const {
    for (const auto& [k, v] : t_) {
      if (!seen_.count(std::string(k.str()))) {
        return Status::error(
            fmt::format("{}: unknown key '{}' in {}", where(file_, v), k.str(), section_));
      }
    }
    return ok_status();
  }

 private:
  Status wrong(const toml::node& n, const char* key, const char* expected) const {
    return Status::error(
        fmt::format("{}: key '{}' in {} must be {}", where(file_, n), key, section_, expected));
  }
  const toml::table& t_;
  std::string file_;
  std::string section_;
  std::set<std::string> seen_;
};

Result<const toml::table*> sub_table(const toml::table& t, const char* key, const std::string& file,
                                     const std::string& section) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return static_cast<const toml::table*>(nullptr);
  if (!n->is_table()) {
    return Status::error(
        fmt::format("{}: '{}' in {} must be a table", where(file, *n), key, section));
  }
  return n->as_table();
}

// `whole` is false for one file of several: a table may be completed by another file.
Status read_provider(const std::string& name, const toml::table& t, const std::string& file,
                     bool whole, ProviderConfig* p) {
  std::string section = fmt::format("[providers.{}]", name);
  TableReader r(t, file, section);
  p->name = name;
  MECHA_RETURN_IF_ERROR(r.get("kind", &p->kind));
  MECHA_RETURN_IF_ERROR(r.get("base_url", &p->base_url));
  MECHA_RETURN_IF_ERROR(r.get("model", &p->model));
  MECHA_RETURN_IF_ERROR(r.get("api_key_env", &p->api_key_env));
  MECHA_RETURN_IF_ERROR(r.get("max_retries", &p->max_retries));
  MECHA_RETURN_IF_ERROR(r.get("connect_timeout", &p->connect_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get("stall_timeout", &p->stall_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get("max_tokens", &p->max_tokens));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_reply_bytes", &p->max_reply_bytes, 1, INT64_MAX));
  MECHA_RETURN_IF_ERROR(
      r.get_in_range("max_tool_input_bytes", &p->max_tool_input_bytes, 1, INT64_MAX));
  // Past some thousands of levels, copying a parsed value would overflow the stack.
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_json_depth", &p->max_json_depth, 1, 1000));
  MECHA_RETURN_IF_ERROR(r.finish());
  if (p->kind.empty() && !whole) return ok_status();
  if (p->kind.empty()) {
    return Status::error(
        fmt::format("{}: {} needs kind = \"openai\" or \"anthropic\"", where(file, t), section));
  }
  if (p->kind != "openai" && p->kind != "anthropic") {
    return Status::error(
        fmt::format("{}: unknown provider kind \"{}\" in {} (expected \"openai\" or \"anthropic\")",
                    where(file, *t.get("kind")), p->kind, section));
  }
  if (p->base_url.empty()) {
    p->base_url =
        p->kind == "anthropic" ? "https://api.anthropic.com/v1" : "https://api.openai.com/v1";
  }
  if (p->api_key_env.empty() && p->kind == "anthropic") p->api_key_env = "ANTHROPIC_API_KEY";
  return ok_status();
}

Status read_pricing(const toml::table& t, const std::string& file, PriceTable* table) {
  for (const auto& [model, node] : t) {
    std::string section = fmt::format("[pricing.\"{}\"]", model.str());
    if (!node.is_table()) {
      return Status::error(fmt::format("{}: {} must be a table", where(file, node), section));
    }
    TableReader r(*node.as_table(), file, section);
    Price p;
    p.cache_read_per_mtok = -1;
    p.cache_write_per_mtok = -1;
    // A negative price would make a run's cost fall, so a cost ceiling never fires.
    MECHA_RETURN_IF_ERROR(r.get_non_negative("input_per_mtok", &p.input_per_mtok));
    MECHA_RETURN_IF_ERROR(r.get_non_negative("output_per_mtok", &p.output_per_mtok));
    if (node.as_table()->contains("cache_read_per_mtok")) {
      MECHA_RETURN_IF_ERROR(r.get_non_negative("cache_read_per_mtok", &p.cache_read_per_mtok));
    }
    if (node.as_table()->contains("cache_write_per_mtok")) {
      MECHA_RETURN_IF_ERROR(r.get_non_negative("cache_write_per_mtok", &p.cache_write_per_mtok));
    }
    MECHA_RETURN_IF_ERROR(r.finish());
    if (p.cache_read_per_mtok < 0) p.cache_read_per_mtok = p.input_per_mtok / 10;
    if (p.cache_write_per_mtok < 0) p.cache_write_per_mtok = p.input_per_mtok * 1.25;
    table->set(std::string(model.str()), p);
  }
  return ok_status();
}

// Sections interpreted by layers above config (they check their own keys).
const char* const kDelegatedSections[] = {"subagents",   "guard", "sandbox",     "bash",  "tools",
                                          "mcp_servers", "hooks", "permissions", "server"};

Result<Config> interpret(const toml::table& t, const std::string& file, bool whole) {
  Config c;
  TableReader top(t, file, "the top level");
  MECHA_RETURN_IF_ERROR(top.get("provider", &c.default_provider));
  for (const char* s : kDelegatedSections) top.known(s);
  top.known("providers");
  top.known("pricing");
  top.known("limits");
  MECHA_RETURN_IF_ERROR(top.finish());

  auto providers = sub_table(t, "providers", file, "the top level");
  if (!providers) return providers.status();
  if (*providers) {
    for (const auto& [name, node] : **providers) {
      if (!node.is_table()) {
        return Status::error(
            fmt::format("{}: [providers.{}] must be a table", where(file, node), name.str()));
      }
      ProviderConfig p;
      MECHA_RETURN_IF_ERROR(
          read_provider(std::string(name.str()), *node.as_table(), file, whole, &p));
      c.providers[p.name] = p;
    }
  }
  auto pricing = sub_table(t, "pricing", file, "the top level");
  if (!pricing) return pricing.status();
  if (*pricing) MECHA_RETURN_IF_ERROR(read_pricing(**pricing, file, &c.pricing));

  auto limits = sub_table(t, "limits", file, "the top level");
  if (!limits) return limits.status();
  if (*limits) {
    TableReader r(**limits, file, "[limits]");
    if ((*limits)->contains("max_turns"))
      MECHA_RETURN_IF_ERROR(r.get("max_turns", &c.limits.max_turns));
    if ((*limits)->contains("max_time"))
      MECHA_RETURN_IF_ERROR(r.get("max_time", &c.limits.max_time_s));
    if ((*limits)->contains("max_cost"))
      MECHA_RETURN_IF_ERROR(r.get("max_cost", &c.limits.max_cost_usd));
    MECHA_RETURN_IF_ERROR(r.finish());
  }
  if (whole && !c.default_provider.empty() && !c.providers.count(c.default_provider)) {
    return Status::error(fmt::format("{}: provider = \"{}\" names no [providers.{}] table", file,
                                     c.default_provider, c.default_provider));
  }
  c.table = t;
  return c;
}

// TOML allows non-ASCII text only in strings and comments, and control characters nowhere
// but tabs and line ends. toml++ 3.3 (Debian 12) reaches
// __builtin_unreachable() (undefined behaviour) when it asks whether some such characters
// elsewhere are whitespace (U+00E9, U+FEF7, ... found by fuzz/config_fuzz.cc), so they are
// refused here first, with the error toml++ would give.
Status refuse_non_ascii_outside_strings(std::string_view text, const std::string& name) {
  enum { kBare, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral } state = kBare;
  int line = 1;
  size_t line_start = 0;
  auto starts = [&](size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
  // The quotes that close a multi-line string: three, and up to two more of its content.
  auto past_closing = [&](size_t i, char q) {
    size_t n = 0;
    while (i + n < text.size() && text[i + n] == q && n < 5) ++n;
    return i + n;
  };
  size_t i = starts(0, "\xEF\xBB\xBF") ? 3 : 0;  // a byte order mark, which toml++ skips
  while (i < text.size()) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F) {
      // Control characters are refused anywhere by TOML; refused here, they cannot make this
      // scan and toml++ disagree on where a string ends.
      return Status::error(fmt::format("{}:{}:{}: control character U+{:04X} in the file", name,
                                       line, i - line_start + 1, u));
    }
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      if (state != kMultiBasic && state != kMultiLiteral) state = kBare;
      ++i;
      continue;
    }
    switch (state) {
      case kBare:
        if (static_cast<unsigned char>(c) >= 0x80) {
          return Status::error(
              fmt::format("{}:{}:{}: unexpected character outside a string or comment (text that "
                          "is not ASCII belongs in a quoted string)",
                          name, line, i - line_start + 1));
        }
        if (c == '#') {
          state = kComment;
        } else if (starts(i, "\"\"\"")) {
          state = kMultiBasic;
          i += 3;
          continue;
        } else if (c == '"') {
          state = kBasic;
        } else if (starts(i, "'''")) {
          state = kMultiLiteral;
          i += 3;
          continue;
        } else if (c == '\'') {
          state = kLiteral;
        }
        break;
      case kComment:
        break;
      case kBasic:
      case kMultiBasic:
        if (c == '\\') {
          i += 2;
          continue;
        }
        if (state == kBasic && c == '"') state = kBare;
        if (state == kMultiBasic && starts(i, "\"\"\"")) {
          i = past_closing(i, '"');
          state = kBare;
          continue;
        }
        break;
      case kLiteral:
        if (c == '\'') state = kBare;
        break;
      case kMultiLiteral:
        if (starts(i, "'''")) {
          i = past_closing(i, '\'');
          state = kBare;
          continue;
        }
        break;
    }
    ++i;
  }
  return ok_status();
}

Result<toml::table> parse_table(std::string_view text, const std::string& name) {
  MECHA_RETURN_IF_ERROR(refuse_non_ascii_outside_strings(text, name));
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return Status::error(fmt::format("{}:{}:{}: {}", name, b.line, b.column, e.description()));
  }
}

// Later wins key by key; tables merge recursively, anything else is replaced whole.
void merge_into(toml::table& base, const toml::table& over) {
  for (const auto& [k, v] : over) {
    toml::node* existing = base.get(k);
    if (existing && existing->is_table() && v.is_table()) {
      merge_into(*existing->as_table(), *v.as_table());
    } else {
      base.insert_or_assign(k, v);
    }
  }
}

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(
        fmt::format("cannot read config {}: {}", path.string(), std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Refuses an untrusted project file that sets security keys, naming them all at once.
Status check_project_trust(const std::filesystem::path& file, std::string_view text,
                           const toml::table& project, const toml::table& base,
                           const std::optional<std::filesystem::path>& trust_file) {
  FileIdentity id = identify(file, text);
  TrustVerdict verdict = TrustVerdict::kUntrusted;
  if (trust_file) {
    auto trust = TrustStore::load(*trust_file);
    if (!trust) return trust.status();
    verdict = trust->check(id.path, id.sha256);
  }
  if (verdict == TrustVerdict::kTrusted) return ok_status();
  std::vector<SecurityKey> keys = security_keys(project, base);
  if (keys.empty()) return ok_status();
  std::string listed;
  for (const auto& k : keys) {
    if (!listed.empty()) listed += ", ";
    listed += k.line > 0 ? fmt::format("{} (line {})", k.key, k.line) : k.key;
  }
  return Status::error(fmt::format(
      "{} {} and sets security keys: {}. A project's config may only tighten security until "
      "you trust it; read it, and if you accept what it does, run: mecha trust {}",
      id.path,
      verdict == TrustVerdict::kChanged ? "changed since you trusted it" : "is not trusted", listed,
      shell_quoted(id.path)));
}

}  // namespace

ConfigFiles default_config_files(const std::filesystem::path& work_tree) {
  ConfigFiles f;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    f.user_file = std::filesystem::path(xdg) / "mecha" / "config.toml";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    f.user_file = std::filesystem::path(home) / ".config" / "mecha" / "config.toml";
  }
  f.project_file = work_tree / ".mecha" / "config.toml";
  if (auto trust = TrustStore::default_file()) f.trust_file = *trust;
  return f;
}

Result<Config> parse_config(std::string_view text, const std::string& name) {
  auto t = parse_table(text, name);
  if (!t) return t.status();
  auto c = interpret(*t, name, true);
  if (!c) return c.status();
  c->sources.push_back(name);
  return c;
}

Result<Config> load_config(const ConfigFiles& files) {
  std::vector<std::filesystem::path> paths;
  bool with_project = false;
  if (files.explicit_file) {
    paths.push_back(*files.explicit_file);
  } else {
    std::error_code ec;
    if (files.user_file && std::filesystem::exists(*files.user_file, ec))
      paths.push_back(*files.user_file);
    if (files.project_file && std::filesystem::exists(*files.project_file, ec)) {
      paths.push_back(*files.project_file);
      with_project = true;
    }
  }
  toml::table merged;
  std::vector<std::string> sources;
  for (const auto& p : paths) {
    auto text = read_file(p);
    if (!text) return text.status();
    auto t = parse_table(*text, p.string());
    if (!t) return t.status();
    // Each file is checked on its own, so an error names the file it is in.
    auto c = interpret(*t, p.string(), false);
    if (!c) return c.status();
    // The trust check sees the very bytes that are parsed, so a file changed in between
    // cannot pass with the old content's trust.
    if (with_project && &p == &paths.back()) {
      MECHA_RETURN_IF_ERROR(check_project_trust(p, *text, *t, merged, files.trust_file));
    }
    merge_into(merged, *t);
    sources.push_back(p.string());
  }
  auto c = interpret(merged, sources.empty() ? "(defaults)" : sources.back(), true);
  if (!c) return c.status();
  c->sources = sources;
  return c;
}

std::string located(const toml::node& node, const std::string& what) {
  const auto& src = node.source();
  std::string file = src.path ? *src.path : std::string("config");
  if (src.begin.line == 0) return fmt::format("{}: {}", file, what);
  return fmt::format("{}:{}: {}", file, src.begin.line, what);
}

}  // namespace mecha::config
