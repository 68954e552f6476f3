#include "providers/plain_http.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

#include "base/text.h"

namespace mecha::providers {
namespace {

constexpr size_t kMaxHead = 64 << 10;
constexpr size_t kMaxChunkLine = 1 << 10;

std::string errno_text(int err) { return std::strerror(err); }

int poll_ms(SteadyClock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::clamp<long long>(ms + 1, 0, kPollInterval.count()));
}

// One header's value, or "" when the head lacks it.
std::string_view header_of(const ResponseHead& head, std::string_view name) {
  for (const auto& [n, v] : head.headers) {
    if (iequals(n, name)) return v;
  }
  return "";
}

// Whether a comma-separated header value holds `token`, in any case.
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (iequals(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

bool is_loopback(std::string_view host) {
  return iequals(host, "localhost") || host == "::1" || host.rfind("127.", 0) == 0;
}

// Whether a no_proxy list ("example.com,.internal,*") names `host`.
bool no_proxy_names(std::string_view list, std::string_view host) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view entry = trim(list.substr(0, comma));
    if (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
    if (entry == "*") return true;
    if (!entry.empty() && host.size() >= entry.size() &&
        iequals(host.substr(host.size() - entry.size()), entry) &&
        (host.size() == entry.size() || host[host.size() - entry.size() - 1] == '.')) {
      return true;
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// The addresses of a host name, looked up on a thread of its own: getaddrinfo cannot be
// cancelled, and a wait for it must still see the cancel token. The thread holds its share
// of the lookup, so it may outlive the wait.
struct Lookup {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;  // GUARDED_BY(mu)
  int rc = 0;         // GUARDED_BY(mu)
  addrinfo* list = nullptr;
  ~Lookup() {
    if (list != nullptr) freeaddrinfo(list);
  }
};

std::shared_ptr<Lookup> start_lookup(const PlainUrl& url) {
  auto lookup = std::make_shared<Lookup>();
  try {
    std::thread([lookup, host = url.host, port = std::to_string(url.port)] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* list = nullptr;
      const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
      std::lock_guard<std::mutex> lock(lookup->mu);
      lookup->rc = rc;
      lookup->list = list;
      lookup->done = true;
      lookup->done_cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {  // no thread to be had: a passing failure
    lookup->rc = EAI_AGAIN;
    lookup->done = true;
  }
  return lookup;
}

// Connects to the first address of `url` that answers within connect_timeout_s.
Result<UniqueFd> connect_to(const PlainUrl& url, const HttpOptions& opt, const HttpRequest& req) {
  const auto deadline = SteadyClock::now() + seconds_of(opt.connect_timeout_s);
  const auto cancelled = [&] { return req.cancel != nullptr && req.cancel->cancelled(); };
  const auto cancel_status = [&] {
    return Status::cancelled(fmt::format("POST {}: cancelled", req.url));
  };
  std::shared_ptr<Lookup> lookup;
  addrinfo* list = nullptr;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* numeric = nullptr;
  if (getaddrinfo(url.host.c_str(), std::to_string(url.port).c_str(), &hints, &numeric) == 0) {
    list = numeric;
  } else {
    lookup = start_lookup(url);
    std::unique_lock<std::mutex> lock(lookup->mu);
    while (!lookup->done) {
      if (cancelled()) return cancel_status();
      if (SteadyClock::now() >= deadline) {
        return Status::error(connect_timeout_message(opt, req));
      }
      lookup->done_cv.wait_for(lock, kPollInterval);
    }
    if (lookup->rc != 0) {
      return Status::error(fmt::format("POST {}: cannot resolve host {}: {}", req.url, url.host,
                                       gai_strerror(lookup->rc)));
    }
    list = lookup->list;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(numeric, freeaddrinfo);
  std::string last_error = "no address";
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      last_error = errno_text(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
    if (errno != EINPROGRESS) {
      last_error = errno_text(errno);
      continue;
    }
    for (;;) {
      if (cancelled()) return cancel_status();
      const auto now = SteadyClock::now();
      if (now >= deadline) return Status::error(connect_timeout_message(opt, req));
      pollfd p{fd.get(), POLLOUT, 0};
      if (::poll(&p, 1, poll_ms(deadline - now)) > 0) break;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err == 0) return fd;
    last_error = errno_text(err);
  }
  return Status::error(
      fmt::format("POST {}: cannot connect to {}:{}: {}", req.url, url.host, url.port, last_error));
}

std::string request_head(const PlainUrl& url, const HttpRequest& req) {
  std::string head = fmt::format("POST {} HTTP/1.1\r\nHost: {}\r\n", url.target, url.host_header);
  for (const auto& h : req.headers) {
    std::string_view name = trim(std::string_view(h).substr(0, h.find(':')));
    // These are the transport's to send.
    if (iequals(name, "host") || iequals(name, "content-length") || iequals(name, "expect") ||
        iequals(name, "transfer-encoding")) {
      continue;
    }
    head += h;
    head += "\r\n";
  }
  head += fmt::format("Content-Length: {}\r\nUser-Agent: mecha/0.1\r\n\r\n", req.body.size());
  return head;
}

// How the body of an answer ends.
enum class Framing { kNone, kLength, kChunked, kClose };

}  // namespace

Result<PlainUrl> parse_plain_url(std::string_view url) {
  const auto bad = [&](std::string_view why) {
    return Status::error(fmt::format("not a plain http:// URL ({}): {}", why, url));
  };
  constexpr std::string_view kScheme = "http://";
  if (url.size() < kScheme.size() || !iequals(url.substr(0, kScheme.size()), kScheme)) {
    return bad("it does not start with http://");
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t path_at = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_at);
  std::string_view target = path_at == std::string_view::npos ? "" : rest.substr(path_at);
  if (const size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  PlainUrl out;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address without its ']'");
    out.host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return bad("junk after the IPv6 address");
    if (!after.empty()) port = after.substr(1);
  } else {
    const size_t colon = authority.find(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (!port.empty() || authority.ends_with(":")) {
    auto n = parse_count(port);
    if (!n || *n < 1 || *n > 65535) return bad("a port that is not 1-65535");
    out.port = static_cast<int>(*n);
  }
  const std::string host_text = authority.front() == '[' ? "[" + out.host + "]" : out.host;
  out.host_header = out.port == 80 ? host_text : fmt::format("{}:{}", host_text, out.port);
  out.target =
      target.empty() || target.front() == '?' ? "/" + std::string(target) : std::string(target);
  return out;
}

Result<ResponseHead> parse_response_head(std::string_view head) {
  ResponseHead out;
  bool first = true;
  while (!head.empty()) {
    const size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? "" : head.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      first = false;
      // "HTTP/1.1 200 OK"; the reason may be empty or absent.
      if (line.rfind("HTTP/1.1 ", 0) == 0) {
        out.http11 = true;
      } else if (line.rfind("HTTP/1.0 ", 0) != 0) {
        return Status::error(fmt::format("not an HTTP/1.x status line: {}", line.substr(0, 80)));
      }
      auto code = parse_count(line.substr(9, 3));
      if (!code || (line.size() > 12 && line[12] != ' ') || *code < 100) {
        return Status::error(fmt::format("a malformed status line: {}", line.substr(0, 80)));
      }
      out.status = *code;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Status::error(fmt::format("a malformed header line: {}", line.substr(0, 80)));
    }
    out.headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  if (first) return Status::error("an empty response head");
  return out;
}

Result<size_t> ChunkedDecoder::feed(std::string_view in, std::string& out) {
  size_t at = 0;
  while (at < in.size() && state_ != State::kDone) {
    if (state_ == State::kData) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, in.size() - at));
      out.append(in.substr(at, n));
      at += n;
      left_ -= n;
      if (left_ == 0) state_ = State::kDataEnd;
      continue;
    }
    // The other states read a line.
    const size_t eol = in.find('\n', at);
    const size_t end = eol == std::string_view::npos ? in.size() : eol;
    line_.append(in.substr(at, end - at));
    at = eol == std::string_view::npos ? in.size() : eol + 1;
    const size_t limit = state_ == State::kTrailer ? kMaxHead - trailer_ : kMaxChunkLine;
    if (line_.size() > limit) {
      return Status::error(fmt::format("a chunked body's line is longer than {} bytes", limit));
    }
    if (eol == std::string_view::npos) break;
    std::string_view line = line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    switch (state_) {
      case State::kSize: {
        std::string_view digits = trim(line.substr(0, line.find(';')));
        if (digits.empty() || digits.size() > 15) {
          return Status::error(fmt::format("a malformed chunk size line: {}", line.substr(0, 40)));
        }
        left_ = 0;
        for (char c : digits) {
          const char lower = static_cast<char>(c | 0x20);
          const int v = c >= '0' && c <= '9'           ? c - '0'
                        : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10
                                                       : -1;
          if (v < 0) {
            return Status::error(
                fmt::format("a malformed chunk size line: {}", line.substr(0, 40)));
          }
          left_ = left_ * 16 + static_cast<uint64_t>(v);
        }
        state_ = left_ == 0 ? State::kTrailer : State::kData;
        break;
      }
      case State::kDataEnd:
        if (!line.empty()) return Status::error("a chunk's data is not followed by CRLF");
        state_ = State::kSize;
        break;
      case State::kTrailer:
        trailer_ += line_.size() + 1;
        if (line.empty()) state_ = State::kDone;
        break;
      case State::kData:
      case State::kDone:
        break;
    }
    line_.clear();
  }
  return at;
}

UniqueFd PlainConnectionPool::take(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i].first != key) continue;
    UniqueFd fd = std::move(idle_[i].second);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
    // An idle connection has nothing to say: input, a hang-up or an error means the server
    // closed it (or sent what no request asked for), and it would fail the request.
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return fd;
  }
  return UniqueFd();
}

void PlainConnectionPool::give_back(const std::string& key, UniqueFd fd) {
  std::unique_lock<std::mutex> lock(mu_);
  if (idle_.size() >= kMaxIdle) {
    UniqueFd oldest = std::move(idle_.front().second);
    idle_.erase(idle_.begin());
    lock.unlock();  // closes the oldest outside the lock
    lock.lock();
  }
  idle_.emplace_back(key, std::move(fd));
}

size_t PlainConnectionPool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

bool plain_transport_fits(std::string_view url) {
  auto parsed = parse_plain_url(url);
  if (!parsed.ok()) return false;
  if (is_loopback(parsed->host)) return true;
  bool proxied = false;
  for (const char* name : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') proxied = true;
  }
  if (!proxied) return true;
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && no_proxy_names(v, parsed->host)) return true;
  }
  return false;
}

Outcome plain_attempt(const HttpOptions& opt, const HttpRequest& req, BodyReceiver& receiver,
                      PlainConnectionPool& pool, bool fresh_connection) {
  Attempt a(receiver);
  Outcome out;
  const auto fail = [&](std::string message, bool retryable) {
    out.retry_after = a.retry_after;
    out.delivered = a.delivered;
    out.status = Status::error(std::move(message));
    out.retryable = retryable;
    return out;
  };
  auto url = parse_plain_url(req.url);
  if (!url.ok()) return fail(fmt::format("POST {}: {}", req.url, url.message()), false);

  const auto deadline = SteadyClock::now() + seconds_of(opt.request_timeout_s);
  const auto stall = seconds_of(opt.stall_timeout_s);
  UniqueFd fd = fresh_connection ? UniqueFd() : pool.take(url->key());
  const bool reused = fd.valid();
  if (!reused) {
    auto connected = connect_to(*url, opt, req);
    if (!connected.ok()) {
      out.status = connected.status();
      out.retryable = out.status.kind() != ErrorKind::kCancelled;  // a connection failure
      return out;
    }
    fd = std::move(*connected);
  }
  a.last_byte = SteadyClock::now();

  // Waits for `events` on the socket for at most one poll interval, after checking the cancel
  // token and the timeouts; false when one of them ended the attempt.
  const auto wait_for = [&](short events) {
    const auto now = SteadyClock::now();
    if (a.interrupt == Interrupt::kComplete) {
      const auto left = kCompletionGrace - (now - a.completed_at);
      if (left <= SteadyClock::duration::zero()) return false;
      pollfd p{fd.get(), events, 0};
      ::poll(&p, 1, poll_ms(left));
      return true;
    }
    if (req.cancel != nullptr && req.cancel->cancelled()) {
      a.interrupt = Interrupt::kCancelled;
    } else if (now - a.last_byte > stall) {
      a.interrupt = Interrupt::kStalled;
    } else if (opt.request_timeout_s > 0 && now >= deadline) {
      a.interrupt = Interrupt::kTimedOut;
    }
    if (a.interrupt != Interrupt::kNone) return false;
    pollfd p{fd.get(), events, 0};
    ::poll(&p, 1, static_cast<int>(kPollInterval.count()));
    return true;
  };

  // Sending: the head, then the body, as the socket takes them.
  const std::string head = request_head(*url, req);
  std::array<std::string_view, 2> parts = {head, req.body};
  for (std::string_view& part : parts) {
    while (!part.empty()) {
      const ssize_t n = ::send(fd.get(), part.data(), part.size(), MSG_NOSIGNAL);
      if (n > 0) {
        part.remove_prefix(static_cast<size_t>(n));
        a.last_byte = SteadyClock::now();  // sending is progress
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait_for(POLLOUT)) return conclude(a, opt, req);
        continue;
      }
      const int err = errno;
      out.stale_connection = reused && (err == EPIPE || err == ECONNRESET);
      return fail(fmt::format("POST {}: sending the request failed: {}", req.url, errno_text(err)),
                  true);
    }
  }

  // Receiving: the head (after any 1xx interim answers), then the body.
  std::string pending;  // bytes of the head not yet parsed
  bool head_done = false;
  bool keep = false;  // the connection may serve another request once the body has ended
  bool ended = false;
  Framing framing = Framing::kClose;
  uint64_t left = 0;
  ChunkedDecoder chunked;
  std::string decoded;
  std::array<char, 64 << 10> buf;

  // Takes the body bytes of `in`; false when the answer is malformed (`malformed` says why)
  // or the receiver failed.
  std::string malformed;
  const auto take_body = [&](std::string_view in) {
    std::string_view piece = in;
    if (framing == Framing::kLength) {
      piece = in.substr(0, static_cast<size_t>(std::min<uint64_t>(left, in.size())));
      left -= piece.size();
      ended = left == 0;
    } else if (framing == Framing::kChunked) {
      decoded.clear();
      auto used = chunked.feed(in, decoded);
      if (!used.ok()) {
        malformed = used.message();
        return false;
      }
      piece = decoded;
      ended = chunked.done();
      if (ended && *used < in.size()) keep = false;
    }
    if (framing == Framing::kLength && in.size() > piece.size()) keep = false;
    return piece.empty() || a.body(piece);
  };
  const auto take_head = [&](std::string_view in) {
    pending.append(in);
    for (;;) {
      const size_t end = pending.find("\r\n\r\n");
      if ((end == std::string::npos ? pending.size() : end) > kMaxHead) {
        malformed = fmt::format("the response head is larger than {} KiB", kMaxHead >> 10);
        return false;
      }
      if (end == std::string::npos) return true;
      auto parsed = parse_response_head(std::string_view(pending).substr(0, end + 2));
      if (!parsed.ok()) {
        malformed = parsed.message();
        return false;
      }
      pending.erase(0, end + 4);
      if (parsed->status < 200) continue;  // an interim answer (100 Continue): the next head
      a.status = parsed->status;
      for (const auto& [name, value] : parsed->headers) a.header(name + ": " + value);
      keep = parsed->http11 && !has_token(header_of(*parsed, "connection"), "close");
      const std::string_view length = header_of(*parsed, "content-length");
      if (a.status == 204 || a.status == 304) {
        framing = Framing::kNone;
      } else if (has_token(header_of(*parsed, "transfer-encoding"), "chunked")) {
        framing = Framing::kChunked;
      } else if (!length.empty()) {
        framing = Framing::kLength;
        left = 0;
        if (length.size() > 15 || length.find_first_not_of("0123456789") != std::string::npos) {
          malformed = fmt::format("a malformed Content-Length: {}", length.substr(0, 40));
          return false;
        }
        left = std::stoull(std::string(length));
      } else {
        framing = Framing::kClose;
        keep = false;
      }
      head_done = true;
      ended = framing == Framing::kNone || (framing == Framing::kLength && left == 0);
      if (pending.empty()) return true;
      if (ended) {
        keep = false;  // bytes after the whole answer: the connection is not in a clean state
        return true;
      }
      return take_body(pending);
    }
  };

  while (!ended) {
    if (a.interrupt == Interrupt::kHandler) return conclude(a, opt, req);
    if (!wait_for(POLLIN)) return conclude(a, opt, req);
    const ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n > 0) {
      a.last_byte = SteadyClock::now();
      a.answered = true;
      const std::string_view in(buf.data(), static_cast<size_t>(n));
      const bool fine = head_done ? take_body(in) : take_head(in);
      if (!malformed.empty()) {
        return fail(fmt::format("POST {}: {}", req.url, malformed), false);
      }
      if (!fine) return conclude(a, opt, req);
      continue;
    }
    // The connection ended (n == 0) or broke.
    const std::string why = n == 0 ? "the server closed the connection" : errno_text(errno);
    if (a.interrupt == Interrupt::kComplete) return conclude(a, opt, req);  // cut after the whole
    if (head_done && framing == Framing::kClose) {
      ended = true;
      keep = false;
      break;
    }
    if (a.delivered) return fail(mid_stream_message(req, why), true);
    out.stale_connection = reused && !a.answered;
    if (!a.answered) {
      return fail(fmt::format("POST {}: no answer: {}", req.url, why), true);
    }
    return fail(fmt::format("POST {}: the answer was cut short: {}", req.url, why), true);
  }
  out = conclude(a, opt, req);
  // As libcurl does, a connection that carried a whole answer is kept, whatever the status.
  out.reusable = keep;
  if (out.reusable) pool.give_back(url->key(), std::move(fd));
  return out;
}

}  // namespace mecha::providers
