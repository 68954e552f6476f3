// `mecha trust [FILE]`, `--list`, `--revoke [FILE]`: the user's consent to what a repository
// ships (config/trust_store.h, agent/file_standing.h). Without FILE, every file of the work
// tree's project that mecha reads as instructions, definitions or config (agent/
// shipped_files.h) is trusted as it is now, except tainted ones, which are never trusted.
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "agent/run_pipeline.h"
#include "agent/shipped_files.h"
#include "base/sha256.h"
#include "cli/command.h"
#include "cli/folder_trust.h"
#include "cli/printable.h"
#include "config/trust_store.h"

namespace mecha::cli {
namespace {

struct TrustOptions {
  std::string file;
  std::string work_tree;
  bool list = false;
  bool revoke = false;
};

// The work tree is resolved as `mecha run` resolves it; the rest of the path is not
// (config::identify()).
std::filesystem::path tree_of(const TrustOptions& opt) {
  std::error_code ec;
  std::filesystem::path tree = opt.work_tree.empty() ? std::filesystem::current_path(ec)
                                                     : std::filesystem::path(opt.work_tree);
  std::filesystem::path canonical = std::filesystem::canonical(tree, ec);
  return ec ? std::filesystem::absolute(tree) : canonical;
}

// Every file the tree ships, trusted as it is now; tainted and hidden ones are not, and
// are named with the reason.
int trust_tree(const TrustOptions& opt, config::TrustStore& store) {
  const std::filesystem::path tree = tree_of(opt);
  const agent::FileStanding standing = tree_standing(tree, store);
  const auto files = agent::shipped_files({tree, agent::home_directory()}, standing);
  std::string out;
  for (const agent::ShippedFile& f : files) {
    const std::string shown = printable_line(f.path.string());
    switch (f.standing) {
      case agent::Standing::kOwn:
      case agent::Standing::kTrusted:
        out += fmt::format("already trusted: {} ({})\n", shown, f.kind);
        break;
      case agent::Standing::kUntrusted:
        if (Status s = store.trust(f.path.string(), f.sha256); !s.ok()) return report_failure(s);
        out += fmt::format("trusted {} ({}, sha256 {})\n", shown, f.kind, f.sha256);
        break;
      case agent::Standing::kTainted:
      case agent::Standing::kDenied:
        out += fmt::format("not trusted: {} ({}): it {}\n", shown, f.kind,
                           agent::FileStanding::why(f.standing, f.path));
        break;
    }
  }
  if (files.empty()) {
    return report_failure(Status::usage(
        fmt::format("{} ships no file mecha reads (instructions, agents, config): nothing to trust",
                    tree.string())));
  }
  out += "any change to a file revokes its trust in it\n";
  write_printable(stdout, out);
  return kExitOk;
}

Result<std::string> read_whole(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) {
    return Status::usage(fmt::format("{} is not a file: nothing to trust", p.string()));
  }
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return Status::error(fmt::format("cannot read {}", p.string()));
  return ss.str();
}

int trust_main(const TrustOptions& opt) {
  auto file = config::TrustStore::default_file();
  if (!file) return report_failure(file.status());
  auto store = config::TrustStore::load(*file);
  if (!store) return report_failure(store.status());

  if (opt.list) {
    std::string out;
    for (const auto& r : store->records()) {
      auto text = read_whole(r.path);
      const char* state = !text                           ? "missing"
                          : sha256_hex(*text) == r.sha256 ? "trusted"
                                                          : "changed since trusted";
      out += fmt::format("{}  {}\n", printable_line(r.path), state);
    }
    write_printable(stdout, out);
    return kExitOk;
  }

  if (opt.file.empty() && !opt.revoke) return trust_tree(opt, *store);
  const std::filesystem::path path = opt.file.empty()
                                         ? tree_of(opt) / ".mecha" / "config.toml"
                                         : std::filesystem::absolute(opt.file).lexically_normal();
  if (opt.revoke) {
    auto dropped = store->revoke(path.string());
    if (!dropped) return report_failure(dropped.status());
    if (!*dropped)
      return report_failure(Status::usage(fmt::format("{} was not trusted", path.string())));
    write_printable(stdout, fmt::format("no longer trusted: {}\n", printable_line(path.string())));
    return kExitOk;
  }

  auto text = read_whole(path);
  if (!text) return report_failure(text.status());
  config::FileIdentity id = config::identify(path, *text);
  if (Status s = store->trust(id.path, id.sha256); !s.ok()) return report_failure(s);
  write_printable(stdout, fmt::format("trusted {} (sha256 {}); any change to it revokes this\n",
                                      printable_line(id.path), id.sha256));
  return kExitOk;
}

}  // namespace

void define_trust_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<TrustOptions>();
  sub.add_option("file", opt->file,
                 "One file to trust (default: every file the work tree ships that mecha reads: "
                 "instructions, agents, config)");
  sub.add_option("-C,--work-tree", opt->work_tree, "The work tree whose files to trust")
      ->check(CLI::ExistingDirectory);
  sub.add_flag("--list", opt->list, "The trusted files, and whether each is still as trusted");
  sub.add_flag("--revoke", opt->revoke, "Stop trusting the file");
  sub.callback([opt, chosen] { *chosen = [opt] { return trust_main(*opt); }; });
}

}  // namespace mecha::cli
