#include "guard/git.h"

#include <fmt/format.h>

#include "guard/inline_code.h"
#include "guard/option_values.h"

namespace mecha::guard {
namespace {

using Argv = std::vector<ShellWord>;

// A pager or editor that only shows text or does nothing (`-c core.editor=true` to accept a
// message, `-c core.pager=cat`).
bool harmless_pager(const std::string& v) {
  std::string first = v.substr(0, v.find(' '));
  return first == "cat" || first == "less" || first == "more" || first == "true" || first == ":" ||
         v.empty();
}

bool shows_text(const std::string& key) {
  return key == "core.pager" || key.rfind("pager.", 0) == 0 || key == "core.editor" ||
         key == "sequence.editor";
}

}  // namespace

void git_runs(const Argv& argv, LookThrough& out) {
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.empty() || a[0] != '-') break;
    if (starts_with(a, "--config-env")) {
      refuse(out, "not-understood", "`git --config-env` sets configuration from the environment");
      return;
    }
    if (starts_with(a, "--exec-path=")) {
      refuse(out, "git-config-runs-commands",
             "`git --exec-path` makes git run its commands from another directory");
      return;
    }
    if (a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") {
      ++i;
      continue;
    }
    if (a != "-c" || i + 1 >= argv.size()) continue;
    const ShellWord& kv = argv[++i];
    size_t eq = kv.text.find('=');
    std::string key = kv.text.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : kv.text.substr(eq + 1);
    SettingKind kind = git_config_kind(key);
    if (kind == SettingKind::kData) continue;
    std::string k = lower(key);
    if (starts_with(k, "alias.") && (value.empty() || value[0] != '!')) continue;
    if (shows_text(k) && !kv.dynamic && eq != std::string::npos && harmless_pager(value)) continue;
    refuse(out, "git-config-runs-commands",
           fmt::format("`git -c {}` makes git run or load a program", key));
    return;
  }
  if (i >= argv.size()) return;
  const std::string& sub = argv[i].text;
  if (sub == "config") {
    // A write names a key and a value (or --add/--replace-all/set); --unset and reads do not.
    std::vector<const ShellWord*> operands;
    bool writes = false, unsets = false;
    for (size_t j = i + 1; j < argv.size(); ++j) {
      const std::string& a = argv[j].text;
      if (a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" ||
          a == "--comment") {
        ++j;
        continue;
      }
      if (a == "--add" || a == "--replace-all" || a == "--append") writes = true;
      if (starts_with(a, "--unset") || a == "unset" || a == "--get" || a == "get" ||
          starts_with(a, "--get-") || a == "-l" || a == "--list" || a == "list" ||
          a == "--remove-section" || a == "--rename-section")
        unsets = true;
      if (a == "set") {
        writes = true;
        continue;
      }
      if (!a.empty() && a[0] != '-') operands.push_back(&argv[j]);
    }
    if (unsets || operands.empty()) return;
    if (operands.size() >= 2) writes = true;
    if (!writes) return;
    const ShellWord& key = *operands[0];
    std::string value = operands.size() > 1 ? operands[1]->text : "";
    SettingKind kind = key.dynamic ? SettingKind::kLoads : git_config_kind(key.text);
    if (kind == SettingKind::kData) return;
    std::string k = lower(key.text);
    if (starts_with(k, "alias.") && !value.empty() && value[0] != '!' && value[0] != '-') return;
    if (shows_text(k) && harmless_pager(value)) return;
    refuse(out, "git-config-runs-commands",
           fmt::format("`git config {}` sets a key that makes git run a command or load one "
                       "(it would run outside the sandbox the next time git runs)",
                       key.shown()));
    return;
  }
  for (size_t j = i + 1; j < argv.size(); ++j) {
    if (sub == "rebase") {
      if (auto v = value_of(argv, j, "--exec"))
        out.scripts.push_back({*v, "git rebase --exec"});
      else if (auto v2 = value_of(argv, j, "-x"))
        out.scripts.push_back({*v2, "git rebase -x"});
    } else if (sub == "filter-branch") {
      for (const char* f : {"--tree-filter", "--index-filter", "--msg-filter", "--env-filter",
                            "--commit-filter", "--parent-filter", "--tag-name-filter"})
        if (argv[j].text == f && j + 1 < argv.size())
          out.scripts.push_back({argv[++j], std::string("git filter-branch ") + f});
    } else if (sub == "difftool" || sub == "mergetool") {
      if (auto v = value_of(argv, j, "--extcmd"))
        out.scripts.push_back({*v, "git difftool -x"});
      else if (auto v2 = value_of(argv, j, "-x"))
        out.scripts.push_back({*v2, "git difftool -x"});
    } else if (sub == "grep" && (argv[j].text == "-O" || starts_with(argv[j].text, "-O") ||
                                 starts_with(argv[j].text, "--open-files-in-pager"))) {
      size_t eq = argv[j].text.find('=');
      ShellWord pager = eq != std::string::npos ? tail_of(argv[j], eq + 1)
                        : argv[j].text.size() > 2 && argv[j].text[1] == 'O' ? tail_of(argv[j], 2)
                                                                            : literal_word("less");
      out.scripts.push_back({pager, "git grep -O"});
    } else if (sub == "submodule" && argv[j].text == "foreach") {
      size_t k = j + 1;
      while (k < argv.size() && !argv[k].text.empty() && argv[k].text[0] == '-') ++k;
      if (k < argv.size()) out.scripts.push_back({joined(argv, k), "git submodule foreach"});
      return;
    } else if (sub == "bisect" && argv[j].text == "run") {
      if (j + 1 < argv.size())
        out.commands.push_back(
            {Argv(argv.begin() + static_cast<long>(j + 1), argv.end()), "git bisect run"});
      return;
    }
  }
}

void git_writes(const Command& c, Operands& out) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    if (a == "--global")
      out.writes.push_back(literal_word(std::string(1, kHome) + "/.gitconfig", c.argv[i].offset));
    if (a == "--system") out.writes.push_back(literal_word("/etc/gitconfig", c.argv[i].offset));
    if (a == "-C" && i + 1 < c.argv.size()) out.reads.push_back(c.argv[++i]);
    if ((a == "-f" || a == "--file") && i + 1 < c.argv.size() && c.argv[1].text == "config")
      out.writes.push_back(c.argv[++i]);
  }
  // `git clone URL DIR` writes DIR.
  if (c.argv.size() > 3 && c.argv[1].text == "clone" &&
      c.argv.back().text.find("://") == std::string::npos && c.argv.back().text[0] != '-')
    out.writes.push_back(c.argv.back());
}

}  // namespace mecha::guard
