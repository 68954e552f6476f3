// `mecha chat`: an interactive session with the daemon, in the terminal.
//
// Connects to the daemon on the socket; when none is running, runs one inside this process
// (the same model options as `mecha serve`) and talks to it over a socket pair. The daemon's
// frames are turned back into a run's events (server/event_frames.h) and shown by the same
// renderer as `mecha run`; an approval request is asked inline (y/N). Lines are read with
// line editing and history (line_editor.h); slash commands are in chat_commands.h. --json
// prints every frame as it arrives, one per line, on stdout. Ctrl-C cancels the running
// turn and the chat goes on.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "cli/chat_commands.h"
#include "cli/command.h"
#include "cli/daemon_setup.h"
#include "cli/folder_trust.h"
#include "cli/interrupt.h"
#include "cli/line_editor.h"
#include "cli/printable.h"
#include "cli/renderer.h"
#include "cli/workspace.h"
#include "server/client.h"
#include "server/event_frames.h"
#include "wire/codec.h"

namespace mecha::cli {
namespace {

const std::string kSoftware = "mecha 0.1.0 chat";

struct ChatFlags {
  DaemonFlags daemon;
  bool json = false;
  std::string resume;
};

// The daemon chat talks to: an external one on the socket, or its own, in this process.
class Connection {
 public:
  ~Connection() { stop_own(); }

  // Connects to the daemon on the socket, or starts one here when none listens there.
  Status start(const DaemonFlags& flags) {
    socket_ = socket_path(flags);
    auto client = server::Client::connect(socket_, kSoftware);
    if (client.ok()) {
      client_ = std::move(*client);
      return ok_status();
    }
    if (!(errno == ENOENT || errno == ECONNREFUSED ||
          client.message().find("No such file") != std::string::npos ||
          client.message().find("Connection refused") != std::string::npos)) {
      return client.status();
    }
    auto assembled = assemble_daemon(flags);
    if (!assembled) return assembled.status();
    return start_own(std::move(*assembled));
  }

  // Replaces the own daemon by one for `flags` (another model), reopening `session`.
  // The old one keeps running when the new one cannot be assembled.
  Status restart_own(const DaemonFlags& flags) {
    auto assembled = assemble_daemon(flags);
    if (!assembled) return assembled.status();
    stop_own();
    return start_own(std::move(*assembled));
  }

  server::Client& client() { return *client_; }
  bool own() const { return own_ != nullptr; }
  const std::string& model() const { return model_; }
  const std::string& socket() const { return socket_; }

 private:
  Status start_own(AssembledDaemon assembled) {
    own_ = std::move(assembled.daemon);
    model_ = assembled.model;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      return Status::error(fmt::format("socketpair: {}", std::strerror(errno)));
    }
    own_->attach(UniqueFd(pair[0]));
    thread_ = std::thread([d = own_.get()] { (void)d->serve(UniqueFd()); });
    auto client = server::Client::over(UniqueFd(pair[1]), kSoftware);
    if (!client) return client.status();
    client_ = std::move(*client);
    return ok_status();
  }

  void stop_own() {
    if (!own_) return;
    if (client_) client_->shutdown();
    own_->stop();
    if (thread_.joinable()) thread_.join();
    client_.reset();
    own_.reset();
  }

  std::string socket_;
  std::string model_;
  std::unique_ptr<server::Daemon> own_;
  std::thread thread_;
  std::unique_ptr<server::Client> client_;
};

// How an exchange with the daemon ended.
enum class Ended { kAnswered, kClosed, kBadFrame };

// A frame from the daemon that did not decode (too large, malformed) means this client and
// the daemon no longer agree on the stream: said once, and the chat ends.
Ended bad_frame(const wire::Decoded& d) {
  fmt::print(stderr, "mecha: the daemon sent a frame this client cannot read: {} ({})\n",
             printable(d.error.message), printable(d.error.code));
  return Ended::kBadFrame;
}

class Chat {
 public:
  Chat(const ChatFlags& flags, Connection& conn, LineEditor& editor)
      : flags_(flags),
        conn_(conn),
        editor_(editor),
        p_(Palette::of(!flags.json && color_wanted(STDERR_FILENO))) {}

  int run();

 private:
  Ended command(const ChatCommand& c);
  Ended run_turn(const std::string& text);
  Ended request(const wire::Frame& frame, bool (*is_reply)(const wire::Frame&));
  void show(const wire::Frame& f);  // a frame that is not a turn's
  void print_json(const wire::Frame& f) {
    std::fputs(wire::encode_frame(f).c_str(), stdout);
    std::fflush(stdout);
  }

  const ChatFlags& flags_;
  Connection& conn_;
  LineEditor& editor_;
  const Palette p_;
  std::string session_;  // the open session
};

void Chat::show(const wire::Frame& f) {
  if (flags_.json) return print_json(f);
  if (const auto* e = std::get_if<wire::Error>(&f)) {
    fmt::print(stderr, "{}mecha: {} ({}){}\n", p_.red, printable(e->message), printable(e->code),
               p_.reset);
  } else if (const auto* o = std::get_if<wire::Opened>(&f)) {
    session_ = o->session_id;
    fmt::print(stderr, "{}session {}{}{}\n", p_.dim, printable(o->session_id),
               o->resumed
                   ? fmt::format(" resumed ({}{})", count_of(o->records, "record", "records"),
                                 o->untrusted ? ", has read untrusted content" : "")
                   : std::string(" (new)"),
               p_.reset);
  } else if (const auto* s = std::get_if<wire::Sessions>(&f)) {
    if (s->sessions.empty()) fmt::print(stderr, "no sessions\n");
    for (const auto& x : s->sessions) {
      fmt::print(stderr, "{}  {}{}{}\n", printable(x.session_id),
                 count_of(x.records, "record", "records"), x.untrusted ? "  untrusted" : "",
                 x.attached ? "  (open)" : "");
    }
  } else if (const auto* c = std::get_if<wire::CostReport>(&f)) {
    fmt::print(stderr, "session {}: {} in / {} out tokens · {}{}\n", printable(c->session_id),
               c->usage.input_tokens, c->usage.output_tokens,
               c->cost_usd ? fmt::format("${:.4f}", *c->cost_usd) : std::string("cost unknown"),
               c->unpriced_calls > 0 && c->cost_usd ? " + unpriced calls" : "");
  }
  std::fflush(stderr);
}

// Sends `frame` and shows frames until its reply (or an error).
Ended Chat::request(const wire::Frame& frame, bool (*is_reply)(const wire::Frame&)) {
  if (!conn_.client().send(frame).ok()) return Ended::kClosed;
  while (auto d = conn_.client().receive()) {
    if (!d->ok()) return bad_frame(*d);
    show(*d->frame);
    if (is_reply(*d->frame) || std::holds_alternative<wire::Error>(*d->frame)) {
      return Ended::kAnswered;
    }
  }
  return Ended::kClosed;
}

bool is_opened(const wire::Frame& f) { return std::holds_alternative<wire::Opened>(f); }
bool is_sessions(const wire::Frame& f) { return std::holds_alternative<wire::Sessions>(f); }
bool is_cost(const wire::Frame& f) { return std::holds_alternative<wire::CostReport>(f); }

// A turn's status from the error frame that precedes its turn_done (server/turn.cc).
agent::Outcome outcome_of(const std::optional<wire::Error>& error, const wire::TurnDone& done) {
  agent::Outcome o;
  o.text = done.content;
  o.usage = done.usage;
  o.untrusted = done.untrusted;
  if (!error) return o;
  if (error->code == wire::codes::kTurnCancelled) {
    o.status = agent::RunStatus::kCancelled;
  } else if (error->code == wire::codes::kTurnLimits) {
    o.status = agent::RunStatus::kLimitsExceeded;
    o.limit = error->message;
  } else {
    o.status = agent::RunStatus::kError;
    o.error = fmt::format("{} ({})", error->message, error->code);
  }
  return o;
}

// One turn: frames until turn_done, approvals asked inline, Ctrl-C sends cancel.
Ended Chat::run_turn(const std::string& text) {
  server::Client& client = conn_.client();
  if (Status sent = client.send(wire::UserTurn{text}); !sent.ok()) {
    write_printable(stderr, "mecha: " + sent.message() + "\n");
    return Ended::kClosed;
  }
  HumanRenderer::Options view = HumanRenderer::for_terminal(STDERR_FILENO, STDOUT_FILENO);
  view.summary = false;  // turn_done carries tokens only; printed below
  HumanRenderer renderer(stderr, stdout, view);
  if (!flags_.json) renderer.waiting_for_model();

  CancelToken cancel;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (cancel.cancelled()) {
        (void)client.send(wire::Cancel{});
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  Ended ended = Ended::kClosed;
  std::optional<wire::Error> error;
  {
    InterruptScope interrupts(&cancel);
    while (auto d = client.receive()) {
      if (!d->ok()) {
        ended = bad_frame(*d);
        break;
      }
      const wire::Frame& f = *d->frame;
      if (flags_.json) {
        print_json(f);
      } else if (auto event = server::event_for(f)) {
        renderer.on_event(*event);
      } else if (const auto* e = std::get_if<wire::Error>(&f)) {
        error = *e;
      } else if (const auto* t = std::get_if<wire::TurnDone>(&f)) {
        renderer.on_event(agent::DoneEvent{outcome_of(error, *t), session_});
        fmt::print(stderr, "{}{} in / {} out tokens{}{}\n", p_.dim, t->usage.input_tokens,
                   t->usage.output_tokens,
                   t->untrusted ? " · session has read untrusted content" : "", p_.reset);
      }
      if (const auto* a = std::get_if<wire::ApprovalRequest>(&f)) {
        renderer.pause_spinner();
        // The renderer has said who asks to run what, and why. "Always" is offered for a
        // permission ask: a tainted run's send is approved one at a time.
        const bool permission = a->action == "permission";
        std::string prompt =
            fmt::format("Allow {}? [y/N{}] ", a->tool, permission ? "/a(lways)" : "");
        LineEditor::Read answer = editor_.read(printable(prompt), false);
        const bool got = answer.got == LineEditor::Got::kLine;
        const bool always = permission && got && (answer.line == "a" || answer.line == "always");
        const bool yes = always || (got && (answer.line == "y" || answer.line == "yes"));
        (void)client.send(wire::ApprovalAnswer{a->request_id, yes, always});
      }
      if (std::holds_alternative<wire::TurnDone>(f)) {
        ended = Ended::kAnswered;
        break;
      }
    }
  }
  done.store(true);
  watcher.join();
  std::fflush(stderr);
  return ended;
}

Ended Chat::command(const ChatCommand& c) {
  switch (c.kind) {
    case ChatCommand::kHelp:
      std::fputs(chat_help().c_str(), stderr);
      return Ended::kAnswered;
    case ChatCommand::kSessions:
      return request(wire::ListSessions{}, is_sessions);
    case ChatCommand::kResume:
      return request(wire::Open{c.arg}, is_opened);
    case ChatCommand::kCost:
      return request(wire::CostQuery{}, is_cost);
    case ChatCommand::kClear:
      return request(wire::Open{""}, is_opened);
    case ChatCommand::kCompact:
      // A turn the daemon takes as the command (agent::compact_command): no protocol change.
      return run_turn(c.arg.empty() ? "/compact" : "/compact " + c.arg);
    case ChatCommand::kModel: {
      if (!conn_.own()) {
        fmt::print(stderr,
                   "the model is the one the daemon at {} was started with (mecha serve "
                   "--model); chat cannot switch it: stop that daemon, or start chat with "
                   "--socket pointing elsewhere so it runs its own\n",
                   conn_.socket());
        return Ended::kAnswered;
      }
      if (c.arg.empty()) {
        const std::string& provider = flags_.daemon.run.provider;
        write_printable(stderr, fmt::format("model: {} · provider: {}\n", conn_.model(),
                                            provider.empty() ? "the config's default" : provider));
        return Ended::kAnswered;
      }
      DaemonFlags next = flags_.daemon;
      next.run.model = c.arg;
      if (Status s = conn_.restart_own(next); !s.ok()) {
        fmt::print(stderr, "{}mecha: cannot switch to {}: {}{}\n", p_.red, printable(c.arg),
                   printable(s.message()), p_.reset);
        return Ended::kAnswered;
      }
      write_printable(stderr, fmt::format("model: {}\n", conn_.model()));
      return request(wire::Open{session_}, is_opened);
    }
    case ChatCommand::kQuit:
      return Ended::kAnswered;
    case ChatCommand::kUnknown:
      write_printable(stderr, fmt::format("unknown command {}: /help lists them\n", c.arg));
      return Ended::kAnswered;
  }
  return Ended::kAnswered;
}

int Chat::run() {
  auto opened = conn_.client().open(flags_.resume);
  if (!opened.ok()) return report_failure(opened.status());
  show(*opened);
  if (!flags_.json && editor_.interactive()) {
    fmt::print(stderr, "{}/help for commands, Ctrl-D to quit{}\n", p_.dim, p_.reset);
  }
  while (true) {
    LineEditor::Read r = editor_.read_message("> ");
    if (r.got == LineEditor::Got::kEnd) break;
    if (r.got == LineEditor::Got::kInterrupted || r.line.empty()) continue;
    Ended ended;
    if (r.line.starts_with("/")) {
      ChatCommand c = parse_chat_command(r.line);
      if (c.kind == ChatCommand::kQuit) break;
      ended = command(c);
    } else {
      ended = run_turn(r.line);
    }
    if (ended == Ended::kBadFrame) {
      conn_.client().shutdown();
      return kExitError;
    }
    if (ended == Ended::kClosed) {
      fmt::print(stderr, "mecha: the daemon closed the connection\n");
      return kExitError;
    }
  }
  if (std::string e = editor_.history_error(); !e.empty()) {
    write_printable(stderr, "mecha: " + e + "\n");
  }
  return kExitOk;
}

// user_state_dir()/chat_history, its directory made private; empty (no history) when
// there is no state dir.
std::filesystem::path history_file() {
  auto dir = private_state_dir();
  if (!dir) return {};
  return *dir / "chat_history";
}

int chat_main(const ChatFlags& flags) {
  // Asked before chat's own daemon reads the tree's files.
  if (!flags.json) {
    if (auto tree = Workspace::tree_of(flags.daemon.work_tree); tree.ok()) offer_tree_trust(*tree);
  }
  Connection conn;
  if (Status s = conn.start(flags.daemon); !s.ok()) return report_failure(s);
  LineEditor editor(isatty(STDIN_FILENO) == 1 ? history_file() : std::filesystem::path());
  Chat chat(flags, conn, editor);
  return chat.run();
}

}  // namespace

void define_chat_command(CLI::App& sub, Action* chosen) {
  auto flags = std::make_shared<ChatFlags>();
  CLI::App* chat = &sub;
  add_daemon_flags(chat, &flags->daemon);
  chat->add_flag("--json", flags->json, "Print every frame as it arrives, one JSON per line");
  chat->add_option("--resume", flags->resume, "Resume this session (an id, a prefix, or last)");
  chat->callback([flags, chosen] { *chosen = [flags] { return chat_main(*flags); }; });
}

}  // namespace mecha::cli
