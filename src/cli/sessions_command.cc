// `mecha sessions list|show|export|rm`: the session store, for people and (--json) programs.
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/printable.h"
#include "cli/renderer.h"
#include "cli/todo_view.h"
#include "cli/workspace.h"
#include "store/open_store.h"
#include "store/postgres_url.h"
#include "store/session_store.h"

namespace mecha::cli {
namespace {

struct SessionsOptions {
  std::string store;
  std::string work_tree;
  bool json = false;
  bool all = false;  // list: every tree's sessions
  std::string id;
};

Result<std::unique_ptr<store::SessionStore>> open_store(const SessionsOptions& opt) {
  auto tree = Workspace::tree_of(opt.work_tree);
  if (!tree) return tree.status();
  auto path = Workspace::store_path_of(*tree, opt.store);
  if (!path) return path.status();
  if (!store::is_postgres_url(path->string()) && !std::filesystem::exists(*path)) {
    return Status::usage(fmt::format("no session store at {} (a run creates it)", path->string()));
  }
  return store::open_store(path->string(), tree->string());
}

// "2026-11-29 19:30" (UTC)
std::string short_time(int64_t unix_ms) {
  std::string iso = store::iso8601_utc(unix_ms);
  return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

// "$0.0123"; "≥$0.0123" when some calls had no price; "unpriced" when none had one.
std::string cost_text(std::optional<double> cost, int64_t unpriced) {
  if (!cost) return unpriced > 0 ? "unpriced" : "$0";
  return fmt::format("{}${:.4f}", unpriced > 0 ? "≥" : "", *cost);
}

std::string first_lines(const std::string& text, size_t max_lines, const std::string& indent) {
  std::string out;
  size_t pos = 0, lines = 0;
  while (pos < text.size() && lines < max_lines) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out += indent + text.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
    ++lines;
  }
  if (pos < text.size()) out += fmt::format("{}… ({} more bytes)\n", indent, text.size() - pos);
  return out;
}

int list_main(const SessionsOptions& opt) {
  auto st = open_store(opt);
  if (!st) return report_failure(st.status());
  auto all = opt.all ? (*st)->list() : (*st)->list((*st)->work_tree());
  if (!all) return report_failure(all.status());
  if (opt.json) {
    Json arr = Json::array();
    for (const auto& s : *all) arr.push_back(store::summary_to_json(s));
    std::fputs((dump_json(arr) + "\n").c_str(), stdout);
    return kExitOk;
  }
  // With --all the tree goes last but one: a path's width varies, the title is cut anyway.
  std::string out =
      fmt::format("{:<20}  {:<16}  {:>5}  {:>10}  {:<9}  {}{}\n", "ID", "STARTED (UTC)", "TURNS",
                  "COST", "UNTRUSTED", opt.all ? "TREE  " : "", "TITLE");
  for (const auto& s : *all) {
    std::string tree;
    if (opt.all) tree = (s.work_tree.empty() ? std::string("(unknown)") : s.work_tree) + "  ";
    out += fmt::format("{:<20}  {:<16}  {:>5}  {:>10}  {:<9}  {}{}\n", s.id,
                       short_time(s.started_ms), s.turns, cost_text(s.cost(), s.unpriced_calls),
                       s.untrusted ? "yes" : "no", tree, s.title);
  }
  // Titles and work trees are text a prompt or a clone chose.
  write_printable(stdout, out);
  return kExitOk;
}

std::string render_record(const store::Record& r) {
  const Json& b = r.body;
  switch (r.kind) {
    case store::RecordKind::kRunStart:
      return fmt::format("── run started {} (pid {}){}\n", store::iso8601_utc(r.at_ms),
                         b.value("pid", 0), b.value("resumed", false) ? ", resumed" : "");
    case store::RecordKind::kRunEnd: {
      std::string cost = b.contains("cost_usd") && b["cost_usd"].is_number()
                             ? fmt::format("${:.4f}", b["cost_usd"].get<double>())
                             : std::string("cost unknown");
      std::string why = b.value("limit", b.value("error", std::string()));
      // Stuck: what was repeated, its first line (what was tried is in the records above).
      if (why.empty()) {
        why = b.value("stuck", std::string());
        why = why.substr(0, why.find('\n'));
      }
      const int blocked = b.value("blocked_sends", 0);
      return fmt::format(
          "── run ended: {}{} · {} turn{} · {}{}\n", b.value("status", ""),
          why.empty() ? "" : ": " + why, b.value("turns", 0), b.value("turns", 0) == 1 ? "" : "s",
          cost,
          blocked == 0 ? ""
                       : fmt::format(" · {} send{} blocked", blocked, blocked == 1 ? "" : "s"));
    }
    case store::RecordKind::kUserMessage:
    case store::RecordKind::kAssistantMessage: {
      auto m = message_from_json(b.value("message", Json::object()), "message");
      if (!m) return fmt::format("(record {} unreadable: {})\n", r.seq, m.message());
      std::string out;
      bool user = r.kind == store::RecordKind::kUserMessage;
      for (const Block& block : m->blocks) {
        if (const auto* t = std::get_if<TextBlock>(&block)) {
          out += user ? first_lines(t->text, 1000, "> ") : first_lines(t->text, 1000, "");
        } else if (const auto* u = std::get_if<ToolUseBlock>(&block)) {
          auto list =
              u->name == "TodoWrite" ? todo_checklist(u->input, "    ", Palette{}) : std::nullopt;
          out += list ? "● TodoWrite\n" + *list
                      : fmt::format("● {}({})\n", u->name, summarize_input(u->input, 100));
        }
      }
      return user ? "\n" + out : out;
    }
    case store::RecordKind::kToolResult: {
      std::string head =
          fmt::format("  ⎿ {}{}{}:\n", b.value("is_error", false) ? "error" : "result",
                      b.value("untrusted", false) ? " (untrusted)" : "",
                      fmt::format(" [{}]", b.value("id", "")));
      return head + first_lines(b.value("content", ""), 5, "    ");
    }
    case store::RecordKind::kRefusal:
      return fmt::format("  ⎿ refused by rule '{}': {}\n", b.value("rule", ""),
                         b.value("message", ""));
    case store::RecordKind::kNote:
      return fmt::format("note: {}\n", b.value("text", ""));
    // The messages it replaced are shown above it; the model saw the summary from here on.
    case store::RecordKind::kCompaction:
      return fmt::format("── compacted ({}): {} messages replaced by this summary:\n{}",
                         b.value("trigger", ""), b.value("replaced", 0),
                         first_lines(b.value("summary", ""), 1000, "  │ "));
    case store::RecordKind::kToolCall:
    case store::RecordKind::kUsage:
      return "";  // the call is shown with its assistant message; usage in the summary
  }
  return "";
}

int show_main(const SessionsOptions& opt) {
  auto st = open_store(opt);
  if (!st) return report_failure(st.status());
  auto id = (*st)->resolve(opt.id);
  if (!id) return report_failure(id.status());
  auto sum = (*st)->summary(*id);
  if (!sum) return report_failure(sum.status());
  auto records = (*st)->read_records(*id);
  if (!records) return report_failure(records.status());
  if (opt.json) {
    Json recs = Json::array();
    for (const auto& r : *records) recs.push_back(store::record_to_json(r));
    Json j{{"session", store::summary_to_json(*sum)}, {"records", std::move(recs)}};
    std::fputs((dump_json(j) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string out = fmt::format(
      "session {}\ntitle: {}\nstarted: {}\nturns: {} · cost: {}{} · untrusted: {}\n", sum->id,
      sum->title, store::iso8601_utc(sum->started_ms), sum->turns,
      cost_text(sum->cost(), sum->unpriced_calls),
      sum->unpriced_calls > 0
          ? fmt::format(" ({})", count_of(sum->unpriced_calls, "unpriced call", "unpriced calls"))
          : "",
      sum->untrusted ? "yes" : "no");
  // The list the run's agent last wrote with TodoWrite (a subagent's calls are not recorded),
  // again at the end.
  std::optional<std::string> todos;
  for (const auto& r : *records) {
    out += render_record(r);
    if (r.kind != store::RecordKind::kToolCall || r.body.value("name", "") != "TodoWrite") {
      continue;
    }
    if (auto list = todo_checklist(r.body.value("input", Json::object()), "  ", Palette{})) {
      todos = std::move(list);
    }
  }
  if (todos) out += "── todo list (the last TodoWrite):\n" + *todos;
  // Every record is a model's, a tool's or a person's text: all of it for people, escaped.
  write_printable(stdout, out);
  return kExitOk;
}

int export_main(const SessionsOptions& opt) {
  auto st = open_store(opt);
  if (!st) return report_failure(st.status());
  auto id = (*st)->resolve(opt.id);
  if (!id) return report_failure(id.status());
  auto records = (*st)->read_records(*id);
  if (!records) return report_failure(records.status());
  std::string out;
  for (const auto& r : *records) {
    out += dump_json(store::record_to_json(r)) + "\n";
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int rm_main(const SessionsOptions& opt) {
  auto st = open_store(opt);
  if (!st) return report_failure(st.status());
  auto id = (*st)->resolve(opt.id);
  if (!id) return report_failure(id.status());
  if (Status s = (*st)->remove(*id); !s.ok()) return report_failure(s);
  if (opt.json) {
    std::fputs((dump_json(Json{{"removed", *id}}) + "\n").c_str(), stdout);
  } else {
    std::printf("removed session %s\n", id->c_str());
  }
  return kExitOk;
}

void add_common(CLI::App* cmd, SessionsOptions* opt) {
  cmd->add_flag("--json", opt->json, "Print JSON for programs");
  cmd->add_option("--store", opt->store,
                  "The session store (default $XDG_STATE_HOME/mecha/sessions.db, "
                  "~/.local/state/mecha/sessions.db), or postgresql://...");
  cmd->add_option("-C,--work-tree", opt->work_tree,
                  "The work tree whose sessions list shows and \"last\" means")
      ->check(CLI::ExistingDirectory);
}

}  // namespace

void define_sessions_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<SessionsOptions>();
  CLI::App* sessions = &sub;
  sessions->require_subcommand(1);
  struct Sub {
    const char* name;
    const char* help;
    int (*main)(const SessionsOptions&);
    bool takes_id;
  };
  static const Sub kSubs[] = {
      {"list",
       "This work tree's sessions (--all: every tree's): id, start time, turns, cost, "
       "untrusted, title",
       list_main, false},
      {"show", "A session's transcript, with tool calls, refusals and notes", show_main, true},
      {"export", "A session's records as JSON Lines", export_main, true},
      {"rm", "Delete a session and all its records", rm_main, true},
  };
  for (const Sub& entry : kSubs) {
    CLI::App* cmd = sessions->add_subcommand(entry.name, entry.help);
    add_common(cmd, opt.get());
    if (entry.main == list_main) {
      cmd->add_flag("--all", opt->all, "Every work tree's sessions, with the tree shown");
    }
    if (entry.takes_id) {
      cmd->add_option("id", opt->id, "A session id, its unique prefix, or \"last\"")->required();
    }
    auto run = entry.main;
    cmd->callback([opt, chosen, run] { *chosen = [opt, run] { return run(*opt); }; });
  }
}

}  // namespace mecha::cli
