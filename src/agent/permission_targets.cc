#include "agent/permission_targets.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>
#include <variant>

#include "guard/command_finder.h"
#include "guard/operands.h"
#include "guard/path_model.h"
#include "guard/shell_word.h"

namespace mecha::agent {
namespace {

// See target_of(). The work tree is canonical, so a path under it is walked from there.
// `absolute` is lexically normal.
std::string resolved(const std::string& absolute, const std::string& tree) {
  std::vector<std::string> todo;  // components still to walk, the next one last
  std::string out;                // "" stands for "/"
  std::string_view rest = absolute;
  if (guard::within(absolute, tree) && tree != "/") {
    out = tree;
    rest.remove_prefix(tree.size());
  }
  for (auto c : path_components(rest)) todo.emplace_back(c);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  bool missing = false;  // below a component that does not exist, nothing is a link
  char target[4096];
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      size_t slash = out.rfind('/');
      out.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    std::string next = out + "/" + c;
    struct stat st;
    if (!missing && links < 40 && ::lstat(next.c_str(), &st) != 0) missing = true;
    if (!missing && links < 40 && S_ISLNK(st.st_mode)) {
      ssize_t n = ::readlink(next.c_str(), target, sizeof target);
      if (n > 0 && static_cast<size_t>(n) < sizeof target) {
        ++links;
        std::string_view link(target, static_cast<size_t>(n));
        if (link.starts_with('/')) out.clear();
        auto parts = path_components(link);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
        continue;
      }
    }
    out = std::move(next);
  }
  return out.empty() ? std::string("/") : out;
}

// Whether a git command copies files of the tree into its object store, where `git show`
// and `git diff --cached` print them under no path a rule names: add, stash, hash-object,
// update-index, and commit -a. Its global options (-C dir, -c k=v, --git-dir=...) are
// skipped to find the subcommand.
// `paths` gets the pathspecs of a `git add` that names them (and nothing that takes all):
// only those are taken, and an empty `paths` means the whole tree.
bool git_stores_files(const guard::Command& c, std::vector<guard::ShellWord>* paths) {
  paths->clear();
  if (c.name != "git") return false;
  size_t i = 1;
  while (i < c.argv.size() && c.argv[i].text.starts_with('-')) {
    const std::string& o = c.argv[i].text;
    i += (o == "-C" || o == "-c" || o == "--git-dir" || o == "--work-tree" || o == "--namespace" ||
          o == "--exec-path")
             ? 2
             : 1;
  }
  if (i >= c.argv.size()) return false;
  const std::string& sub = c.argv[i].text;
  if (sub == "add") {
    bool all = false;
    for (size_t j = i + 1; j < c.argv.size(); ++j) {
      const guard::ShellWord& w = c.argv[j];
      if (w.text == "--") continue;
      if (w.text.starts_with('-')) {
        all = all || w.text == "--all" || w.text == "--update" || w.text == "-A" || w.text == "-u";
      } else if (w.text.starts_with(':')) {
        all = true;  // pathspec magic
      } else {
        paths->push_back(w);
      }
    }
    if (all) paths->clear();
    return true;
  }
  if (sub == "stash" || sub == "hash-object" || sub == "update-index") return true;
  if (sub != "commit") return false;
  for (size_t j = i + 1; j < c.argv.size(); ++j) {
    const std::string& o = c.argv[j].text;
    if (o == "--all" ||
        (o.size() > 1 && o[0] == '-' && o[1] != '-' && o.find('a') != std::string::npos))
      return true;
  }
  return false;
}

}  // namespace

Target target_of(const std::string& written, const std::string& tree) {
  Target t;
  t.lexical = guard::normalise(written.starts_with('/') ? written : tree + "/" + written);
  t.canonical = resolved(t.lexical, tree);
  return t;
}

ShellLine read_shell_line(const std::string& line, const std::filesystem::path& tree,
                          const std::filesystem::path& home, bool with_paths) {
  ShellLine out;
  auto found = guard::find_commands(line);
  if (auto* problem = std::get_if<guard::Problem>(&found)) {
    out.unreadable = problem->reason;
    return out;
  }
  const auto& script = std::get<guard::Script>(found);
  // Read from the text: any PATH not read as $PATH or ${PATH...} may be assigned (`X=`,
  // export, declare, read, printf -v).
  for (size_t at = line.find("PATH"); at != std::string::npos; at = line.find("PATH", at + 1)) {
    if (at == 0 || (line[at - 1] != '$' && line[at - 1] != '{')) out.sets_search_path = true;
  }
  guard::Places places;
  places.work_tree = tree.string();
  places.home = home.string();
  // Each scope keeps the folders the line may be in (a cd may fail); "" is unknown.
  std::vector<std::set<std::string>> cwds{{tree.string()}};
  std::set<std::tuple<bool, std::string, bool>> seen;  // (write, path, under)
  auto use_one = [&](const guard::ShellWord& w, bool recursive, std::vector<ShellLine::Use>& into) {
    for (const std::string& cwd : cwds.back()) {
      guard::Resolved r = guard::resolve_path(w, cwd, places);
      bool under = recursive;
      std::string path = r.path;
      if (r.place == guard::Place::kUnknown) {
        // Known only at run time: anything under the folder it is known to be in.
        if (path.empty()) path = cwd.empty() ? std::string("/") : cwd;
        under = true;
      }
      if (!seen.emplace(&into == &out.writes, path, under).second) continue;
      into.push_back({target_of(path, places.work_tree), under});
    }
  };
  // The shell expands braces, globs and `~+`, `~-`, `~user` before the command sees its
  // words: each brace alternative counts; a glob in a path's last component is what it
  // matches now, as bash matches it (a dot file only by a pattern that starts with a dot);
  // any other glob, or any glob of a line that may change how they match (shopt: dotglob,
  // extglob, globstar, nocaseglob; GLOBIGNORE), stands for anything under the folder of its
  // static part; a tilde prefix other than `~` stands for anything anywhere.
  const bool exact_globs =
      line.find("shopt") == std::string::npos && line.find("GLOBIGNORE") == std::string::npos;
  auto use = [&](const guard::ShellWord& w, bool recursive, std::vector<ShellLine::Use>& into) {
    if (w.text.size() > 1 && w.text[0] == guard::kHome && w.text[1] != '/') {
      use_one(guard::literal_word("/"), true, into);
      return;
    }
    const std::vector<std::string> alternatives = guard::expand_braces(w.text, 32);
    if (alternatives.size() >= 32) {
      use_one(guard::literal_word("/"), true, into);
      return;
    }
    for (const std::string& text : alternatives) {
      guard::ShellWord alt = w;
      alt.text = text;
      const size_t glob = w.glob ? guard::first_glob(text) : std::string::npos;
      if (glob == std::string::npos) {
        use_one(alt, recursive, into);
        continue;
      }
      const size_t slash = text.rfind('/', glob);
      alt.text = slash == std::string::npos ? "." : slash == 0 ? "/" : text.substr(0, slash);
      alt.glob = false;
      const std::string pattern = text.substr(slash == std::string::npos ? 0 : slash + 1);
      if (!exact_globs || pattern.find('/') != std::string::npos ||
          text.find(guard::kUnknown) != std::string::npos) {
        use_one(alt, true, into);
        continue;
      }
      for (const std::string& cwd : cwds.back()) {
        guard::Resolved dir = guard::resolve_path(alt, cwd, places);
        if (dir.place == guard::Place::kUnknown) {
          use_one(alt, true, into);
          continue;
        }
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir.path, ec)) {
          const std::string name = entry.path().filename().string();
          if (::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
          use_one(guard::literal_word(dir.path + "/" + name), recursive, into);
        }
      }
    }
  };
  for (const guard::Step& step : script.steps) {
    switch (step.kind) {
      case guard::Step::Kind::kScopeOpen:
        cwds.push_back(cwds.back());
        break;
      case guard::Step::Kind::kScopeClose:
        if (cwds.size() > 1) cwds.pop_back();
        break;
      case guard::Step::Kind::kRedirect: {
        const std::string& op = step.redirect.op;
        const std::string& to = step.redirect.target.text;
        // `>&2` and `<&0` name a descriptor; `>& file` writes the file, as `&> file` does.
        if ((op == ">&" || op == "<&") &&
            (to == "-" ||
             (!to.empty() && to.find_first_not_of("0123456789") == std::string::npos))) {
          break;
        }
        if (op != "<" && op != "<&" && !out.writes_file && to != "/dev/null" &&
            to != "/dev/stdout" && to != "/dev/stderr") {
          out.writes_file = step.redirect.target.shown();
        }
        if (!with_paths) break;
        if (op == "<" || op == "<>" || op == "<&") use(step.redirect.target, false, out.reads);
        if (op != "<" && op != "<&") use(step.redirect.target, false, out.writes);
        break;
      }
      case guard::Step::Kind::kCommand: {
        const guard::Command& c = step.command;
        out.commands.push_back(shape_of(c));
        if (c.reads_script_from_stdin || c.script_from_unknown_pipe || c.script_operand_unknown) {
          out.unseen_script = true;
        }
        if (with_paths) {
          guard::Operands ops = guard::operands_of(c);
          bool recursive = guard::reads_recursively(c, ops);
          for (const auto& w : ops.reads) use(w, recursive, out.reads);
          std::vector<guard::ShellWord> pathspecs;
          if (git_stores_files(c, &pathspecs)) {
            for (const auto& w : pathspecs) use(w, true, out.reads);
            if (pathspecs.empty()) {
              // It may take anything in the tree it runs in.
              use(guard::literal_word(tree.string()), true, out.reads);
              for (const std::string& cwd : cwds.back()) {
                use(guard::literal_word(cwd.empty() ? std::string("/") : cwd), true, out.reads);
              }
            }
          }
          // A move or a removal takes what a folder holds with it, and a file renamed is read
          // under its new name by the next command: a move's operands are read and written
          // whole, a removal's written whole.
          const bool moves = c.name == "mv";
          for (const auto& w : ops.writes) use(w, moves || c.name == "rm", out.writes);
          if (moves) {
            for (const auto& w : ops.writes) use(w, true, out.reads);
          }
        }
        if (c.name == "cd" || c.name == "pushd" || c.name == "popd") {
          std::set<std::string> next = cwds.back();  // a cd may fail
          const guard::ShellWord* target = nullptr;
          for (size_t i = 1; i < c.argv.size() && target == nullptr; ++i) {
            if (c.argv[i].text.empty() || c.argv[i].text[0] != '-') target = &c.argv[i];
          }
          guard::ShellWord home_word = guard::literal_word(std::string(1, guard::kHome));
          for (const std::string& cwd : cwds.back()) {
            next.insert(c.name == "popd"
                            ? std::string()
                            : guard::resolve_directory(target ? *target : home_word, cwd, places));
          }
          if (next.count("")) next = {""};
          cwds.back() = std::move(next);
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace mecha::agent
