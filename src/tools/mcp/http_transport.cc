#include "tools/mcp/http_transport.h"

#include <fmt/format.h>

#include "providers/sse.h"
#include "tools/mcp/http_exchange.h"
#include "tools/mcp/jsonrpc.h"

namespace mecha::mcp {
namespace {

constexpr auto kCloseTimeout = std::chrono::milliseconds(2000);
constexpr auto kListenRetry = std::chrono::milliseconds(500);
constexpr int kMaxListenFailures = 5;

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// A session id is visible ASCII (the spec), and short enough to be one.
bool valid_session_id(const std::string& id) {
  if (id.empty() || id.size() > 1024) return false;
  for (unsigned char c : id) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

std::string quote_body(std::string_view body) {
  constexpr size_t kMax = 300;
  std::string b(body.substr(0, kMax));
  while (!b.empty() && (b.back() == '\n' || b.back() == '\r')) b.pop_back();
  if (b.empty()) return "";
  return ": " + replace_invalid_utf8(b) + (body.size() > kMax ? "..." : "");
}

}  // namespace

HttpTransport::HttpTransport(HttpTransportOptions options) : options_(std::move(options)) {}

HttpTransport::~HttpTransport() { close(); }

Status HttpTransport::open(Receiver receiver) {
  receiver_ = std::move(receiver);
  for (const auto& header : options_.headers) {
    // A line break would let a value add headers of its own, or a second request.
    const size_t colon = header.find(':');
    if (header.find_first_of("\r\n", 0) != std::string::npos ||
        header.find('\0') != std::string::npos || colon == 0 || colon == std::string::npos ||
        header.find_first_of(" \t") < colon) {
      return Status::error(fmt::format(
          "the header \"{}\" for {} is not one header line",
          replace_invalid_utf8(header.substr(0, header.find_first_of("\r\n"))), options_.url));
    }
  }
  return ok_status();
}

std::vector<std::string> HttpTransport::request_headers(bool sse_only) const {
  std::vector<std::string> headers = options_.headers;
  headers.push_back(sse_only ? "Accept: text/event-stream"
                             : "Accept: application/json, text/event-stream");
  if (!sse_only) headers.push_back("Content-Type: application/json");
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_id_.empty()) headers.push_back("Mcp-Session-Id: " + session_id_);
  if (!protocol_version_.empty()) headers.push_back("MCP-Protocol-Version: " + protocol_version_);
  return headers;
}

void HttpTransport::spawn(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  // close() sets closing_ before it takes the workers under mu_: a worker added after that
  // would never be joined.
  if (closing_.load()) return;
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back(Worker{std::thread([work = std::move(work), done] {
                              work();
                              done->store(true);
                            }),
                            done});
}

Status HttpTransport::send(std::string message, bool answered) {
  if (closing_.load()) return Status::error("the connection is closed");
  if (failed_.load()) return Status::error("the connection has failed");
  if (!answered) {
    // Notifications and our answers are POSTed before send() returns, so that they reach
    // the server in the order they were sent: a request sent after
    // notifications/initialized must not overtake it. The server answers them at once (202).
    post(message, false);
    return failed_.load() ? Status::error("the connection has failed") : ok_status();
  }
  spawn([this, message = std::move(message)] { post(message, true); });
  return ok_status();
}

void HttpTransport::on_initialized(const std::string& protocol_version) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = protocol_version;
  }
  auto opened = listening_.get_future();
  spawn([this] { listen(); });
  opened.wait_for(kListenWait);
}

void HttpTransport::listening() {
  if (!listening_told_.exchange(true)) listening_.set_value();
}

void HttpTransport::stop_all() {
  stop_.cancel();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, token] : in_flight_) token->cancel();
}

void HttpTransport::abandon(int64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_flight_.find(id_text(Json(request_id)));
  if (it != in_flight_.end()) it->second->cancel();
}

void HttpTransport::fail(const Status& why) {
  if (closing_.load() || failed_.exchange(true)) return;
  stop_all();
  if (receiver_.on_closed) receiver_.on_closed(why);
}

Status HttpTransport::deliver(std::string_view message, const Json* request_id, bool* answered) {
  if (message.find_first_not_of(" \t\r\n") == std::string_view::npos) return ok_status();
  if (request_id != nullptr && answered != nullptr && !*answered) {
    // Whether this is the answer we wait for; garbage is the receiver's to refuse.
    auto parsed = parse_json(message, "message");
    if (parsed.ok() && parsed->is_object() && !parsed->contains("method")) {
      auto id = parsed->find("id");
      if (id != parsed->end() && *id == *request_id) *answered = true;
    }
  }
  std::lock_guard<std::mutex> lock(deliver_mu_);
  if (closing_.load() || failed_.load()) return ok_status();
  return receiver_.on_message(message);
}

Status HttpTransport::stream(const std::string& method, const std::string& body,
                             const CancelToken* cancel, const Json* request_id, bool* answered,
                             std::string* last_event_id, long* status) {
  HttpExchange ex;
  ex.method = method;
  ex.url = options_.url;
  ex.headers = request_headers(method == "GET");
  if (method == "GET" && !last_event_id->empty()) {
    ex.headers.push_back("Last-Event-ID: " + *last_event_id);
  }
  ex.body = body;
  ex.cancel = cancel;
  ex.connect_timeout = options_.connect_timeout;
  bool sse = false;
  std::string json_body;
  Status delivered;
  providers::SseParser parser(
      [&](const providers::SseEvent& event) -> Status {
        if (!event.id.empty()) *last_event_id = std::string(event.id);
        if (event.type != "message") return ok_status();
        return deliver(event.data, request_id, answered);
      },
      kMaxMessageBytes);
  ex.on_headers = [&](long code, const std::string& content_type,
                      const std::string& session_id) -> Status {
    *status = code;
    if (method == "GET" && request_id == nullptr) listening();
    if (code < 200 || code >= 300) return ok_status();
    if (!session_id.empty()) {
      if (!valid_session_id(session_id)) {
        return Status::error(
            fmt::format("{} {}: the server sent an Mcp-Session-Id that is not visible ASCII",
                        method, options_.url));
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (session_id_.empty()) session_id_ = session_id;
    }
    sse = starts_with_ci(content_type, "text/event-stream");
    if (!sse && code != 202 && !starts_with_ci(content_type, "application/json") &&
        method != "DELETE") {
      return Status::error(fmt::format(
          "{} {}: the server answered with content type \"{}\", not JSON or an event stream",
          method, options_.url, replace_invalid_utf8(content_type)));
    }
    return ok_status();
  };
  ex.on_body = [&](std::string_view piece) -> Status {
    if (sse) return parser.feed(piece);
    if (json_body.size() + piece.size() > kMaxMessageBytes) {
      return Status::error(fmt::format("{} {}: an answer of more than {} bytes", method,
                                       options_.url, kMaxMessageBytes));
    }
    json_body.append(piece);
    return ok_status();
  };
  auto answer = http_exchange(ex);
  if (!answer.ok()) return answer.status();
  if (answer->status < 200 || answer->status >= 300) {
    std::lock_guard<std::mutex> lock(mu_);
    if (answer->status == 404 && !session_id_.empty()) {
      return Status::error(
          fmt::format("{} {}: the server ended the session (HTTP 404)", method, options_.url));
    }
    return Status::error(fmt::format("{} {}: HTTP {}{}", method, options_.url, answer->status,
                                     quote_body(answer->error_body)));
  }
  if (!sse && !json_body.empty()) return deliver(json_body, request_id, answered);
  return ok_status();
}

void HttpTransport::post(const std::string& message, bool answered) {
  if (!answered) {
    long status = 0;
    std::string no_event_id;
    Status st = stream("POST", message, &stop_, nullptr, nullptr, &no_event_id, &status);
    if (!st.ok() && !stop_.cancelled()) fail(st);
    return;
  }
  Json request_id;
  auto parsed = parse_json(message, "request");
  if (parsed.ok() && parsed->contains("id")) request_id = (*parsed)["id"];
  const std::string key = id_text(request_id);
  auto token = std::make_shared<CancelToken>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_.cancelled()) return;
    in_flight_[key] = token;
  }
  bool got_answer = false;
  std::string last_event_id;
  long status = 0;
  Status st =
      stream("POST", message, token.get(), &request_id, &got_answer, &last_event_id, &status);
  // A stream cut before the answer is resumed from the last event the server numbered.
  for (int resume = 0;
       !got_answer && !last_event_id.empty() && resume < kMaxResumes && !token->cancelled();
       ++resume) {
    st = stream("GET", "", token.get(), &request_id, &got_answer, &last_event_id, &status);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
  }
  // Abandoned by the client, or the whole connection is going: nobody waits for this.
  if (token->cancelled()) return;
  if (!st.ok()) return fail(st);
  if (!got_answer) {
    fail(
        Status::error(fmt::format("POST {}: the server ended the answer's stream without "
                                  "answering request {}",
                                  options_.url, key)));
  }
}

void HttpTransport::listen() {
  std::string last_event_id;
  int failures = 0;
  while (!stop_.cancelled() && failures < kMaxListenFailures) {
    long status = 0;
    Status st = stream("GET", "", &stop_, nullptr, nullptr, &last_event_id, &status);
    listening();
    if (stop_.cancelled()) return;
    // 405: the server offers no stream of its own, which the spec allows.
    if (status == 405) return;
    if (!st.ok()) {
      // Garbage on the server's stream is garbage from the server.
      if (st.message().rfind("it sent garbage", 0) == 0) return fail(st);
      ++failures;
    } else {
      failures = 0;
    }
    for (int i = 0; i < 10 && !stop_.cancelled(); ++i) {
      std::this_thread::sleep_for(kListenRetry / 10);
    }
  }
}

void HttpTransport::close() {
  std::lock_guard<std::mutex> close_lock(close_mu_);
  if (closing_.exchange(true)) return;
  stop_all();
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers = std::move(workers_);
  }
  for (auto& w : workers) w.thread.join();
  std::string session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    session = session_id_;
  }
  if (session.empty()) return;
  // Ends the session on the server; a server that is gone or refuses changes nothing here.
  HttpExchange ex;
  ex.method = "DELETE";
  ex.url = options_.url;
  ex.headers = request_headers(false);
  ex.connect_timeout = kCloseTimeout;
  ex.total_timeout = kCloseTimeout;
  auto ignored = http_exchange(ex);
  (void)ignored;
}

}  // namespace mecha::mcp
