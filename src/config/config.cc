#include "config/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "config/claude_settings.h"
#include "config/hook_settings.h"
#include "config/mcp_sources.h"
#include "config/permission_sources.h"
#include "config/project_trust.h"
#include "config/section_readers.h"
#include "config/toml_reader.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

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
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_retries", &p->max_retries, 0, 100));
  MECHA_RETURN_IF_ERROR(r.get_non_negative("retry_base_delay", &p->retry_base_delay_s));
  MECHA_RETURN_IF_ERROR(r.get("connect_timeout", &p->connect_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get("stall_timeout", &p->stall_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get_non_negative("request_timeout", &p->request_timeout_s));
  MECHA_RETURN_IF_ERROR(r.get("cache_prompts", &p->cache_prompts));
  MECHA_RETURN_IF_ERROR(r.get("max_tokens", &p->max_tokens));
  MECHA_RETURN_IF_ERROR(r.get_in_range("context_window", &p->context_window, 1024, 100'000'000));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_reply_bytes", &p->max_reply_bytes, 1, INT64_MAX));
  MECHA_RETURN_IF_ERROR(
      r.get_in_range("max_tool_input_bytes", &p->max_tool_input_bytes, 1, INT64_MAX));
  // Past some thousands of levels, copying a parsed value would overflow the stack.
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_json_depth", &p->max_json_depth, 1, 1000));
  MECHA_RETURN_IF_ERROR(r.get_one_of("tool_mode", &p->tool_mode, {"native", "text"}));
  for (const auto& [key, allowed] : kTextTemplatePlaceholders) {
    std::string* out = key == "tools_prompt_template"  ? &p->tools_prompt_template
                       : key == "observation_template" ? &p->observation_template
                                                       : &p->format_error_template;
    MECHA_RETURN_IF_ERROR(r.get(key.c_str(), out));
    if (std::string bad = unknown_placeholder(*out, allowed); !bad.empty()) {
      return r.error_at(key.c_str(),
                        fmt::format("uses {}, which it does not know (it knows {{{{{}}}}})", bad,
                                    fmt::join(allowed, "}}, {{")));
    }
  }
  MECHA_RETURN_IF_ERROR(r.finish());
  if (p->kind.empty() && !whole) return ok_status();
  if (p->kind.empty()) {
    return Status::error(
        fmt::format("{}: {} needs kind = \"openai\" or \"anthropic\"", where(t, file), section));
  }
  if (p->kind != "openai" && p->kind != "anthropic") {
    return Status::error(
        fmt::format("{}: unknown provider kind \"{}\" in {} (expected \"openai\" or \"anthropic\")",
                    where(*t.get("kind"), file), p->kind, section));
  }
  if (p->base_url.empty()) {
    p->base_url =
        p->kind == "anthropic" ? "https://api.anthropic.com/v1" : "https://api.openai.com/v1";
  }
  if (p->api_key_env.empty() && p->kind == "anthropic") p->api_key_env = "ANTHROPIC_API_KEY";
  return ok_status();
}

Status read_providers(const toml::node& value, const Reading& reading, Config* c) {
  auto t = table_of(value, reading.file, "[providers]");
  if (!t) return t.status();
  for (const auto& [name, node] : **t) {
    auto p_table = table_of(node, reading.file, fmt::format("[providers.{}]", name.str()));
    if (!p_table) return p_table.status();
    ProviderConfig p;
    MECHA_RETURN_IF_ERROR(
        read_provider(std::string(name.str()), **p_table, reading.file, reading.whole, &p));
    c->providers[p.name] = p;
  }
  return ok_status();
}

Status read_pricing(const toml::node& value, const Reading& reading, Config* c) {
  auto t = table_of(value, reading.file, "[pricing]");
  if (!t) return t.status();
  for (const auto& [model, node] : **t) {
    std::string section = fmt::format("[pricing.\"{}\"]", model.str());
    auto price_table = table_of(node, reading.file, section);
    if (!price_table) return price_table.status();
    TableReader r(**price_table, reading.file, section);
    Price p;
    p.cache_read_per_mtok = -1;
    p.cache_write_per_mtok = -1;
    // A negative price would make a run's cost fall, so a cost ceiling never fires.
    MECHA_RETURN_IF_ERROR(r.get_non_negative("input_per_mtok", &p.input_per_mtok));
    MECHA_RETURN_IF_ERROR(r.get_non_negative("output_per_mtok", &p.output_per_mtok));
    MECHA_RETURN_IF_ERROR(r.get_non_negative("cache_read_per_mtok", &p.cache_read_per_mtok));
    MECHA_RETURN_IF_ERROR(r.get_non_negative("cache_write_per_mtok", &p.cache_write_per_mtok));
    MECHA_RETURN_IF_ERROR(r.finish());
    if (p.cache_read_per_mtok < 0) p.cache_read_per_mtok = p.input_per_mtok / 10;
    if (p.cache_write_per_mtok < 0) p.cache_write_per_mtok = p.input_per_mtok * 1.25;
    c->pricing.set(std::string(model.str()), p);
  }
  return ok_status();
}

Status read_limits(const toml::node& value, const Reading& reading, Config* c) {
  auto t = table_of(value, reading.file, "[limits]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[limits]");
  MECHA_RETURN_IF_ERROR(r.get("max_turns", &c->limits.max_turns));
  MECHA_RETURN_IF_ERROR(r.get("max_time", &c->limits.max_time_s));
  MECHA_RETURN_IF_ERROR(r.get("max_cost", &c->limits.max_cost_usd));
  return r.finish();
}

}  // namespace

Status read_permissions(const toml::node& value, const Reading& reading, Config* c) {
  return add_toml_permissions(value, {reading.file, ""}, &c->permissions);
}

namespace {

using SectionReader = Status (*)(const toml::node& value, const Reading& reading, Config* c);
struct Section {
  std::string_view key;
  SectionReader read;
};

// The tables mecha reads, in the order they are read: [sandbox] needs the providers.
constexpr Section kSections[] = {
    {"providers", read_providers},
    {"pricing", read_pricing},
    {"limits", read_limits},
    {"bash", read_bash},
    {"sandbox", read_sandbox},
    {"guard", read_guard},
    {"subagents", read_subagents},
    {"model_aliases", read_model_aliases},
    {"permissions", read_permissions},
    {"hooks", read_hooks},
    {"mcp_servers", read_mcp_servers},
    {"web", read_web},
    {"memory", read_memory},
    {"mail", read_mail},
    {"messaging", read_messaging},
    {"security", read_security},
    {"tools", read_tools},
    {"compaction", read_compaction},
    {"loop", read_loop},
};

// Tables of features planned but not built: refused by name, so that a config written for
// them does not silently do nothing.
constexpr std::string_view kPlannedSections[] = {"server"};

// The top level's keys that are neither `provider` nor a table mecha reads, the first in
// file order, refused with the file, line and table.
Status refuse_unknown_tables(const toml::table& t, const std::string& file) {
  const toml::node* first = nullptr;
  std::string_view first_key;
  for (const auto& [k, v] : t) {
    bool known = k.str() == "provider";
    for (const Section& s : kSections) known |= k.str() == s.key;
    if (known) continue;
    if (first == nullptr || v.source().begin.line < first->source().begin.line) {
      first = &v;
      first_key = k.str();
    }
  }
  if (first == nullptr) return ok_status();
  std::string name = first->is_array_of_tables() ? fmt::format("[[{}]]", first_key)
                                                 : fmt::format("[{}]", first_key);
  for (std::string_view planned : kPlannedSections) {
    if (first_key == planned) {
      return Status::error(fmt::format(
          "{}: {} is not supported yet by this mecha (it is planned, and until then it would "
          "do nothing); remove it",
          where(*first, file), name));
    }
  }
  std::string tables;
  for (const Section& s : kSections)
    tables += fmt::format("{}{}", tables.empty() ? "" : ", ", s.key);
  if (!first->is_table() && !first->is_array_of_tables()) {
    return Status::error(
        fmt::format("{}: unknown key '{}' in the top level (keys: provider; tables: {})",
                    where(*first, file), first_key, tables));
  }
  return Status::error(
      fmt::format("{}: unknown table {} (tables: {})", where(*first, file), name, tables));
}

Result<Config> interpret(const toml::table& t, const std::string& file, bool whole) {
  Config c;
  const Reading reading{file, whole};
  MECHA_RETURN_IF_ERROR(refuse_unknown_tables(t, file));
  if (const toml::node* p = t.get("provider")) {
    auto v = p->value<std::string>();
    if (!v)
      return Status::error(
          fmt::format("{}: key 'provider' in the top level must be a string", where(*p, file)));
    c.default_provider = *v;
  }
  for (const Section& s : kSections) {
    if (const toml::node* n = t.get(s.key)) MECHA_RETURN_IF_ERROR(s.read(*n, reading, &c));
  }
  if (whole && !c.default_provider.empty() && !c.providers.count(c.default_provider)) {
    return Status::error(fmt::format("{}: provider = \"{}\" names no [providers.{}] table", file,
                                     c.default_provider, c.default_provider));
  }
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

// Later wins key by key; tables merge recursively, anything else is replaced whole (the
// lists that add up over the files are joined by load_config).
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

struct ProjectTrust {
  FileIdentity id;
  TrustVerdict verdict = TrustVerdict::kUntrusted;
};

Result<ProjectTrust> project_trust(const std::filesystem::path& file, std::string_view text,
                                   const std::optional<std::filesystem::path>& trust_file) {
  ProjectTrust trust{identify(file, text), TrustVerdict::kUntrusted};
  if (trust_file) {
    auto store = TrustStore::load(*trust_file);
    if (!store) return store.status();
    trust.verdict = store->check(trust.id.path, trust.id.sha256);
  }
  return trust;
}

std::string untrusted_because(const ProjectTrust& trust) {
  return trust.verdict == TrustVerdict::kChanged ? "changed since you trusted it"
                                                 : "is not trusted";
}

// Refuses an untrusted project file that sets security keys, naming them all at once.
Status check_project_trust(const ProjectTrust& trust, const toml::table& project,
                           const toml::table& base) {
  if (trust.verdict == TrustVerdict::kTrusted) return ok_status();
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
      trust.id.path, untrusted_because(trust), listed, shell_quoted(trust.id.path)));
}

// Hooks run as the user's own commands, outside the sandbox: an untrusted project file's
// are left out (not refused, so the rest of the file still applies), with this note.
std::string untrusted_hooks_note(const ProjectTrust& trust, const toml::node& hooks) {
  return fmt::format(
      "{}: [hooks] left out: {} {} (hooks run as your own commands, outside the sandbox); read "
      "it, and if you accept what it does, run: mecha trust {}",
      where(hooks, trust.id.path), trust.id.path, untrusted_because(trust),
      shell_quoted(trust.id.path));
}

// The permissions of every source, in the order of permission_settings.h. `tables` are the
// mecha files read (the user's or the explicit one, then the project's when
// `with_project`).
Result<PermissionSettings> merge_permissions(const std::vector<ClaudeSettingsFile>& claude,
                                             const std::vector<toml::table>& tables,
                                             const std::vector<std::string>& sources,
                                             bool with_project, TrustVerdict project_verdict) {
  PermissionSettings p;
  auto add_toml = [&](size_t i, std::string untrusted_why) -> Status {
    const toml::node* n = tables[i].get("permissions");
    if (n == nullptr) return ok_status();
    return add_toml_permissions(*n, {sources[i], std::move(untrusted_why)}, &p);
  };
  const size_t mecha_user_files = tables.size() - (with_project ? 1 : 0);
  for (const auto& f : claude) {
    if (!f.project) MECHA_RETURN_IF_ERROR(add_json_permissions(f, &p));
  }
  for (size_t i = 0; i < mecha_user_files; ++i) MECHA_RETURN_IF_ERROR(add_toml(i, ""));
  for (const auto& f : claude) {
    if (f.project) MECHA_RETURN_IF_ERROR(add_json_permissions(f, &p));
  }
  if (with_project) {
    const char* why = project_verdict == TrustVerdict::kTrusted   ? ""
                      : project_verdict == TrustVerdict::kChanged ? "changed since you trusted it"
                                                                  : "is not trusted";
    MECHA_RETURN_IF_ERROR(add_toml(tables.size() - 1, why));
  }
  return p;
}

// The hooks of every source, in the same order as the permissions: ~/.claude/settings.json,
// the mecha files' [hooks] (an untrusted project file's were left out already), then the
// tree's Claude Code files, whose hooks count only once the user trusts them.
Result<HookSettings> merge_hooks(const std::vector<ClaudeSettingsFile>& claude,
                                 const std::vector<Config>& configs,
                                 std::vector<std::string> notes) {
  HookSettings h;
  auto add_json = [&](const ClaudeSettingsFile& f) -> Status {
    auto it = f.doc.find("hooks");
    if (it == f.doc.end()) return ok_status();
    if (!f.trusted) {
      notes.push_back(fmt::format(
          "{}:{}: hooks left out: {} is not trusted (hooks run as your own commands, outside "
          "the sandbox); read it, and if you accept what it does, run: mecha trust {}",
          f.path, std::max(1, line_of(f.text, "\"hooks\"")), f.path, shell_quoted(f.path)));
      return ok_status();
    }
    return add_json_hooks(*it, f.path, f.text, &h);
  };
  for (const auto& f : claude) {
    if (!f.project) MECHA_RETURN_IF_ERROR(add_json(f));
  }
  for (const Config& file : configs) {
    for (const auto& [event, groups] : file.hooks.events) {
      auto& to = h.events[event];
      to.insert(to.end(), groups.begin(), groups.end());
    }
  }
  for (const auto& f : claude) {
    if (f.project) MECHA_RETURN_IF_ERROR(add_json(f));
  }
  h.notes.insert(h.notes.begin(), notes.begin(), notes.end());
  return h;
}

// A project's config.toml is a few kilobytes; past this it is not one.
constexpr uintmax_t kMaxProjectConfigBytes = 4 << 20;

// Claude Code keeps its state in ~/.claude.json too (history, settings of each project), so
// the file may be large; past this it is refused rather than read.
constexpr uintmax_t kMaxClaudeFileBytes = 64 << 20;

Result<std::optional<Json>> read_json_file(const std::optional<std::filesystem::path>& path,
                                           std::string* text) {
  std::error_code ec;
  if (!path || !std::filesystem::exists(*path, ec)) return std::optional<Json>();
  if (!std::filesystem::is_regular_file(*path, ec))
    return Status::error(fmt::format("{} is not a regular file", path->string()));
  uintmax_t size = std::filesystem::file_size(*path, ec);
  if (!ec && size > kMaxClaudeFileBytes) {
    return Status::error(fmt::format("{} is {} bytes, more than the {} mecha reads", path->string(),
                                     size, kMaxClaudeFileBytes));
  }
  auto read = read_file(*path);
  if (!read) return read.status();
  *text = std::move(*read);
  auto doc = parse_json(*text, path->string());
  if (!doc) return doc.status();
  if (!doc->is_object()) {
    return Status::error(
        fmt::format("{}: must hold a JSON object, not {}", path->string(), json_type_name(*doc)));
  }
  return std::optional<Json>(std::move(*doc));
}

// Claude Code's servers, lowest precedence first: the user scope, the project's .mcp.json
// (by consent), the user's local scope for this tree.
Status add_claude_servers(const ConfigFiles& files, McpServerSet* mcp) {
  std::string user_text;
  auto user = read_json_file(files.claude_json_file, &user_text);
  if (!user) return user.status();
  const std::string user_path = files.claude_json_file ? files.claude_json_file->string() : "";
  if (*user && (*user)->contains("mcpServers"))
    MECHA_RETURN_IF_ERROR(mcp->add_claude((**user)["mcpServers"], user_path, user_path));

  std::error_code ec;
  if (files.mcp_json_file && std::filesystem::exists(*files.mcp_json_file, ec) &&
      !std::filesystem::is_regular_file(*files.mcp_json_file, ec)) {
    // A device or a pipe (a link in a cloned tree can point anywhere) would never end.
    mcp->add_note(fmt::format("{} is not a regular file; its MCP servers are not read",
                              files.mcp_json_file->string()));
  } else if (files.mcp_json_file && std::filesystem::exists(*files.mcp_json_file, ec)) {
    uintmax_t size = std::filesystem::file_size(*files.mcp_json_file, ec);
    if (!ec && size > kMaxClaudeFileBytes) {
      return Status::error(fmt::format("{} is {} bytes, more than the {} mecha reads",
                                       files.mcp_json_file->string(), size, kMaxClaudeFileBytes));
    }
    auto text = read_file(*files.mcp_json_file);
    if (!text) return text.status();
    auto trust = project_trust(*files.mcp_json_file, *text, files.trust_file);
    if (!trust) return trust.status();
    const FileIdentity& id = trust->id;
    const TrustVerdict* verdict = &trust->verdict;
    auto doc = parse_json(*text, id.path);
    if (*verdict != TrustVerdict::kTrusted) {
      // Its names only, for the note; what it would run is not read further.
      const Json none = Json::object();
      const Json& servers =
          doc && doc->is_object() && doc->contains("mcpServers") ? (*doc)["mcpServers"] : none;
      if (servers.is_object() && !servers.empty()) {
        mcp->leave_out_claude(servers, id.path);
      } else if (!doc || !doc->is_object()) {
        mcp->add_note(fmt::format(
            "{} is not trusted (nor a JSON object); nothing of it is read. If it is meant to "
            "configure MCP servers, fix it, read it, and run: mecha trust {}",
            id.path, shell_quoted(id.path)));
      }
    } else {
      if (!doc) return doc.status();
      if (!doc->is_object()) {
        return Status::error(
            fmt::format("{}: must hold a JSON object, not {}", id.path, json_type_name(*doc)));
      }
      if (doc->contains("mcpServers"))
        MECHA_RETURN_IF_ERROR(mcp->add_claude((*doc)["mcpServers"], id.path, id.path));
    }
  }

  if (*user && files.work_tree) {
    const Json* projects = (*user)->contains("projects") ? &(**user)["projects"] : nullptr;
    const std::string tree = files.work_tree->string();
    if (projects && projects->is_object() && projects->contains(tree)) {
      const Json& entry = (*projects)[tree];
      if (entry.is_object() && entry.contains("mcpServers")) {
        MECHA_RETURN_IF_ERROR(mcp->add_claude(
            entry["mcpServers"], fmt::format("{}: projects.\"{}\"", user_path, tree), user_path));
      }
    }
  }
  return ok_status();
}

}  // namespace

std::string unknown_placeholder(std::string_view text, const std::vector<std::string>& allowed) {
  for (size_t at = text.find("{{"); at != std::string_view::npos; at = text.find("{{", at + 2)) {
    size_t end = text.find("}}", at + 2);
    if (end == std::string_view::npos) return "{{";
    std::string_view name = text.substr(at + 2, end - at - 2);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return fmt::format("{{{{{}}}}}", name);
    }
  }
  return "";
}

ConfigFiles default_config_files(const std::filesystem::path& work_tree) {
  ConfigFiles f;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    f.user_file = std::filesystem::path(xdg) / "mecha" / "config.toml";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    f.user_file = std::filesystem::path(home) / ".config" / "mecha" / "config.toml";
  }
  f.project_file = work_tree / ".mecha" / "config.toml";
  if (const char* home = std::getenv("HOME"); home && *home) {
    f.claude_user_file = std::filesystem::path(home) / ".claude" / "settings.json";
  }
  f.claude_project_file = work_tree / ".claude" / "settings.json";
  f.claude_project_local = work_tree / ".claude" / "settings.local.json";
  if (auto trust = TrustStore::default_file()) f.trust_file = *trust;
  if (const char* dir = std::getenv("CLAUDE_CONFIG_DIR"); dir && *dir) {
    f.claude_json_file = std::filesystem::path(dir) / ".claude.json";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    f.claude_json_file = std::filesystem::path(home) / ".claude.json";
  }
  f.mcp_json_file = work_tree / ".mcp.json";
  f.work_tree = work_tree;
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
  auto claude = read_claude_settings({files.claude_user_file, files.claude_project_file,
                                      files.claude_project_local, files.trust_file});
  if (!claude) return claude.status();
  McpServerSet mcp(files.env);
  if (!files.explicit_file) MECHA_RETURN_IF_ERROR(add_claude_servers(files, &mcp));
  toml::table merged;
  TrustVerdict project_verdict = TrustVerdict::kTrusted;
  std::vector<toml::table> tables;
  std::vector<Config> configs;
  std::vector<std::string> sources;
  std::vector<std::string> hook_notes;
  for (const auto& p : paths) {
    if (with_project && &p == &paths.back()) {
      // The tree's file may be a link to anything: a device or a pipe would never end.
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) {
        return Status::error(
            fmt::format("{} is not a regular file; mecha does not read it", p.string()));
      }
      if (uintmax_t size = std::filesystem::file_size(p, ec);
          !ec && size > kMaxProjectConfigBytes) {
        return Status::error(fmt::format("{} is {} bytes, more than the {} mecha reads", p.string(),
                                         size, kMaxProjectConfigBytes));
      }
    }
    auto text = read_file(p);
    if (!text) return text.status();
    auto t = parse_table(*text, p.string());
    if (!t) return t.status();
    // The trust check sees the very bytes that are parsed, so a file changed in between
    // cannot pass with the old content's trust.
    std::optional<ProjectTrust> trust;
    if (with_project && &p == &paths.back()) {
      auto checked = project_trust(p, *text, files.trust_file);
      if (!checked) return checked.status();
      trust = std::move(*checked);
      project_verdict = trust->verdict;
      if (const toml::node* hooks = t->get("hooks");
          hooks && trust->verdict != TrustVerdict::kTrusted) {
        hook_notes.push_back(untrusted_hooks_note(*trust, *hooks));
        t->erase("hooks");
      }
    }
    // Each file is checked on its own, so an error names the file and line it is in.
    auto c = interpret(*t, p.string(), false);
    if (!c) return c.status();
    if (trust) MECHA_RETURN_IF_ERROR(check_project_trust(*trust, *t, merged));
    // Servers are applied file by file, in order, each as its trust allows; the merge and the
    // final reading below never see them.
    if (const toml::node* servers = t->get("mcp_servers")) {
      MECHA_RETURN_IF_ERROR(mcp.add_toml(
          *servers, p.string(), !trust || trust->verdict == TrustVerdict::kTrusted, !trust));
      t->erase("mcp_servers");
    }
    if (paths.size() > 1) merge_into(merged, *t);
    tables.push_back(std::move(*t));
    configs.push_back(std::move(*c));
    sources.push_back(p.string());
  }
  // toml++ does not copy a node's file and line, so what only the merge can check (a
  // provider completed by the other file) names both files.
  std::string name = sources.empty()      ? "(defaults)"
                     : sources.size() > 1 ? fmt::format("{} merged with {}", sources[0], sources[1])
                                          : sources[0];
  auto c = interpret(tables.size() == 1 ? tables[0] : merged, name, true);
  if (!c) return c.status();
  // What adds up over the files, and what keeps each file's lines: from each file's reading.
  c->guard.protected_paths.clear();
  c->guard.secrets.clear();
  c->guard.rules.clear();
  for (size_t i = 0; i < configs.size(); ++i) {
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(c->guard.protected_paths, configs[i].guard.protected_paths);
    append(c->guard.secrets, configs[i].guard.secrets);
    append(c->guard.rules, configs[i].guard.rules);
    if (tables[i].contains("subagents")) c->subagents = configs[i].subagents;
  }
  // Hooks and permissions add up over the files, in file order (the merged table replaced one
  // file's lists with the other's).
  auto hooks = merge_hooks(*claude, configs, std::move(hook_notes));
  if (!hooks) return hooks.status();
  c->hooks = std::move(*hooks);
  c->sources = sources;
  auto permissions = merge_permissions(*claude, tables, sources, with_project, project_verdict);
  if (!permissions) return permissions.status();
  c->permissions = std::move(*permissions);
  c->notes = mcp.notes();
  auto servers = std::move(mcp).finish();
  if (!servers) return servers.status();
  c->mcp_servers = std::move(*servers);
  return c;
}

}  // namespace mecha::config
