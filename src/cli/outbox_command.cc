// `mecha outbox list|show ID|approve ID|reject ID`: the messages SendMessage recorded
// (store/outbox.h), and a person's decision on those held for approval. `approve` delivers
// the message with the configured [messaging] backend and marks it sent (or failed, with the
// error); `reject` marks it rejected. Only a held message can be approved or rejected. The
// outbox lives in the state directory, which nothing a model runs can reach, so this command
// is the person's alone.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/workspace.h"
#include "store/outbox.h"
#include "store/record.h"
#include "tools/message_delivery.h"

namespace mecha::cli {
namespace {

struct OutboxOptions {
  std::string config_file;
  std::string work_tree;
  bool json = false;
  int64_t id = 0;
};

struct Opened {
  config::Config config;
  std::unique_ptr<store::Outbox> outbox;
};

Result<Opened> open_outbox(const OutboxOptions& opt) {
  auto ws = Workspace::open({opt.work_tree, opt.config_file, ""});
  if (!ws) return ws.status();
  auto path = store::outbox_path(ws->config().messaging.outbox);
  if (!path) return path.status();
  auto outbox = store::Outbox::open(*path);
  if (!outbox) return outbox.status();
  return Opened{ws->config(), std::move(*outbox)};
}

Json to_json(const store::OutboxMessage& m) {
  return Json{{"id", m.id},
              {"created", store::iso8601_utc(m.created_ms)},
              {"session", m.session},
              {"agent", m.agent},
              {"to", m.to},
              {"subject", m.subject},
              {"body", m.body},
              {"status", store::outbox_status_name(m.status)},
              {"reason", m.reason},
              {"decided", m.decided_ms ? Json(store::iso8601_utc(*m.decided_ms)) : Json()}};
}

std::string when(int64_t ms) {
  std::string at = store::iso8601_utc(ms);
  return at.substr(0, 10) + " " + at.substr(11, 5);
}

Result<store::OutboxMessage> message(store::Outbox& outbox, int64_t id) {
  auto m = outbox.get(id);
  if (!m) return m.status();
  if (!*m) {
    return Status::usage(
        fmt::format("the outbox has no message {} (mecha outbox list shows them)", id));
  }
  return **m;
}

Status held_or_error(const store::OutboxMessage& m, const char* verb) {
  if (m.status == store::OutboxStatus::kHeld) return ok_status();
  return Status::error(fmt::format("message {} is {}, not held: only a held message can be {}",
                                   m.id, store::outbox_status_name(m.status), verb));
}

int list_main(const OutboxOptions& opt) {
  auto o = open_outbox(opt);
  if (!o) return report_failure(o.status());
  auto all = o->outbox->list();
  if (!all) return report_failure(all.status());
  if (opt.json) {
    Json arr = Json::array();
    for (const auto& m : *all) arr.push_back(to_json(m));
    std::fputs((arr.dump() + "\n").c_str(), stdout);
    return kExitOk;
  }
  if (all->empty()) {
    std::printf("the outbox is empty (%s)\n", o->outbox->path().c_str());
    return kExitOk;
  }
  std::string out = fmt::format("{:>4}  {:<8}  {:<16}  {:<30}  {}\n", "ID", "STATUS",
                                "CREATED (UTC)", "TO", "SUBJECT");
  int held = 0;
  for (const auto& m : *all) {
    held += m.status == store::OutboxStatus::kHeld;
    out +=
        fmt::format("{:>4}  {:<8}  {:<16}  {:<30}  {}\n", m.id, store::outbox_status_name(m.status),
                    when(m.created_ms), m.to, m.subject.substr(0, 60));
  }
  if (held > 0)
    out += "Held messages wait for you: mecha outbox show ID, then approve ID or reject ID.\n";
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int show_main(const OutboxOptions& opt) {
  auto o = open_outbox(opt);
  if (!o) return report_failure(o.status());
  auto m = message(*o->outbox, opt.id);
  if (!m) return report_failure(m.status());
  if (opt.json) {
    std::fputs((to_json(*m).dump() + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string out =
      fmt::format("message {}\nstatus:  {}\n", m->id, store::outbox_status_name(m->status));
  if (!m->reason.empty()) out += fmt::format("reason:  {}\n", m->reason);
  out += fmt::format("created: {} (session {}, agent {})\n", store::iso8601_utc(m->created_ms),
                     m->session.empty() ? "-" : m->session, m->agent);
  if (m->decided_ms) out += fmt::format("decided: {}\n", store::iso8601_utc(*m->decided_ms));
  out += fmt::format("to:      {}\nsubject: {}\n\n{}\n", m->to, m->subject, m->body);
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int approve_main(const OutboxOptions& opt) {
  auto o = open_outbox(opt);
  if (!o) return report_failure(o.status());
  auto m = message(*o->outbox, opt.id);
  if (!m) return report_failure(m.status());
  if (Status st = held_or_error(*m, "approved"); !st) return report_failure(st);
  const config::MessagingConfig& messaging = o->config.messaging;
  if (messaging.backend.empty()) {
    return report_failure(Status::error(fmt::format(
        "message {} stays held: no [messaging] backend is configured to deliver it", m->id)));
  }
  // Claimed first, in one statement: two approvals at once deliver once (at most once).
  auto claimed = o->outbox->set_status(m->id, store::OutboxStatus::kSent,
                                       "approved by a person (mecha outbox approve)",
                                       store::OutboxStatus::kHeld);
  if (!claimed) return report_failure(claimed.status());
  if (!*claimed) {
    return report_failure(Status::error(
        fmt::format("message {} was decided meanwhile; see mecha outbox show {}", m->id, m->id)));
  }
  tools::OutgoingMessage out{m->id, m->to, m->subject, m->body};
  if (Status sent = tools::deliver_message(messaging, out, nullptr); !sent) {
    auto set = o->outbox->set_status(m->id, store::OutboxStatus::kFailed, sent.message());
    if (!set) return report_failure(set.status());
    return report_failure(Status::error(
        fmt::format("message {} was NOT sent (marked failed): {}", m->id, sent.message())));
  }
  std::printf("message %lld sent to %s\n", static_cast<long long>(m->id), m->to.c_str());
  return kExitOk;
}

int reject_main(const OutboxOptions& opt) {
  auto o = open_outbox(opt);
  if (!o) return report_failure(o.status());
  auto m = message(*o->outbox, opt.id);
  if (!m) return report_failure(m.status());
  if (Status st = held_or_error(*m, "rejected"); !st) return report_failure(st);
  auto set = o->outbox->set_status(m->id, store::OutboxStatus::kRejected,
                                   "rejected by a person (mecha outbox reject)",
                                   store::OutboxStatus::kHeld);
  if (!set) return report_failure(set.status());
  if (!*set) {
    return report_failure(Status::error(
        fmt::format("message {} was decided meanwhile; see mecha outbox show {}", m->id, m->id)));
  }
  std::printf("message %lld rejected; it will not be sent\n", static_cast<long long>(m->id));
  return kExitOk;
}

void add_common(CLI::App* cmd, OutboxOptions* opt) {
  cmd->add_option("--config", opt->config_file, "Read only this config file");
  cmd->add_option("-C,--work-tree", opt->work_tree,
                  "The work tree whose config to read (default: this directory)")
      ->check(CLI::ExistingDirectory);
}

}  // namespace

void define_outbox_command(CLI::App& sub, Action* chosen) {
  auto opt = std::make_shared<OutboxOptions>();
  sub.require_subcommand(1);
  CLI::App* list =
      sub.add_subcommand("list", "Every message SendMessage recorded, with its status");
  add_common(list, opt.get());
  list->add_flag("--json", opt->json, "Print JSON for programs");
  list->callback([opt, chosen] { *chosen = [opt] { return list_main(*opt); }; });

  CLI::App* show = sub.add_subcommand("show", "One message: who to, why it is held, its text");
  add_common(show, opt.get());
  show->add_option("id", opt->id, "The message id")->required();
  show->add_flag("--json", opt->json, "Print JSON for programs");
  show->callback([opt, chosen] { *chosen = [opt] { return show_main(*opt); }; });

  CLI::App* approve =
      sub.add_subcommand("approve", "Send a held message with the configured backend");
  add_common(approve, opt.get());
  approve->add_option("id", opt->id, "The message id")->required();
  approve->callback([opt, chosen] { *chosen = [opt] { return approve_main(*opt); }; });

  CLI::App* reject = sub.add_subcommand("reject", "Refuse a held message: it is never sent");
  add_common(reject, opt.get());
  reject->add_option("id", opt->id, "The message id")->required();
  reject->callback([opt, chosen] { *chosen = [opt] { return reject_main(*opt); }; });
}

}  // namespace mecha::cli
