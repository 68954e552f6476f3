// `mecha guard check [--worktree DIR] [--json] 'CMD'`: the command guard's verdict on one
// shell line (exit 0 allowed, 1 refused). With --batch, reads JSON Lines {"command": "..."}
// on stdin and writes one {"verdict", "rule", "message"} per line, for corpora.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "base/strict_json.h"
#include "cli/command.h"
#include "cli/printable.h"
#include "config/config.h"
#include "guard/command_guard.h"

namespace mecha::cli {
namespace {

struct GuardOptions {
  std::string worktree;
  std::string config_file;
  std::string command;
  bool json = false;
  bool batch = false;
};

Json verdict_json(const guard::CommandGuard& g, const guard::Verdict& v) {
  return Json{{"verdict", v.allowed ? "allow" : "refuse"},
              {"rule", v.allowed ? Json(nullptr) : Json(v.rule)},
              {"message", v.allowed ? std::string("allowed") : g.refusal_message(v, 1)}};
}

Result<guard::CommandGuard> make_guard(const GuardOptions& opt) {
  std::error_code ec;
  std::filesystem::path tree = opt.worktree.empty() ? std::filesystem::current_path(ec)
                                                    : std::filesystem::path(opt.worktree);
  tree = std::filesystem::weakly_canonical(std::filesystem::absolute(tree, ec), ec);
  config::ConfigFiles files = config::default_config_files(tree);
  if (!opt.config_file.empty()) files.explicit_file = opt.config_file;
  auto cfg = config::load_config(files);
  if (!cfg) return cfg.status();
  const char* home = std::getenv("HOME");
  auto policy = guard::policy_from_config(cfg->guard, tree.string(),
                                          home != nullptr && home[0] == '/' ? home : "/root");
  if (!policy) return policy.status();
  return guard::CommandGuard::create(std::move(*policy));
}

int batch_main(const guard::CommandGuard& g) {
  std::string line;
  int line_no = 0;
  int status = kExitOk;
  while (std::getline(std::cin, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = fmt::format("line {}", line_no);
    auto j = parse_json(line, where);
    std::string command;
    Status s = j.status();
    if (s.ok()) {
      auto obj = StrictObject::of(*j, where);
      s = obj.status();
      if (s.ok()) {
        s = obj->get("command", &command);
        // Corpus lines may carry their own fields (category, expected verdict, notes).
        for (const char* k : {"category", "expect", "rule", "note", "id"}) (void)obj->find(k);
        if (s.ok()) s = obj->finish();
      }
    }
    if (!s.ok()) {
      write_printable(stderr, "mecha: " + s.message() + "\n");
      fmt::print("{}\n", dump_json(Json{
                             {"verdict", "error"}, {"rule", nullptr}, {"message", s.message()}}));
      status = kExitError;
      continue;
    }
    fmt::print("{}\n", dump_json(verdict_json(g, g.screen(command))));
    std::fflush(stdout);
  }
  return status;
}

int guard_check_main(const GuardOptions& opt) {
  auto g = make_guard(opt);
  if (!g) {
    write_printable(stderr, "mecha: " + g.message() + "\n");
    return kExitError;
  }
  if (opt.batch) {
    if (!opt.command.empty()) {
      fmt::print(stderr,
                 "mecha: --batch reads commands from stdin; do not give one as an argument\n");
      return kExitUsage;
    }
    return batch_main(*g);
  }
  guard::Verdict v = g->screen(opt.command);
  if (opt.json) {
    fmt::print("{}\n", dump_json(verdict_json(*g, v)));
  } else if (v.allowed) {
    fmt::print("allow\n");
  } else {
    // The message quotes the command, which may come from anywhere.
    write_printable(
        stdout, fmt::format("refuse\nrule: {}\nmessage: {}\n", v.rule, g->refusal_message(v, 1)));
  }
  return v.allowed ? kExitOk : kExitError;
}

}  // namespace

void define_guard_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<GuardOptions>();
  CLI::App* guard = &sub;
  guard->require_subcommand(1);
  CLI::App* check = guard->add_subcommand(
      "check", "Screen a shell line and print the verdict (exit 0 allow, 1 refuse)");
  check->add_option("command", opt->command, "The shell line to screen");
  check->add_option("--worktree", opt->worktree, "The work tree (default: the current directory)");
  check->add_option("--config", opt->config_file, "Read only this config file");
  check->add_flag("--json", opt->json, "Print the verdict as JSON");
  check->add_flag("--batch", opt->batch,
                  "Read JSON Lines {\"command\": ...} on stdin; write one verdict per line");
  check->callback([opt, chosen, check] {
    if (!opt->batch && check->count("command") == 0) throw CLI::RequiredError("command");
    *chosen = [opt] { return guard_check_main(*opt); };
  });
}

}  // namespace mecha::cli
