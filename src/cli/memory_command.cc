// `mecha memory list|show ID|rm ID|search QUERY`: the notes Remember kept (store/note_store.h),
// for the person whose notes they are. The file is the one the tools use: [memory] file of
// the config, else notes.db in the state directory. Reading commands never create it.
// Nothing here changes a note's taint: a tainted note can only be removed.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "cli/printable.h"
#include "cli/workspace.h"
#include "store/note_store.h"
#include "tools/memory_tools.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;

struct MemoryOptions {
  std::string work_tree;
  std::string config_file;
  bool json = false;
  int limit = 20;
  int offset = 0;
  int64_t id = 0;
  std::vector<std::string> query;
};

Result<fs::path> notes_file(const MemoryOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return ws.status();
  return tools::note_store_path(ws->config().memory.file);
}

// The store, or nullptr when its file does not exist yet (nothing remembered).
Result<std::unique_ptr<store::NoteStore>> open_notes(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::unique_ptr<store::NoteStore>();
  return store::NoteStore::open(file);
}

Json note_json(const store::Note& n) {
  return Json{{"id", n.id},           {"created", n.created}, {"tags", n.tags},
              {"tainted", n.tainted}, {"session", n.session}, {"text", n.text}};
}

// One line: id, date, taint, tags, the text's first line shortened.
std::string note_line(const store::Note& n) {
  std::string text = n.text.substr(0, n.text.find('\n'));
  if (text.size() > 60) {
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "…";
  }
  return fmt::format("{:>5}  {}  {:<7}  {:<20}  {}\n", n.id, n.created.substr(0, 10),
                     n.tainted ? "tainted" : "", fmt::format("{}", fmt::join(n.tags, ",")), text);
}

int print_notes(const std::vector<store::Note>& notes, bool json, const std::string& none) {
  if (json) {
    Json arr = Json::array();
    for (const auto& n : notes) arr.push_back(note_json(n));
    std::fputs((arr.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n").c_str(), stdout);
    return kExitOk;
  }
  if (notes.empty()) {
    std::printf("%s\n", none.c_str());
    return kExitOk;
  }
  std::string out =
      fmt::format("{:>5}  {:<10}  {:<7}  {:<20}  {}\n", "ID", "DATE", "TAINT", "TAGS", "TEXT");
  bool tainted = false;
  for (const auto& n : notes) {
    out += note_line(n);
    tainted = tainted || n.tainted;
  }
  if (tainted) {
    out +=
        "Tainted notes were written while a run held untrusted content; a run that recalls "
        "one is untrusted.\n";
  }
  write_printable(stdout, out);  // notes are text a model wrote
  return kExitOk;
}

int list_main(const MemoryOptions& opt) {
  auto file = notes_file(opt);
  if (!file) return report_failure(file.status());
  auto notes = open_notes(*file);
  if (!notes) return report_failure(notes.status());
  std::vector<store::Note> listed;
  if (*notes) {
    auto got = (*notes)->list(opt.limit, opt.offset);
    if (!got) return report_failure(got.status());
    listed = std::move(*got);
  }
  return print_notes(listed, opt.json, fmt::format("no notes in {}", file->string()));
}

int search_main(const MemoryOptions& opt) {
  auto file = notes_file(opt);
  if (!file) return report_failure(file.status());
  auto notes = open_notes(*file);
  if (!notes) return report_failure(notes.status());
  const std::string query = fmt::format("{}", fmt::join(opt.query, " "));
  std::vector<store::Note> found;
  if (*notes) {
    auto got = (*notes)->search(query, opt.limit);
    if (!got) return report_failure(Status::usage(got.message()));
    found = std::move(*got);
  }
  return print_notes(found, opt.json,
                     fmt::format("no notes match {}",
                                 Json(query).dump(-1, ' ', false, Json::error_handler_t::replace)));
}

int show_main(const MemoryOptions& opt) {
  auto file = notes_file(opt);
  if (!file) return report_failure(file.status());
  auto notes = open_notes(*file);
  if (!notes) return report_failure(notes.status());
  if (!*notes)
    return report_failure(Status::error(fmt::format("no note {} in {}", opt.id, file->string())));
  auto n = (*notes)->get(opt.id);
  if (!n) return report_failure(n.status());
  if (opt.json) {
    std::fputs((note_json(*n).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n").c_str(),
               stdout);
    return kExitOk;
  }
  std::string out = fmt::format("note {}\ncreated: {}\n", n->id, n->created);
  if (!n->session.empty()) out += fmt::format("session: {}\n", n->session);
  if (!n->tags.empty()) out += fmt::format("tags: {}\n", fmt::join(n->tags, ", "));
  if (n->tainted) out += "tainted: written while a run held untrusted content\n";
  out += "\n" + n->text + (n->text.ends_with('\n') ? "" : "\n");
  write_printable(stdout, out);  // notes are text a model wrote
  return kExitOk;
}

int rm_main(const MemoryOptions& opt) {
  auto file = notes_file(opt);
  if (!file) return report_failure(file.status());
  auto notes = open_notes(*file);
  if (!notes) return report_failure(notes.status());
  if (!*notes)
    return report_failure(Status::error(fmt::format("no note {} in {}", opt.id, file->string())));
  if (Status s = (*notes)->remove(opt.id); !s.ok()) return report_failure(s);
  std::printf("removed note %lld\n", static_cast<long long>(opt.id));
  return kExitOk;
}

void add_common(CLI::App* cmd, MemoryOptions* opt) {
  cmd->add_option("-C,--work-tree", opt->work_tree,
                  "The directory whose config names the notes file (default: this directory)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--config", opt->config_file, "Read only this config file");
}

}  // namespace

void define_memory_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<MemoryOptions>();
  sub.require_subcommand(1);
  CLI::App* list = sub.add_subcommand("list", "The notes, newest first");
  add_common(list, opt.get());
  list->add_option("--limit", opt->limit, "How many (default 20)")->check(CLI::Range(1, 100000));
  list->add_option("--offset", opt->offset, "Skip this many of the newest first")
      ->check(CLI::NonNegativeNumber);
  list->add_flag("--json", opt->json, "Print JSON for programs");
  list->callback([opt, chosen] { *chosen = [opt] { return list_main(*opt); }; });

  CLI::App* search = sub.add_subcommand("search", "The notes that hold these words, best first");
  add_common(search, opt.get());
  search->add_option("query", opt->query, "Words to look for")->required();
  search->add_option("--limit", opt->limit, "How many (default 20)")
      ->check(CLI::Range(1, store::NoteStore::kMaxLimit));
  search->add_flag("--json", opt->json, "Print JSON for programs");
  search->callback([opt, chosen] { *chosen = [opt] { return search_main(*opt); }; });

  CLI::App* show = sub.add_subcommand("show", "One note, whole");
  add_common(show, opt.get());
  show->add_option("id", opt->id, "The note's id")->required();
  show->add_flag("--json", opt->json, "Print JSON for programs");
  show->callback([opt, chosen] { *chosen = [opt] { return show_main(*opt); }; });

  CLI::App* rm = sub.add_subcommand("rm", "Remove a note for good");
  add_common(rm, opt.get());
  rm->add_option("id", opt->id, "The note's id")->required();
  rm->callback([opt, chosen] { *chosen = [opt] { return rm_main(*opt); }; });
}

}  // namespace mecha::cli
