#include "tools/mcp/tool_server.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tools/mcp/jsonrpc.h"

namespace mecha::mcp {
namespace {

// One code of the range JSON-RPC 2.0 leaves to servers (its own are in jsonrpc.h).
constexpr int kServerBusy = -32000;

bool echoable_id(const Json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

// One client's session: what it has sent so far, and the calls it has in flight.
class ToolServer::Session {
 public:
  Session(const ToolServer& server, int out_fd) : server_(server), out_(out_fd) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { finish(); }

  void handle_line(std::string_view line);
  // The message past the size limit, answered once; the rest of its line is skipped.
  void refuse_long_line() {
    fail(nullptr, kInvalidRequest,
         fmt::format("Invalid Request: a message longer than {} bytes",
                     server_.options_.max_line_bytes));
  }
  // Cancels the calls in flight and waits for them.
  void finish();
  // Waits for the calls in flight, whose answers are still sent.
  void drain() {
    for (Worker& w : workers_) w.thread.join();
    workers_.clear();
  }
  // Joins the threads of calls that are done.
  void reap();
  bool output_broken() {
    std::lock_guard<std::mutex> lock(out_mu_);
    return out_broken_;
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void send(const Json& message);
  void reply(const Json& id, Json result) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  }
  void fail(const Json& id, int code, std::string message) {
    send({{"jsonrpc", "2.0"},
          {"id", id},
          {"error", {{"code", code}, {"message", std::move(message)}}}});
  }
  void request(const Json& id, const std::string& method, const Json& params);
  void notification(const std::string& method, const Json& params);
  void initialize(const Json& id, const Json& params);
  void call(const Json& id, const Json& params);

  const ToolServer& server_;
  const int out_;
  std::mutex out_mu_;
  bool out_broken_ = false;  // GUARDED_BY(out_mu_)
  bool initialized_ = false;
  std::mutex calls_mu_;
  // Calls in flight, by their id as JSON text. GUARDED_BY(calls_mu_)
  std::map<std::string, std::shared_ptr<CancelToken>> in_flight_;
  std::list<Worker> workers_;  // the reading thread's only
};

void ToolServer::Session::send(const Json& message) {
  std::string line = dump_json(message) + "\n";
  std::lock_guard<std::mutex> lock(out_mu_);
  if (out_broken_) return;
  size_t at = 0;
  while (at < line.size()) {
    ssize_t n = ::write(out_, line.data() + at, line.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out_broken_ = true;
      return;
    }
    at += static_cast<size_t>(n);
  }
}

void ToolServer::Session::handle_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  auto parsed = parse_json(line, "message", server_.options_.max_json_depth);
  if (!parsed) return fail(nullptr, kParseError, "Parse error: " + parsed.message());
  const Json& m = *parsed;
  if (m.is_array()) {
    return fail(nullptr, kInvalidRequest,
                "Invalid Request: batches are not supported; send one message per line");
  }
  if (!m.is_object()) {
    return fail(
        nullptr, kInvalidRequest,
        fmt::format("Invalid Request: a message is a JSON object, not {}", json_type_name(m)));
  }
  const auto id_it = m.find("id");
  const bool has_id = id_it != m.end();
  const Json id = has_id && echoable_id(*id_it) ? *id_it : Json(nullptr);
  const auto method = m.find("method");
  if (method == m.end()) {
    // A response to a request of ours: this server sends none, so there is nothing to match.
    if (m.contains("result") || m.contains("error")) return;
    return fail(id, kInvalidRequest, "Invalid Request: no method");
  }
  const auto version = m.find("jsonrpc");
  if (version == m.end() || *version != "2.0")
    return fail(id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  if (!method->is_string())
    return fail(
        id, kInvalidRequest,
        fmt::format("Invalid Request: method must be a string, not {}", json_type_name(*method)));
  const auto params_it = m.find("params");
  const Json params = params_it == m.end() || params_it->is_null() ? Json::object() : *params_it;
  if (!has_id) return notification(method->get<std::string>(), params);
  if (!echoable_id(*id_it)) {
    return fail(nullptr, kInvalidRequest,
                fmt::format("Invalid Request: id must be a string or an integer, not {}",
                            json_type_name(*id_it)));
  }
  if (!params.is_object()) {
    return fail(
        id, kInvalidParams,
        fmt::format("Invalid params: params must be an object, not {}", json_type_name(params)));
  }
  request(id, method->get<std::string>(), params);
}

void ToolServer::Session::notification(const std::string& method, const Json& params) {
  if (method != "notifications/cancelled" || !params.is_object()) return;
  auto rid = params.find("requestId");
  if (rid == params.end() || !echoable_id(*rid)) return;
  std::lock_guard<std::mutex> lock(calls_mu_);
  auto it = in_flight_.find(rid->dump());
  if (it != in_flight_.end()) it->second->cancel();
}

void ToolServer::Session::request(const Json& id, const std::string& method, const Json& params) {
  if (method == "ping") return reply(id, Json::object());
  if (method == "initialize") return initialize(id, params);
  if (!initialized_) {
    return fail(
        id, kInvalidRequest,
        fmt::format("Invalid Request: {} before initialize; send initialize first", method));
  }
  if (method == "tools/list") {
    if (params.contains("cursor"))
      return fail(id, kInvalidParams, "Invalid params: unknown cursor (tools/list has one page)");
    Json tools = Json::array();
    for (const ToolDescriptor& t : server_.tools_) {
      tools.push_back(
          {{"name", t.name},
           {"description", t.description},
           {"inputSchema", t.input_schema},
           {"annotations", {{"readOnlyHint", t.read_only}, {"openWorldHint", t.open_world}}}});
    }
    return reply(id, {{"tools", std::move(tools)}});
  }
  if (method == "tools/call") return call(id, params);
  fail(id, kMethodNotFound, fmt::format("Method not found: {}", method));
}

void ToolServer::Session::initialize(const Json& id, const Json& params) {
  if (initialized_)
    return fail(id, kInvalidRequest, "Invalid Request: initialize was sent already");
  auto asked = params.find("protocolVersion");
  if (asked == params.end() || !asked->is_string())
    return fail(id, kInvalidParams, "Invalid params: initialize needs protocolVersion, a string");
  const auto& supported = kSupportedProtocolVersions;
  std::string version = std::find(supported.begin(), supported.end(), *asked) != supported.end()
                            ? asked->get<std::string>()
                            : supported.front();
  initialized_ = true;
  reply(id,
        {{"protocolVersion", version},
         {"capabilities", {{"tools", {{"listChanged", false}}}}},
         {"serverInfo", {{"name", server_.options_.name}, {"version", server_.options_.version}}}});
}

void ToolServer::Session::call(const Json& id, const Json& params) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string())
    return fail(id, kInvalidParams, "Invalid params: tools/call needs name, a string");
  const auto& tools = server_.tools_;
  bool known = std::any_of(tools.begin(), tools.end(),
                           [&](const ToolDescriptor& t) { return t.name == *name; });
  if (!known) {
    return fail(id, kInvalidParams, fmt::format("Invalid params: unknown tool {}", name->dump()));
  }
  auto args_it = params.find("arguments");
  Json arguments = args_it == params.end() || args_it->is_null() ? Json::object() : *args_it;
  if (!arguments.is_object()) {
    return fail(id, kInvalidParams,
                fmt::format("Invalid params: arguments must be an object, not {}",
                            json_type_name(arguments)));
  }
  auto cancel = std::make_shared<CancelToken>();
  const std::string key = id.dump();
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    if (in_flight_.count(key))
      return fail(id, kInvalidRequest, "Invalid Request: id is in use by a call in flight");
    if (in_flight_.size() >= server_.options_.max_calls_in_flight) {
      return fail(id, kServerBusy,
                  fmt::format("{} calls are in flight, the most this server runs at once; send "
                              "this one when one is done",
                              in_flight_.size()));
    }
    in_flight_[key] = cancel;
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back(
      Worker{std::thread([this, id, key, tool = name->get<std::string>(),
                          arguments = std::move(arguments), cancel, done] {
               ToolCallResult r = server_.call_(tool, arguments, *cancel);
               {
                 std::lock_guard<std::mutex> lock(calls_mu_);
                 in_flight_.erase(key);
               }
               // A cancelled request is not answered (the client has forgotten it).
               if (!cancel->cancelled()) {
                 reply(id, {{"content", Json::array({{{"type", "text"}, {"text", r.text}}})},
                            {"isError", r.is_error}});
               }
               done->store(true);
             }),
             done});
}

void ToolServer::Session::reap() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->done->load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = workers_.erase(it);
  }
}

void ToolServer::Session::finish() {
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    for (auto& [key, cancel] : in_flight_) cancel->cancel();
  }
  for (Worker& w : workers_) w.thread.join();
  workers_.clear();
}

ToolServer::ToolServer(std::vector<ToolDescriptor> tools, ToolCallback call,
                       ToolServerOptions options)
    : tools_(std::move(tools)), call_(std::move(call)), options_(std::move(options)) {}

Status ToolServer::serve(int in_fd, int out_fd) {
  Session session(*this, out_fd);
  std::string line;
  bool skipping = false;  // the rest of a line past max_line_bytes
  char chunk[64 * 1024];
  for (;;) {
    ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      session.finish();
      return Status::error(fmt::format("reading MCP messages: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    std::string_view data(chunk, static_cast<size_t>(n));
    while (!data.empty()) {
      size_t end = data.find('\n');
      std::string_view part = data.substr(0, end);
      if (!skipping) {
        if (line.size() + part.size() > options_.max_line_bytes) {
          session.refuse_long_line();
          line.clear();
          skipping = true;
        } else {
          line.append(part);
        }
      }
      if (end == std::string_view::npos) break;
      if (!skipping) session.handle_line(line);
      line.clear();
      skipping = false;
      data.remove_prefix(end + 1);
    }
    session.reap();
    if (session.output_broken()) break;
  }
  if (!skipping && !line.empty() && !session.output_broken()) session.handle_line(line);
  // The client has said all it will; what it asked for is still answered, unless it stopped
  // reading too.
  if (session.output_broken()) {
    session.finish();
    return Status::error("the MCP client stopped reading (its output pipe is closed)");
  }
  session.drain();
  return ok_status();
}

}  // namespace mecha::mcp
