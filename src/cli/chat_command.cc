// `mecha chat`: an interactive session with the daemon, in the terminal.
//
// Connects to the daemon on the socket; when none is running, runs one inside this process
// (the same model options as `mecha serve`) and talks to it over a socket pair. Streamed
// text goes to stdout, tool calls and results to stderr as they happen; an approval request
// is asked inline (y/n). Slash commands: /sessions, /resume ID, /cost, /quit. --json prints
// every frame as it arrives, one per line, on stdout. Ctrl-C cancels the running turn.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/daemon_setup.h"
#include "cli/interrupt.h"
#include "cli/renderer.h"
#include "server/client.h"
#include "wire/codec.h"

namespace mecha::cli {
namespace {

struct ChatFlags {
  DaemonFlags daemon;
  bool json = false;
  std::string resume;
};

// Shows frames to a person.
class ChatView {
 public:
  ChatView(bool json, bool color) : json_(json), color_(color) {}

  void show(const wire::Frame& f) {
    if (json_) {
      std::fputs(wire::encode_frame(f).c_str(), stdout);
      std::fflush(stdout);
      return;
    }
    const char* dim = color_ ? "\x1b[2m" : "";
    const char* red = color_ ? "\x1b[31m" : "";
    const char* bold = color_ ? "\x1b[1m" : "";
    const char* reset = color_ ? "\x1b[0m" : "";
    if (const auto* d = std::get_if<wire::TextDelta>(&f)) {
      std::fputs(d->delta.c_str(), stdout);
      std::fflush(stdout);
      streamed_ = true;
    } else if (const auto* t = std::get_if<wire::Text>(&f)) {
      if (!streamed_) std::fputs(t->text.c_str(), stdout);
      std::fputs("\n", stdout);
      std::fflush(stdout);
      streamed_ = false;
    } else if (std::holds_alternative<wire::ToolCall>(f) ||
               std::holds_alternative<wire::ToolResult>(f) ||
               std::holds_alternative<wire::Refusal>(f) || std::holds_alternative<wire::Note>(f) ||
               std::holds_alternative<wire::Nested>(f)) {
      show_event(wire::event_to_json(f), 0, dim, red, bold, reset);
    } else if (const auto* e = std::get_if<wire::Error>(&f)) {
      fmt::print(stderr, "{}mecha: {} ({}){}\n", red, e->message, e->code, reset);
    } else if (const auto* done = std::get_if<wire::TurnDone>(&f)) {
      fmt::print(stderr, "{}{} in / {} out tokens{}{}\n", dim, done->usage.input_tokens,
                 done->usage.output_tokens,
                 done->untrusted ? " · session has read untrusted content" : "", reset);
    } else if (const auto* o = std::get_if<wire::Opened>(&f)) {
      fmt::print(stderr, "{}session {}{}{}\n", dim, o->session_id,
                 o->resumed ? fmt::format(" resumed ({} records{})", o->records,
                                          o->untrusted ? ", has read untrusted content" : "")
                            : std::string(" (new)"),
                 reset);
    } else if (const auto* s = std::get_if<wire::Sessions>(&f)) {
      if (s->sessions.empty()) fmt::print(stderr, "no sessions\n");
      for (const auto& x : s->sessions) {
        fmt::print(stderr, "{}  {} records{}{}\n", x.session_id, x.records,
                   x.untrusted ? "  untrusted" : "", x.attached ? "  (open)" : "");
      }
    } else if (const auto* c = std::get_if<wire::CostReport>(&f)) {
      fmt::print(stderr, "session {}: {} in / {} out tokens · {}{}\n", c->session_id,
                 c->usage.input_tokens, c->usage.output_tokens,
                 c->cost_usd ? fmt::format("${:.4f}", *c->cost_usd) : std::string("cost unknown"),
                 c->unpriced_calls > 0 && c->cost_usd ? " + unpriced calls" : "");
    }
  }

 private:
  void show_event(const Json& e, int depth, const char* dim, const char* red, const char* bold,
                  const char* reset) {
    const std::string type = e.value("type", "");
    const std::string indent(depth * 2, ' ');
    if (type == "nested") {
      show_event(e.at("event"), depth + 1, dim, red, bold, reset);
    } else if (type == "text") {
      fmt::print(stderr, "{}{}\n", indent, e.value("text", ""));
    } else if (type == "tool_call") {
      fmt::print(stderr, "{}{}● {}{}({})\n", indent, bold, e.value("name", ""), reset,
                 summarize_input(e.value("input", Json::object()), 100));
    } else if (type == "tool_result") {
      std::string content = e.value("content", "");
      content = content.substr(0, content.find('\n')).substr(0, 160);
      fmt::print(stderr, "{}  {}⎿ {}{}{}{}\n", indent, e.value("is_error", false) ? red : dim,
                 e.value("is_error", false) ? "error: " : "", content,
                 e.value("untrusted", false) ? " (untrusted)" : "", reset);
    } else if (type == "refusal") {
      fmt::print(stderr, "{}  {}⎿ refused by rule '{}'{}\n", indent, red, e.value("rule", ""),
                 reset);
    } else if (type == "note") {
      fmt::print(stderr, "{}{}note: {}{}\n", indent, dim, e.value("text", ""), reset);
    }
    std::fflush(stderr);
  }

  const bool json_;
  const bool color_;
  bool streamed_ = false;
};

bool read_line(const char* prompt, std::string* line) {
  std::fputs(prompt, stderr);
  std::fflush(stderr);
  return static_cast<bool>(std::getline(std::cin, *line));
}

// How an exchange with the daemon ended.
enum class Ended { kAnswered, kClosed, kBadFrame };

// A frame from the daemon that did not decode (too large, malformed) means this client and
// the daemon no longer agree on the stream: said once, and the chat ends.
Ended bad_frame(const wire::Decoded& d) {
  fmt::print(stderr, "mecha: the daemon sent a frame this client cannot read: {} ({})\n",
             d.error.message, d.error.code);
  return Ended::kBadFrame;
}

// Waits for the reply to a request; frames before it are shown too.
Ended await(server::Client& client, ChatView& view,
            const std::function<bool(const wire::Frame&)>& is_reply) {
  while (auto d = client.receive()) {
    if (!d->ok()) return bad_frame(*d);
    view.show(*d->frame);
    if (is_reply(*d->frame) || std::holds_alternative<wire::Error>(*d->frame)) {
      return Ended::kAnswered;
    }
  }
  return Ended::kClosed;
}

// Runs one turn: frames until turn_done, approvals asked inline, Ctrl-C sends cancel.
Ended run_turn(server::Client& client, ChatView& view, const std::string& text) {
  if (Status sent = client.send(wire::UserTurn{text}); !sent.ok()) {
    fmt::print(stderr, "mecha: {}\n", sent.message());
    return Ended::kClosed;
  }
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
  {
    InterruptScope interrupts(&cancel);
    while (auto d = client.receive()) {
      if (!d->ok()) {
        ended = bad_frame(*d);
        break;
      }
      const wire::Frame& f = *d->frame;
      view.show(f);
      if (const auto* a = std::get_if<wire::ApprovalRequest>(&f)) {
        std::string answer;
        std::string prompt = fmt::format("{} wants to run {}({}): {}. Allow? [y/N] ", a->agent,
                                         a->tool, summarize_input(a->input, 80), a->reason);
        bool yes = read_line(prompt.c_str(), &answer) && (answer == "y" || answer == "yes");
        (void)client.send(wire::ApprovalAnswer{a->request_id, yes});
      }
      if (std::holds_alternative<wire::TurnDone>(f)) {
        ended = Ended::kAnswered;
        break;
      }
    }
  }
  done.store(true);
  watcher.join();
  return ended;
}

int chat_main(const ChatFlags& flags) {
  const std::string software = "mecha 0.1.0 chat";
  const std::string path = socket_path(flags.daemon);
  std::unique_ptr<server::Daemon> own_daemon;
  std::thread own_thread;
  auto client = server::Client::connect(path, software);
  if (!client.ok() && (errno == ENOENT || errno == ECONNREFUSED ||
                       client.message().find("No such file") != std::string::npos ||
                       client.message().find("Connection refused") != std::string::npos)) {
    // No daemon: run one here, reached over a socket pair.
    auto assembled = assemble_daemon(flags.daemon);
    if (!assembled) return report_failure(assembled.status());
    own_daemon = std::move(assembled->daemon);
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      return report_failure(Status::error(fmt::format("socketpair: {}", std::strerror(errno))));
    }
    own_daemon->attach(UniqueFd(pair[0]));
    own_thread = std::thread([&] { (void)own_daemon->serve(UniqueFd()); });
    client = server::Client::over(UniqueFd(pair[1]), software);
  }
  auto finish = [&](int code) {
    if (own_daemon) {
      own_daemon->stop();
      own_thread.join();
    }
    return code;
  };
  if (!client.ok()) return finish(report_failure(client.status()));
  server::Client& c = **client;
  ChatView view(flags.json, !flags.json && isatty(STDERR_FILENO) == 1);

  auto opened = c.open(flags.resume);
  if (!opened.ok()) return finish(report_failure(opened.status()));
  view.show(*opened);

  std::string line;
  while (read_line("> ", &line)) {
    if (line.empty()) continue;
    if (line == "/quit" || line == "/exit") break;
    Ended ended = Ended::kAnswered;
    if (line == "/sessions") {
      ended = c.send(wire::ListSessions{}).ok()
                  ? await(c, view,
                          [](const wire::Frame& f) {
                            return std::holds_alternative<wire::Sessions>(f);
                          })
                  : Ended::kClosed;
    } else if (line == "/cost") {
      ended = c.send(wire::CostQuery{}).ok()
                  ? await(c, view,
                          [](const wire::Frame& f) {
                            return std::holds_alternative<wire::CostReport>(f);
                          })
                  : Ended::kClosed;
    } else if (line.starts_with("/resume")) {
      std::string id = line.size() > 8 ? line.substr(8) : "last";
      ended =
          c.send(wire::Open{id}).ok()
              ? await(c, view,
                      [](const wire::Frame& f) { return std::holds_alternative<wire::Opened>(f); })
              : Ended::kClosed;
    } else if (line.starts_with("/")) {
      fmt::print(stderr, "commands: /sessions, /resume ID, /cost, /quit\n");
    } else {
      ended = run_turn(c, view, line);
    }
    if (ended == Ended::kBadFrame) {
      c.shutdown();
      return finish(kExitError);
    }
    if (ended == Ended::kClosed) {
      fmt::print(stderr, "mecha: the daemon closed the connection\n");
      return finish(kExitError);
    }
  }
  return finish(kExitOk);
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
