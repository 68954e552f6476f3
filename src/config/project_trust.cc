#include "config/project_trust.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "config/pricing.h"

namespace mecha::config {
namespace {

std::string text_of(const toml::node& n) {
  std::ostringstream s;
  n.visit([&s](const auto& v) { s << v; });
  return s.str();
}

bool same(const toml::node& a, const toml::node* b) {
  return b != nullptr && a.type() == b->type() && text_of(a) == text_of(*b);
}

const toml::table* table_at(const toml::table& t, std::string_view key) {
  const toml::node* n = t.get(key);
  return n ? n->as_table() : nullptr;
}

std::optional<double> number(const toml::node* n) {
  if (n == nullptr) return std::nullopt;
  return n->value<double>();
}

class Classifier {
 public:
  explicit Classifier(const toml::table& base) : base_(base) {}

  void top(const toml::table& project) {
    for (const auto& [k, v] : project) {
      std::string key(k.str());
      if (same(v, base_.get(key))) continue;
      // Permissions are merged by their own rule: an untrusted file's allow rules and wider
      // modes are left out with a note (permission_sources.h), not refused.
      if (key == "permissions") continue;
      if (key == "mcp_servers") continue;  // left out or narrowing only: mcp_sources.h
      if (key == "limits") {
        limits(v);
      } else if (key == "bash") {
        bash(v);
      } else if (key == "sandbox") {
        sandbox(v);
      } else if (key == "guard") {
        guard(v);
      } else if (key == "pricing") {
        pricing(v);
      } else if (key == "subagents") {
        subagents(v);
      } else if (key == "web" || key == "memory" || key == "mail" || key == "messaging" ||
                 key == "security") {
        world(key, v);
      } else if (key == "providers" && v.is_table()) {
        const toml::table* had = table_at(base_, "providers");
        for (const auto& [name, p] : *v.as_table()) {
          std::string prefix = "providers." + std::string(name.str());
          const toml::table* had_p = had ? table_at(*had, name.str()) : nullptr;
          if (!p.is_table()) {
            flag(prefix, p);
            continue;
          }
          for (const auto& [pk, pv] : *p.as_table()) {
            if (!same(pv, had_p ? had_p->get(pk.str()) : nullptr))
              flag(prefix + "." + std::string(pk.str()), pv);
          }
        }
      } else {
        flag(key, v);  // provider, tools, server, and the rest
      }
    }
  }

  std::vector<SecurityKey> keys() && {
    std::stable_sort(keys_.begin(), keys_.end(),
                     [](const SecurityKey& a, const SecurityKey& b) { return a.line < b.line; });
    return std::move(keys_);
  }

 private:
  void flag(std::string key, const toml::node& n) {
    keys_.push_back({std::move(key), static_cast<int>(n.source().begin.line)});
  }

  // Calls `each(key, value, base value or null)` for a table section, flagging a non-table.
  template <class F>
  void section(const char* name, const toml::node& v, F each) {
    section_in(name, v, table_at(base_, name), each);
  }

  // The same for a table named `name` (dotted) whose value in effect is `had` (null: none).
  template <class F>
  void section_in(const std::string& name, const toml::node& v, const toml::table* had, F each) {
    if (!v.is_table()) return flag(name, v);
    for (const auto& [k, kv] : *v.as_table()) {
      std::string key(k.str());
      const toml::node* before = had ? had->get(key) : nullptr;
      if (same(kv, before)) continue;
      if (!each(key, kv, before)) flag(fmt::format("{}.{}", name, key), kv);
    }
  }

  // [web] (with [web.search]), [memory], [mail], [messaging], [security]: every key reaches
  // the world or names where mail and notes go, except the values that only tighten.
  void world(const std::string& name, const toml::node& v) {
    auto is = [](const toml::node& n, std::string_view want) {
      return n.value<std::string>() == std::optional<std::string>(want);
    };
    auto is_false = [](const toml::node& n) {
      return n.value<bool>() == std::optional<bool>(false);
    };
    const toml::table* had = table_at(base_, name);
    section_in(name, v, had, [&](const std::string& k, const toml::node& n, const toml::node*) {
      if (name == "web" && k == "search") {
        const toml::table* had_search = had ? table_at(*had, "search") : nullptr;
        section_in("web.search", n, had_search,
                   [](const std::string&, const toml::node&, const toml::node*) { return false; });
        return true;
      }
      if (name == "web" && k == "allow_private") return is_false(n);
      if (name == "web" && k == "allowed_domains") return n.is_array() && n.as_array()->empty();
      if (name == "memory" && k == "enabled") return is_false(n);
      if (name == "messaging" && k == "approve") return is(n, "always");
      if (name == "security" && k == "mode") return is(n, "rule_of_two");
      return false;
    });
  }

  // A positive number at or below the one in effect (`fallback` when the user set none;
  // nullopt: no limit, so any positive value tightens).
  static bool at_or_below(const toml::node& v, const toml::node* before,
                          std::optional<double> fallback) {
    auto now = number(&v);
    if (!now || *now <= 0) return false;
    std::optional<double> limit = before ? number(before) : fallback;
    if (before && (!limit || *limit <= 0)) return true;  // the user's own is off or broken
    return !limit || *now <= *limit;
  }

  void limits(const toml::node& v) {
    section("limits", v, [](const std::string& k, const toml::node& n, const toml::node* before) {
      if (k == "max_turns") return at_or_below(n, before, kDefaultMaxTurns);
      if (k == "max_time" || k == "max_cost") return at_or_below(n, before, std::nullopt);
      return false;
    });
  }

  void bash(const toml::node& v) {
    section("bash", v, [](const std::string& k, const toml::node& n, const toml::node* before) {
      if (k == "default_timeout_s") return at_or_below(n, before, kDefaultBashTimeoutS);
      if (k == "max_timeout_s") return at_or_below(n, before, kDefaultBashMaxTimeoutS);
      if (k == "max_output_chars") return at_or_below(n, before, kDefaultBashMaxOutputChars);
      return false;
    });
  }

  void sandbox(const toml::node& v) {
    section("sandbox", v, [](const std::string& k, const toml::node& n, const toml::node*) {
      if (k == "mode") return n.value<std::string>() == std::optional<std::string>("bwrap");
      if (k == "network") return n.value<bool>() == std::optional<bool>(false);
      return false;
    });
  }

  void guard(const toml::node& v) {
    section("guard", v, [](const std::string& k, const toml::node& n, const toml::node* before) {
      if (k == "protected" || k == "secrets" || k == "rules") return true;
      if (k == "disable_rules") return n.is_array() && n.as_array()->empty();
      if (k == "writable") {
        if (!n.is_array() || before == nullptr || !before->is_array()) return false;
        for (const auto& e : *n.as_array()) {
          bool listed = std::any_of(before->as_array()->begin(), before->as_array()->end(),
                                    [&](const toml::node& b) { return same(e, &b); });
          if (!listed) return false;
        }
        return true;
      }
      return false;
    });
  }

  static std::optional<Price> price_of(const toml::table& t) {
    auto in = number(t.get("input_per_mtok"));
    auto out = number(t.get("output_per_mtok"));
    Price p;
    p.input_per_mtok = in.value_or(0);
    p.output_per_mtok = out.value_or(0);
    p.cache_read_per_mtok = number(t.get("cache_read_per_mtok")).value_or(p.input_per_mtok / 10);
    p.cache_write_per_mtok =
        number(t.get("cache_write_per_mtok")).value_or(p.input_per_mtok * 1.25);
    return p;
  }

  void pricing(const toml::node& v) {
    if (!v.is_table()) return flag("pricing", v);
    // What is in effect without the project file: the defaults, then the user's prices.
    PriceTable effective = PriceTable::defaults();
    if (const toml::table* had = table_at(base_, "pricing")) {
      for (const auto& [model, t] : *had) {
        if (auto p = t.is_table() ? price_of(*t.as_table()) : std::nullopt)
          effective.set(std::string(model.str()), *p);
      }
    }
    for (const auto& [model, t] : *v.as_table()) {
      std::string key = fmt::format("pricing.\"{}\"", model.str());
      if (!t.is_table()) {
        flag(key, t);
        continue;
      }
      Price now = *price_of(*t.as_table());
      std::optional<Price> before = effective.find(std::string(model.str()));
      if (before && (now.input_per_mtok < before->input_per_mtok ||
                     now.output_per_mtok < before->output_per_mtok ||
                     now.cache_read_per_mtok < before->cache_read_per_mtok ||
                     now.cache_write_per_mtok < before->cache_write_per_mtok)) {
        flag(key, t);
      }
    }
  }

  void subagents(const toml::node& v) {
    const toml::array* a = v.as_array();
    if (a == nullptr) return flag("subagents", v);
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::node& entry = *a->get(i);
      std::string prefix = fmt::format("subagents[{}]", i);
      if (!entry.is_table()) {
        flag(prefix, entry);
        continue;
      }
      for (const auto& [k, kv] : *entry.as_table()) {
        if (k.str() == "provider" ||
            (k.str() == "trusted_output" && kv.value<bool>() != std::optional<bool>(false))) {
          flag(prefix + "." + std::string(k.str()), kv);
        }
      }
    }
  }

  const toml::table& base_;
  std::vector<SecurityKey> keys_;
};

}  // namespace

std::vector<SecurityKey> security_keys(const toml::table& project, const toml::table& base) {
  Classifier c(base);
  c.top(project);
  return std::move(c).keys();
}

}  // namespace mecha::config
