// `mecha trust [FILE]`, `--list`, `--revoke [FILE]`: the user's consent to a project's
// config (config/trust_store.h). FILE defaults to .mecha/config.toml of the work tree.
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "base/sha256.h"
#include "cli/command.h"
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
std::filesystem::path target(const TrustOptions& opt) {
  if (!opt.file.empty()) return std::filesystem::absolute(opt.file).lexically_normal();
  std::error_code ec;
  std::filesystem::path tree = opt.work_tree.empty() ? std::filesystem::current_path(ec)
                                                     : std::filesystem::path(opt.work_tree);
  std::filesystem::path canonical = std::filesystem::canonical(tree, ec);
  return (ec ? std::filesystem::absolute(tree) : canonical) / ".mecha" / "config.toml";
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

  const std::filesystem::path path = target(opt);
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
  sub.add_option("file", opt->file, "The config file to trust (default .mecha/config.toml)");
  sub.add_option("-C,--work-tree", opt->work_tree, "The work tree whose .mecha/config.toml")
      ->check(CLI::ExistingDirectory);
  sub.add_flag("--list", opt->list, "The trusted files, and whether each is still as trusted");
  sub.add_flag("--revoke", opt->revoke, "Stop trusting the file");
  sub.callback([opt, chosen] { *chosen = [opt] { return trust_main(*opt); }; });
}

}  // namespace mecha::cli
