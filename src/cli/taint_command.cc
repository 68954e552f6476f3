// `mecha taint list|clear`: the files of this work tree that runs wrote while they held
// untrusted content (store/file_taint.h). `list` shows them with the session that wrote
// each; `clear PATH...` (or `--all`) is the user vouching for them, after which reading them
// is trusted again. Nothing a model runs may do this: the store is out of the sandbox's
// sight, and no tool calls it.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/printable.h"
#include "cli/run_session.h"
#include "cli/workspace.h"
#include "store/file_taint.h"
#include "store/record.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;

struct TaintOptions {
  std::string store;
  std::string work_tree;
  bool json = false;
  bool all = false;
  std::vector<std::string> paths;
};

Result<fs::path> work_tree(const TaintOptions& opt) { return Workspace::tree_of(opt.work_tree); }

Result<std::unique_ptr<store::FileTaint>> open_taint(const TaintOptions& opt) {
  auto store = store_path_for(opt.store);
  if (!store) return store.status();
  auto path = file_taint_path_for(*store);
  if (!path) return path.status();
  std::error_code ec;
  if (!fs::exists(*path, ec)) {
    return Status::usage(fmt::format("no session store at {} (a run creates it)", path->string()));
  }
  return store::FileTaint::open(*path);
}

// PATH as the user typed it (relative to the current directory, or absolute), as the file
// tools name it: relative to the tree, symlinks resolved.
Result<std::string> tree_relative(const fs::path& tree, const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return Status::usage(fmt::format("{}: {}", path, ec.message()));
  fs::path rel = abs.lexically_relative(tree);
  const std::string s = rel.generic_string();
  if (rel.empty() || s == ".." || s.rfind("../", 0) == 0) {
    return Status::usage(fmt::format("{} is outside the work tree {}; run from the tree or give -C",
                                     path, tree.string()));
  }
  return s == "." ? std::string(store::kWholeTree) : s;
}

std::string shown_path(const std::string& path) {
  return path == store::kWholeTree ? "(the whole tree)" : path;
}

int list_main(const TaintOptions& opt) {
  auto tree = work_tree(opt);
  if (!tree) return report_failure(tree.status());
  auto taint = open_taint(opt);
  if (!taint) return report_failure(taint.status());
  auto marks = (*taint)->list(*tree);
  if (!marks) return report_failure(marks.status());
  if (opt.json) {
    Json arr = Json::array();
    for (const auto& m : *marks) {
      arr.push_back(Json{{"path", m.path},
                         {"session", m.session_id},
                         {"marked_at", store::iso8601_utc(m.marked_ms)}});
    }
    std::fputs((arr.dump() + "\n").c_str(), stdout);
    return kExitOk;
  }
  if (marks->empty()) {
    write_printable(stdout, fmt::format("no tainted files in {}\n", tree->string()));
    return kExitOk;
  }
  // A path is a file name the model chose: shown on its line, escaped.
  size_t width = 4;
  for (const auto& m : *marks) width = std::max(width, printable_line(shown_path(m.path)).size());
  std::string out = fmt::format("{:<{}}  {:<20}  {}\n", "PATH", width, "SESSION", "MARKED (UTC)");
  for (const auto& m : *marks) {
    std::string at = store::iso8601_utc(m.marked_ms);
    out += fmt::format("{:<{}}  {:<20}  {} {}\n", printable_line(shown_path(m.path)), width,
                       printable_line(m.session_id), at.substr(0, 10), at.substr(11, 5));
  }
  out += "Reading these is untrusted. If you have checked them: mecha taint clear PATH...\n";
  write_printable(stdout, out);
  return kExitOk;
}

int clear_main(const TaintOptions& opt) {
  if (opt.all == !opt.paths.empty()) {
    return report_failure(Status::usage("say what to clear: mecha taint clear PATH... or --all"));
  }
  auto tree = work_tree(opt);
  if (!tree) return report_failure(tree.status());
  auto taint = open_taint(opt);
  if (!taint) return report_failure(taint.status());
  if (opt.all) {
    auto n = (*taint)->clear_all(*tree);
    if (!n) return report_failure(n.status());
    write_printable(
        stdout, fmt::format("cleared {} mark{} in {}\n", *n, *n == 1 ? "" : "s", tree->string()));
    return kExitOk;
  }
  std::vector<std::string> unmarked;
  for (const std::string& p : opt.paths) {
    auto rel = tree_relative(*tree, p);
    if (!rel) return report_failure(rel.status());
    auto n = (*taint)->clear(*tree, {*rel});
    if (!n) return report_failure(n.status());
    if (*n == 0) {
      unmarked.push_back(p);
    } else {
      write_printable(stdout, fmt::format("cleared {}\n", printable_line(shown_path(*rel))));
    }
  }
  if (unmarked.empty()) return kExitOk;
  auto whole = (*taint)->is_tainted(*tree, "");
  std::string note =
      whole.ok() && *whole
          ? " The whole tree is marked (a command's changes could not be told apart): "
            "mecha taint clear --all vouches for it."
          : "";
  return report_failure(Status::error(
      fmt::format("not marked, so nothing was cleared: {}.{}", fmt::join(unmarked, ", "), note)));
}

void add_common(CLI::App* cmd, TaintOptions* opt) {
  cmd->add_option("--store", opt->store, "The session store (default: the one `mecha run` uses)");
  cmd->add_option("-C,--work-tree", opt->work_tree, "The work tree (default: this directory)")
      ->check(CLI::ExistingDirectory);
}

}  // namespace

void define_taint_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<TaintOptions>();
  sub.require_subcommand(1);
  CLI::App* list = sub.add_subcommand(
      "list", "The tree's files written while a run held untrusted content, and by which session");
  add_common(list, opt.get());
  list->add_flag("--json", opt->json, "Print JSON for programs");
  list->callback([opt, chosen] { *chosen = [opt] { return list_main(*opt); }; });

  CLI::App* clear = sub.add_subcommand(
      "clear", "Vouch for files: reading them is trusted again (a folder clears what is in it)");
  add_common(clear, opt.get());
  clear->add_option("paths", opt->paths, "Files or folders, relative to this directory");
  clear->add_flag("--all", opt->all, "Clear every mark of the tree, the whole-tree mark too");
  clear->callback([opt, chosen] { *chosen = [opt] { return clear_main(*opt); }; });
}

}  // namespace mecha::cli
