#include "server/daemon.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "server/history_frames.h"
#include "server/unix_socket.h"

namespace mecha::server {
namespace {

wire::Error error(std::string_view code, std::string message) {
  return wire::Error{std::string(code), std::move(message)};
}

}  // namespace

Daemon::Daemon(DaemonOptions options, std::unique_ptr<store::SessionStore> store)
    : options_(std::move(options)),
      store_(std::move(store)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      workers_(std::make_unique<WorkerPool>(options_.workers)) {}

Daemon::~Daemon() { workers_.reset(); }

void Daemon::stop() {
  stopping_.store(true);
  uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void Daemon::attach(UniqueFd fd) {
  {
    std::lock_guard<std::mutex> lock(incoming_mu_);
    incoming_.push_back(std::move(fd));
  }
  uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

Status Daemon::serve(UniqueFd listener) {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return Status::error(fmt::format("epoll: {}", std::strerror(errno)));
  auto watch = [&](int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
  };
  if (!watch(wake_.get())) return Status::error(fmt::format("epoll: {}", std::strerror(errno)));
  if (listener.valid() && !watch(listener.get())) {
    return Status::error(fmt::format("epoll: {}", std::strerror(errno)));
  }

  std::map<int, std::shared_ptr<Connection>> connections;
  // Connections in the order they came, each with the time by which it must have said hello.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::weak_ptr<Connection>>> hello_due;
  auto add = [&](UniqueFd fd) {
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
    const int raw = fd.get();
    OutgoingOptions outgoing;
    outgoing.max_queued_bytes = options_.max_queued_bytes;
    outgoing.patience = options_.slow_client_patience;
    outgoing.epoll_fd = ep.get();
    outgoing.on_close = [this, raw](const std::string& reason) {
      log(fmt::format("connection {} cut off: {}", raw, reason));
    };
    auto c = std::make_shared<Connection>(std::move(fd), options_.limits, std::move(outgoing));
    if (!watch(raw)) return;
    hello_due.emplace_back(std::chrono::steady_clock::now() + options_.hello_timeout, c);
    connections[raw] = std::move(c);
  };
  auto drop = [&](int fd) {
    auto it = connections.find(fd);
    if (it == connections.end()) return;
    ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr);
    it->second->close();
    detach(it->second);
    connections.erase(it);
  };
  // Closes what has been silent past its hello deadline; the milliseconds until the next
  // deadline, or -1 for none.
  auto enforce_hello = [&]() -> int {
    const auto now = std::chrono::steady_clock::now();
    while (!hello_due.empty()) {
      auto [due, weak] = hello_due.front();
      std::shared_ptr<Connection> c = weak.lock();
      if (!c || c->helloed || c->closed()) {
        hello_due.pop_front();
        continue;
      }
      if (due > now) {
        return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(due - now).count());
      }
      hello_due.pop_front();
      c->close_with(error(
          wire::codes::kHelloRequired,
          fmt::format("no hello within {} ms: connection closed", options_.hello_timeout.count())));
      drop(c->channel().fd());
    }
    return -1;
  };

  std::chrono::steady_clock::time_point drain_deadline;
  bool cancelled_all = false;
  std::vector<epoll_event> events(256);
  while (true) {
    if (stopping_.load() && !draining_) {
      draining_ = true;
      drain_deadline = std::chrono::steady_clock::now() + options_.grace;
      if (listener.valid()) {
        ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, listener.get(), nullptr);
        listener.reset();
      }
    }
    if (draining_) {
      std::lock_guard<std::mutex> lock(running_mu_);
      // Done once no turn runs and every turn's closing frames went out.
      if (running_.empty() && closing_ == 0) break;
      if (!cancelled_all && std::chrono::steady_clock::now() >= drain_deadline) {
        for (const auto& s : running_) s->cancel_turn();
        cancelled_all = true;
      }
    }
    int timeout = enforce_hello();
    if (draining_ && (timeout < 0 || timeout > 50)) timeout = 50;
    int n = ::epoll_wait(ep.get(), events.data(), static_cast<int>(events.size()), timeout);
    if (n < 0 && errno != EINTR)
      return Status::error(fmt::format("epoll: {}", std::strerror(errno)));
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (listener.valid() && fd == listener.get()) {
        while (true) {
          UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
          if (!conn.valid()) break;
          if (auto refusal = refusal_of(conn.get())) {
            log(refusal->message);
            const std::string line = wire::encode_frame(*refusal);
            (void)!::send(conn.get(), line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            continue;
          }
          add(std::move(conn));
        }
      } else if (fd == wake_.get()) {
        uint64_t count;
        (void)!::read(wake_.get(), &count, sizeof count);
        std::vector<UniqueFd> fresh;
        {
          std::lock_guard<std::mutex> lock(incoming_mu_);
          fresh.swap(incoming_);
        }
        for (auto& f : fresh) add(std::move(f));
      } else if (auto it = connections.find(fd); it != connections.end()) {
        std::shared_ptr<Connection> c = it->second;
        if (events[i].events & EPOLLOUT) c->flush();
        if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->closed()) continue;
        FrameChannel::Incoming in = c->channel().read_some();
        for (wire::Decoded& d : in.frames) {
          if (c->closed()) break;
          if (!d.ok()) {
            c->send(d.error);
            continue;
          }
          handle(c, std::move(*d.frame));
        }
        if (in.closed || c->closed()) drop(fd);
      }
    }
  }
  while (!connections.empty()) drop(connections.begin()->first);
  return ok_status();
}

void Daemon::handle(const std::shared_ptr<Connection>& c, wire::Frame frame) {
  if (!c->helloed) {
    const auto* hello = std::get_if<wire::Hello>(&frame);
    if (hello == nullptr) {
      c->send(error(wire::codes::kHelloRequired,
                    fmt::format("the first frame must be hello (protocol version {}), not {}",
                                wire::kProtocolVersion, wire::kind_of(frame))));
      return;
    }
    if (hello->protocol_version != wire::kProtocolVersion) {
      c->send(error(wire::codes::kVersionMismatch,
                    fmt::format("protocol version mismatch: the client speaks version {}, this "
                                "daemon speaks version {}",
                                hello->protocol_version, wire::kProtocolVersion)));
      c->close();
      return;
    }
    c->helloed = true;
    c->send(wire::Hello{wire::kProtocolVersion, options_.software});
    return;
  }
  if (const auto* open = std::get_if<wire::Open>(&frame)) return open_session(c, *open);
  if (const auto* turn = std::get_if<wire::UserTurn>(&frame)) return start_turn(c, *turn);
  if (const auto* answer = std::get_if<wire::ApprovalAnswer>(&frame)) {
    if (!c->answer(*answer)) {
      c->send(error(wire::codes::kUnknownRequest,
                    fmt::format("no approval request \"{}\" is waiting (answered already, timed "
                                "out, or never asked)",
                                answer->request_id)));
    }
    return;
  }
  if (std::holds_alternative<wire::Cancel>(frame)) {
    if (c->session) c->session->cancel_turn();
    return;
  }
  if (std::holds_alternative<wire::ListSessions>(frame)) {
    auto list = store_->list();
    if (!list) return c->send(error(wire::codes::kInternal, list.message()));
    wire::Sessions out;
    for (const auto& s : *list) {
      auto it = open_sessions_.find(s.id);
      out.sessions.push_back({s.id, s.title, s.started_ms, s.updated_ms, s.records, s.turns,
                              s.cost(), s.untrusted,
                              it != open_sessions_.end() && !it->second.expired()});
    }
    return c->send(out);
  }
  if (std::holds_alternative<wire::History>(frame)) return replay_history(c);
  if (std::holds_alternative<wire::CostQuery>(frame)) {
    if (!c->session) {
      return c->send(error(wire::codes::kNoSession, "no session is open: send open first"));
    }
    return c->send(cost_of(options_.turns, *c->session));
  }
  c->send(error(wire::codes::kUnexpectedFrame,
                fmt::format("a client does not send {} frames", wire::kind_of(frame))));
}

void Daemon::open_session(const std::shared_ptr<Connection>& c, const wire::Open& open) {
  if (c->session && c->session->turn_running()) {
    return c->send(error(wire::codes::kTurnRunning,
                         fmt::format("a turn is running in session {}: wait for its turn_done "
                                     "or cancel it first",
                                     c->session->id())));
  }
  const bool resume = !open.session_id.empty();
  Result<std::unique_ptr<store::Session>> log = Status::error("unset");
  std::string id;
  if (resume) {
    auto resolved = store_->resolve(open.session_id);
    if (!resolved) return c->send(error(wire::codes::kUnknownSession, resolved.message()));
    id = *resolved;
    if (c->session && c->session->id() == id) {
      detach(c);
    } else if (auto it = open_sessions_.find(id);
               it != open_sessions_.end() && !it->second.expired()) {
      return c->send(error(wire::codes::kSessionBusy,
                           fmt::format("session {} is open on another connection", id)));
    }
    log = store_->open_session(id);
    if (!log) return c->send(error(wire::codes::kSessionBusy, log.message()));
  } else {
    log = store_->create("");
    if (!log) return c->send(error(wire::codes::kInternal, log.message()));
    id = (*log)->id();
  }
  auto conversation = (*log)->conversation();
  if (!conversation) return c->send(error(wire::codes::kInternal, conversation.message()));
  const int64_t records = (*log)->record_count();
  const bool untrusted = (*log)->untrusted();
  detach(c);
  c->session = std::make_shared<LiveSession>(std::move(*log), std::move(*conversation));
  for (auto it = open_sessions_.begin(); it != open_sessions_.end();) {
    it = it->second.expired() ? open_sessions_.erase(it) : std::next(it);
  }
  open_sessions_[id] = c->session;
  c->send(wire::Opened{id, resume, records, untrusted});
}

void Daemon::start_turn(const std::shared_ptr<Connection>& c, const wire::UserTurn& turn) {
  if (draining_) {
    return c->send(
        error(wire::codes::kShuttingDown, "the daemon is shutting down and takes no new turns"));
  }
  std::shared_ptr<LiveSession> session =
      take_turn_slot(c, "wait for its turn_done or cancel it first");
  if (!session) return;
  workers_->post([this, c, session, text = turn.text]() mutable {
    std::vector<wire::Frame> closing = run_turn(options_.turns, *session, c, text);
    session->end_turn();
    let_go(std::move(session));
    for (const wire::Frame& f : closing) c->send_waiting(f);
    closed_one();
  });
}

std::shared_ptr<LiveSession> Daemon::take_turn_slot(const std::shared_ptr<Connection>& c,
                                                    std::string_view when_busy) {
  if (!c->session) {
    c->send(error(wire::codes::kNoSession, "no session is open: send open first"));
    return nullptr;
  }
  std::shared_ptr<LiveSession> session = c->session;
  if (!session->begin_turn()) {
    c->send(error(wire::codes::kTurnRunning,
                  fmt::format("a turn is running in session {}: {}", session->id(), when_busy)));
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(running_mu_);
  running_.insert(session);
  return session;
}

void Daemon::replay_history(const std::shared_ptr<Connection>& c) {
  // The turn's slot, so no turn's frames interleave with the replay.
  std::shared_ptr<LiveSession> session =
      take_turn_slot(c, "its history can be asked for once its turn_done has arrived");
  if (!session) return;
  // Reading and parsing the log is a worker's job: the loop never waits on it.
  workers_->post([this, c, session]() mutable {
    std::vector<wire::Frame> frames;
    auto records = session->log().records();
    if (records) {
      frames = history_frames(*records);
    } else {
      frames.push_back(error(wire::codes::kInternal, records.message()));
    }
    // The last frame (history_done, or the error) goes once the session is free again: a
    // client may answer it with a user_turn.
    for (size_t i = 0; i + 1 < frames.size(); ++i) c->send_waiting(frames[i]);
    session->end_turn();
    let_go(std::move(session));
    c->send_waiting(frames.back());
    closed_one();
  });
}

void Daemon::let_go(std::shared_ptr<LiveSession> session) {
  // Before the frame that frees the session goes out: a client that has it may resume the
  // session on another connection at once, which the worker's reference would refuse
  // (session_busy) for as long as it lived.
  {
    std::lock_guard<std::mutex> lock(running_mu_);
    running_.erase(session);
    ++closing_;
  }
  session.reset();  // outside the lock: the last reference closes the session's log
}

void Daemon::closed_one() {
  std::lock_guard<std::mutex> lock(running_mu_);
  --closing_;
}

void Daemon::detach(const std::shared_ptr<Connection>& c) { c->session.reset(); }

std::optional<wire::Error> Daemon::refusal_of(int fd) const {
  auto peer = peer_credentials(fd);
  if (!peer) return error(wire::codes::kPeerRefused, peer.message());
  const uid_t me = ::geteuid();
  if (peer->uid != me) {
    return error(wire::codes::kPeerRefused,
                 fmt::format("connection refused: this daemon serves uid {} only, and the peer is "
                             "uid {}",
                             me, peer->uid));
  }
  if (options_.allow_other_pid_namespaces) return std::nullopt;
  auto same = in_own_pid_namespace(peer->pid);
  if (same.ok() && *same) return std::nullopt;
  return error(
      wire::codes::kPeerRefused,
      fmt::format("connection refused: the peer (pid {}) is not in this daemon's PID "
                  "namespace{} (a command in mecha's sandbox is in a namespace of its "
                  "own); to serve such peers, start the daemon with "
                  "--allow-other-pid-namespaces",
                  peer->pid,
                  same.ok() ? "" : fmt::format(" or cannot be checked: {}", same.message())));
}

void Daemon::log(const std::string& message) const {
  if (options_.log) options_.log(message);
}

}  // namespace mecha::server
