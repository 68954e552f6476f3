#include "cli/folder_trust.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "agent/run_pipeline.h"
#include "agent/shipped_files.h"
#include "base/state_dir.h"
#include "base/unique_fd.h"
#include "cli/printable.h"
#include "cli/run_session.h"
#include "cli/workspace.h"
#include "store/file_taint.h"

namespace mecha::cli {
namespace fs = std::filesystem;

namespace {

constexpr char kAskedFile[] = "trust-asked";

bool asked_before(const fs::path& file, const std::string& tree) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line == tree) return true;
  }
  return false;
}

void say(int tty, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(tty, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

std::string answer(int tty) {
  std::string line;
  char c = 0;
  while (::read(tty, &c, 1) == 1 && c != '\n') {
    if (line.size() < 64) line.push_back(c);
  }
  return line;
}

}  // namespace

agent::FileStanding tree_standing(const fs::path& tree, const config::TrustStore& store) {
  agent::FileStanding::Sources sources;
  sources.work_tree = tree;
  sources.trust = store;
  if (auto db = Workspace::store_path_of(tree, ""); db.ok()) {
    std::error_code ec;
    if (auto taint = file_taint_path_for(*db); taint.ok() && fs::exists(*taint, ec)) {
      sources.taint = store::FileTaint::open_on_first_use(*taint);
    }
  }
  return agent::FileStanding(std::move(sources));
}

void offer_tree_trust(const fs::path& tree) {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!tty.valid() || !::isatty(tty.get())) return;
  auto state = private_state_dir();
  auto trust_file = config::TrustStore::default_file();
  if (!state.ok() || !trust_file.ok()) return;
  const fs::path asked = *state / kAskedFile;
  if (asked_before(asked, tree.string())) return;
  auto store = config::TrustStore::load(*trust_file);
  if (!store.ok()) {
    write_printable(stderr, fmt::format("mecha: {}\n", store.status().message()));
    return;
  }
  std::vector<agent::ShippedFile> untrusted;
  for (agent::ShippedFile& f :
       agent::shipped_files({tree, agent::home_directory()}, tree_standing(tree, *store))) {
    if (f.standing == agent::Standing::kUntrusted) untrusted.push_back(std::move(f));
  }
  if (untrusted.empty()) return;

  std::string question = fmt::format(
      "\nmecha: {} ships files that change what mecha tells the model or does, and you have "
      "not trusted them:\n",
      printable_line(tree.string()));
  for (const auto& f : untrusted) {
    question += fmt::format("  {} ({})\n", printable_line(f.path.string()), f.kind);
  }
  question +=
      "Untrusted, they are read as information, and a run that reads them may not also read "
      "your private data and send. Do you trust them as they are now? (asked once for this "
      "folder; `mecha trust` later) [y/N]: ";
  say(tty.get(), question);
  const std::string reply = answer(tty.get());
  {
    std::ofstream out(asked, std::ios::app);
    out << tree.string() << '\n';
    if (!out) {
      write_printable(stderr,
                      fmt::format("mecha: cannot record the answer in {}\n", asked.string()));
    }
  }
  if (reply != "y" && reply != "yes") {
    say(tty.get(), "Not trusted: the run holds untrusted content from its start.\n");
    return;
  }
  for (const auto& f : untrusted) {
    if (Status s = store->trust(f.path.string(), f.sha256); !s.ok()) {
      write_printable(stderr, fmt::format("mecha: {}\n", s.message()));
      return;
    }
  }
  say(tty.get(), fmt::format("Trusted {} file{}; any change to one revokes its trust.\n",
                             untrusted.size(), untrusted.size() == 1 ? "" : "s"));
}

}  // namespace mecha::cli
