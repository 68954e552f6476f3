// `mecha outbox list|show ID|approve ID|reject ID`: the messages SendMessage recorded
// (store/outbox.h), and a person's decision on those held for approval. `approve` delivers
// the message with the configured [messaging] backend and marks it sent (or failed, with the
// error); `reject` marks it rejected. Only a held message can be approved or rejected. The
// outbox lives in the state directory, which nothing a model runs can reach, so this command
// is the person's alone.
//
// A person approves what they were shown, so what is shown is exactly what would be sent:
//  - every field a model wrote (recipient, subject, body, and the reason, agent and session
//    beside them) goes through printable() (printable.h): an escape sequence in a subject
//    cannot erase the lines above it and draw another recipient; the one-line fields show
//    their line breaks, so a subject cannot start a line that looks like "to:";
//  - show and list print the content's seal (the first 12 hex digits of its SHA-256,
//    store/outbox.h, invariant 3), and approve delivers only a message whose content still
//    has the seal it was held with; `approve ID --content SEAL` also insists that it is the
//    seal the person saw.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "base/text.h"
#include "cli/command.h"
#include "cli/printable.h"
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
  std::string content;  // approve --content: the seal the person approved
};

// How much of the seal show and list print, and approve --content needs at least.
constexpr size_t kShownSeal = 12;

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
              {"decided", m.decided_ms ? Json(store::iso8601_utc(*m.decided_ms)) : Json()},
              {"content_sha256", store::content_seal(m.to, m.subject, m.body)},
              {"unchanged", m.unchanged()}};
}

// The seal as show and list print it: the content's, marked when it is not the one the
// message was held with.
std::string shown_seal(const store::OutboxMessage& m) {
  const std::string now = store::content_seal(m.to, m.subject, m.body).substr(0, kShownSeal);
  return m.unchanged() ? now : now + "!";
}

// `s` cut to at most `max` bytes, at a character's start.
std::string cut_text(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  s.resize(cut);
  return s + "…";
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
  std::string out = fmt::format("{:>4}  {:<8}  {:<16}  {:<13}  {:<30}  {}\n", "ID", "STATUS",
                                "CREATED (UTC)", "CONTENT", "TO", "SUBJECT");
  int held = 0;
  bool changed = false;
  for (const auto& m : *all) {
    held += m.status == store::OutboxStatus::kHeld;
    changed |= !m.unchanged();
    out += fmt::format("{:>4}  {:<8}  {:<16}  {:<13}  {:<30}  {}\n", m.id,
                       store::outbox_status_name(m.status), when(m.created_ms), shown_seal(m),
                       printable_line(m.to), cut_text(printable_line(m.subject), 60));
  }
  if (changed) {
    out += "A CONTENT marked ! was changed after the message was held; approve refuses it.\n";
  }
  if (held > 0)
    out += "Held messages wait for you: mecha outbox show ID, then approve ID or reject ID.\n";
  write_printable(stdout, out);  // each field is printable already; this keeps it so
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
  if (!m->reason.empty()) out += fmt::format("reason:  {}\n", printable_line(m->reason));
  out +=
      fmt::format("created: {} (session {}, agent {})\n", store::iso8601_utc(m->created_ms),
                  m->session.empty() ? "-" : printable_line(m->session), printable_line(m->agent));
  if (m->decided_ms) out += fmt::format("decided: {}\n", store::iso8601_utc(*m->decided_ms));
  out +=
      fmt::format("to:      {}\nsubject: {}\n", printable_line(m->to), printable_line(m->subject));
  const std::string seal = shown_seal(*m);
  if (!m->unchanged()) {
    out +=
        fmt::format("content: {} CHANGED after it was held (its seal was {}); approve refuses it\n",
                    seal, m->seal.empty() ? "never recorded" : m->seal.substr(0, kShownSeal));
  } else if (m->status == store::OutboxStatus::kHeld) {
    out += fmt::format("content: {} (to send exactly this: mecha outbox approve {} --content {})\n",
                       seal, m->id, seal);
  } else {
    out += fmt::format("content: {}\n", seal);
  }
  out += "\n" + printable(m->body) + "\n";
  write_printable(stdout, out);  // each field is printable already; this keeps it so
  return kExitOk;
}

int approve_main(const OutboxOptions& opt) {
  auto o = open_outbox(opt);
  if (!o) return report_failure(o.status());
  auto m = message(*o->outbox, opt.id);
  if (!m) return report_failure(m.status());
  if (Status st = held_or_error(*m, "approved"); !st) return report_failure(st);
  if (!m->unchanged()) {
    return report_failure(Status::error(fmt::format(
        "message {} was changed after it was held: its recipient, subject or body no longer "
        "match the seal recorded then, so it was NOT sent; see mecha outbox show {}, and "
        "reject it",
        m->id, m->id)));
  }
  if (!opt.content.empty() && !m->seal.starts_with(ascii_lower(opt.content))) {
    return report_failure(Status::error(fmt::format(
        "message {} holds content {}, not the {} you approved, so it was NOT sent; show it "
        "again (mecha outbox show {}) and approve what it shows",
        m->id, m->seal.substr(0, kShownSeal), opt.content, m->id)));
  }
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
  std::fputs(fmt::format("message {} sent to {} (content {})\n", m->id, printable_line(m->to),
                         m->seal.substr(0, kShownSeal))
                 .c_str(),
             stdout);
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
  approve
      ->add_option("--content", opt->content,
                   "Send only if the content still has this seal (as `show` prints it)")
      ->check([](const std::string& v) -> std::string {
        const bool hex = v.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
        if (hex && v.size() >= kShownSeal && v.size() <= 64) return "";
        return fmt::format(
            "expected the {} to 64 hex digits of the seal `mecha outbox show` "
            "prints, got '{}'",
            kShownSeal, v);
      });
  approve->callback([opt, chosen] { *chosen = [opt] { return approve_main(*opt); }; });

  CLI::App* reject = sub.add_subcommand("reject", "Refuse a held message: it is never sent");
  add_common(reject, opt.get());
  reject->add_option("id", opt->id, "The message id")->required();
  reject->callback([opt, chosen] { *chosen = [opt] { return reject_main(*opt); }; });
}

}  // namespace mecha::cli
