#include "guard/git.h"

#include <fmt/format.h>

#include <initializer_list>
#include <optional>

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

namespace {

// `w` as git sees it after `-C base`: relative paths are taken from there.
ShellWord at_base(const std::optional<ShellWord>& base, const ShellWord& w) {
  if (!base || w.text.empty() || w.text[0] == '/' || w.text[0] == kHome) return w;
  ShellWord out = w;
  out.text = base->text + "/" + w.text;
  out.dynamic |= base->dynamic;
  out.glob |= base->glob;
  return out;
}

// Subcommands that only read the repository (git may refresh its index, which is not a
// protected part and not worth a refusal), so `git -C ../other log` stays a read.
bool reads_only(const std::string& sub, const Argv& argv, size_t from) {
  static const char* const kReaders[] = {
      "status",           "log",           "show",         "diff",         "rev-parse",
      "ls-files",         "ls-tree",       "ls-remote",    "cat-file",     "blame",
      "annotate",         "grep",          "describe",     "shortlog",     "whatchanged",
      "rev-list",         "show-ref",      "for-each-ref", "name-rev",     "merge-base",
      "count-objects",    "verify-commit", "verify-tag",   "check-ignore", "check-attr",
      "check-ref-format", "help",          "version",      "var",          "diff-tree",
      "diff-files",       "diff-index",    "show-branch",  "reflog",       "fsck"};
  for (const char* r : kReaders)
    if (sub == r) return true;
  // `git branch`, `git tag` and `git remote` with options only list.
  if (sub == "branch" || sub == "tag" || sub == "remote") {
    for (size_t j = from; j < argv.size(); ++j)
      if (!argv[j].text.empty() && argv[j].text[0] != '-') return false;
    return true;
  }
  return false;
}

// The positional operands of a subcommand from argv[from], skipping the options that take
// a value (`takes`, given without their `=value`).
Argv positionals(const Argv& argv, size_t from, std::initializer_list<const char*> takes) {
  Argv out;
  bool options_done = false;
  for (size_t j = from; j < argv.size(); ++j) {
    const std::string& a = argv[j].text;
    if (!options_done && a == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && a.size() > 1 && a[0] == '-') {
      for (const char* t : takes)
        if (a == t) {
          ++j;
          break;
        }
      continue;
    }
    out.push_back(argv[j]);
  }
  return out;
}

// The value of option `opt` anywhere in argv[from, end).
std::optional<ShellWord> option_value(const Argv& argv, size_t from, const char* opt) {
  for (size_t j = from; j < argv.size(); ++j)
    if (auto v = value_of(argv, j, opt)) return v;
  return std::nullopt;
}

// The folder `git clone URL` makes: the URL's last part, without `.git`.
ShellWord clone_folder(const ShellWord& url) {
  std::string t = url.text;
  while (t.size() > 1 && t.back() == '/') t.pop_back();
  if (t.size() > 5 && t.compare(t.size() - 5, 5, "/.git") == 0) t.resize(t.size() - 5);
  size_t cut = t.find_last_of("/:");
  std::string name = cut == std::string::npos ? t : t.substr(cut + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".git") == 0)
    name.resize(name.size() - 4);
  ShellWord w = url;
  w.text = name;
  return w;
}

ShellWord joined_path(const ShellWord& dir, const std::string& name) {
  ShellWord w = dir;
  w.text = dir.text + "/" + name;
  return w;
}

}  // namespace

void git_writes(const Command& c, Operands& out) {
  const Argv& argv = c.argv;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a == "--global")
      out.writes.push_back(literal_word(std::string(1, kHome) + "/.gitconfig", argv[i].offset));
    if (a == "--system") out.writes.push_back(literal_word("/etc/gitconfig", argv[i].offset));
  }
  // Global options: where git works (-C, composed in order), its repository and work tree.
  std::optional<ShellWord> base, git_dir, work_tree;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.empty() || a[0] != '-') break;
    if (a == "-C" && i + 1 < argv.size()) {
      base = at_base(base, argv[++i]);
    } else if (auto d = value_of(argv, i, "--git-dir")) {
      git_dir = at_base(base, *d);
    } else if (auto w = value_of(argv, i, "--work-tree")) {
      work_tree = at_base(base, *w);
    } else if (a == "-c" || a == "--namespace" || a == "--super-prefix" || a == "--config-env") {
      ++i;
    }
  }
  if (i >= argv.size()) {
    if (base) out.reads.push_back(*base);
    return;
  }
  const std::string& sub = argv[i].text;
  const size_t from = i + 1;
  const bool reading = reads_only(sub, argv, from) && !option_value(argv, from, "--output");
  // Where git writes: the folder -C names (its repository, its work tree), the repository
  // --git-dir names, and the work tree --work-tree names, whose files a checkout chooses.
  if (base) (reading ? out.reads : out.writes).push_back(*base);
  if (git_dir) (reading ? out.reads : out.writes).push_back(*git_dir);
  if (work_tree) {
    if (reading) {
      out.reads.push_back(*work_tree);
    } else {
      out.write_dirs.push_back(*work_tree);
    }
  }
  auto write = [&](const ShellWord& w) { out.writes.push_back(at_base(base, w)); };
  if (auto o = option_value(argv, from, "--output")) write(*o);
  if (sub == "config") {
    if (auto f = option_value(argv, from, "--file")) write(*f);
    if (auto f = option_value(argv, from, "-f")) write(*f);
  } else if (sub == "clone") {
    Argv ops = positionals(argv, from,
                           {"-o",
                            "--origin",
                            "-b",
                            "--branch",
                            "-u",
                            "--upload-pack",
                            "--reference",
                            "--reference-if-able",
                            "--separate-git-dir",
                            "--depth",
                            "--shallow-since",
                            "--shallow-exclude",
                            "-j",
                            "--jobs",
                            "--filter",
                            "-c",
                            "--config",
                            "--template",
                            "--server-option",
                            "--bundle-uri",
                            "--ref-format"});
    if (ops.size() >= 2) write(ops[1]);
    if (ops.size() == 1) write(clone_folder(ops[0]));
    if (auto d = option_value(argv, from, "--separate-git-dir")) write(*d);
  } else if (sub == "init") {
    Argv ops = positionals(argv, from,
                           {"-b", "--initial-branch", "--object-format", "--ref-format",
                            "--separate-git-dir", "--template", "--shared"});
    ShellWord dir = ops.empty() ? literal_word(".") : ops[0];
    bool bare = false;
    for (size_t j = from; j < argv.size(); ++j) bare |= argv[j].text == "--bare";
    std::optional<ShellWord> repo = git_dir;
    if (auto d = option_value(argv, from, "--separate-git-dir")) repo = at_base(base, *d);
    if (!repo) repo = at_base(base, bare ? dir : joined_path(dir, ".git"));
    out.writes.push_back(*repo);
    // A template is copied into the repository's hooks, even one that exists already.
    auto t = option_value(argv, from, "--template");
    if (t && !t->text.empty()) out.writes.push_back(joined_path(*repo, "hooks"));
  } else if (sub == "worktree" && from < argv.size() && argv[from].text == "add") {
    Argv ops = positionals(argv, from + 1, {"-b", "-B", "--reason"});
    if (!ops.empty()) write(ops[0]);
  } else if (sub == "submodule" && from < argv.size() && argv[from].text == "add") {
    Argv ops = positionals(argv, from + 1, {"-b", "--branch", "--name", "--reference", "--depth"});
    if (ops.size() >= 2) write(ops[1]);
    if (ops.size() == 1) write(clone_folder(ops[0]));
  } else if (sub == "archive") {
    if (auto o = option_value(argv, from, "-o")) write(*o);
  } else if (sub == "format-patch") {
    for (const char* opt : {"-o", "--output-directory"})
      if (auto o = option_value(argv, from, opt)) out.write_dirs.push_back(at_base(base, *o));
  } else if (sub == "bundle" && from + 1 < argv.size() && argv[from].text == "create") {
    write(argv[from + 1]);
  } else if (sub == "checkout-index") {
    // --prefix is put before each file's path: a folder, or the start of a name.
    if (auto p = option_value(argv, from, "--prefix")) {
      ShellWord w = *p;
      w.text += kUnknown;
      w.dynamic = true;
      write(w);
    }
  } else if (sub == "mv" || sub == "rm") {
    Argv ops = positionals(argv, from, {});
    for (size_t j = 0; j < ops.size(); ++j)
      if (sub == "rm" || j + 1 == ops.size()) write(ops[j]);
  }
}

}  // namespace mecha::guard
