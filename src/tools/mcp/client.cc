#include "tools/mcp/client.h"

#include <fmt/format.h>

#include "base/json_limits.h"

namespace mecha::mcp {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPollSlice = std::chrono::milliseconds(20);

std::string seconds_text(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{:g} s", d.count() / 1000.0);
}

// A note for a notifications/progress: "progress 2/5: reading".
std::string progress_note(const Json& params) {
  std::string note = "progress";
  auto number = [](const Json& j) {
    return j.is_number_integer() ? std::to_string(j.get<int64_t>())
                                 : fmt::format("{:g}", j.get<double>());
  };
  auto progress = params.find("progress");
  if (progress != params.end() && progress->is_number()) note += " " + number(*progress);
  auto total = params.find("total");
  if (total != params.end() && total->is_number()) note += "/" + number(*total);
  auto message = params.find("message");
  if (message != params.end() && message->is_string()) {
    note += ": " + message->get<std::string>();
  }
  return replace_invalid_utf8(note);
}

std::string log_note(const Json& params) {
  std::string level = "info";
  auto l = params.find("level");
  if (l != params.end() && l->is_string()) level = l->get<std::string>();
  std::string logger;
  auto g = params.find("logger");
  if (g != params.end() && g->is_string()) logger = g->get<std::string>() + ": ";
  std::string data;
  auto d = params.find("data");
  if (d != params.end()) data = d->is_string() ? d->get<std::string>() : dump_json(*d);
  constexpr size_t kMaxNote = 1000;
  if (data.size() > kMaxNote) data = data.substr(0, kMaxNote) + "...";
  return replace_invalid_utf8(fmt::format("[{}] {}{}", level, logger, data));
}

}  // namespace

std::string file_uri(const std::filesystem::path& path) {
  std::string uri = "file://";
  for (unsigned char c : path.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri;
}

Client::Client(ClientOptions options, std::unique_ptr<Transport> transport)
    : options_(std::move(options)), transport_(std::move(transport)) {}

Client::~Client() { transport_->close(); }

std::string Client::error_prefix() const {
  return fmt::format("MCP server \"{}\"", options_.server_name);
}

Status Client::start(const CancelToken* cancel) {
  Receiver receiver;
  receiver.on_message = [this](std::string_view text) { return on_message(text); };
  receiver.on_closed = [this](const Status& why) { on_closed(why); };
  Status opened = transport_->open(std::move(receiver));
  if (!opened.ok()) {
    Status failed =
        Status::error(fmt::format("{} could not be started: {}", error_prefix(), opened.message()));
    std::lock_guard<std::mutex> lock(mu_);
    failure_ = failed;
    return failed;
  }
  RequestOptions req;
  req.cancel = cancel;
  req.deadline = SteadyClock::now() + options_.startup_timeout;
  req.timeout_text =
      fmt::format("within {} (startup_timeout)", seconds_text(options_.startup_timeout));
  req.what = "initialize";
  Json params = {{"protocolVersion", kProtocolVersion},
                 {"capabilities", {{"roots", {{"listChanged", false}}}}},
                 {"clientInfo", {{"name", "mecha"}, {"version", "0.1.0"}}}};
  auto result = request("initialize", std::move(params), req);
  auto fail = [&](Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.ok()) failure_ = st;
    return st;
  };
  if (!result.ok()) {
    Status st = result.status();
    // A server that never answered says why on stderr, if anywhere.
    if (st.kind() != ErrorKind::kCancelled) {
      std::string tail = transport_->stderr_tail();
      if (!tail.empty() && st.message().find("stderr ends with") == std::string::npos) {
        st = Status::error(fmt::format("{}; its stderr ends with:\n{}", st.message(), tail));
      }
    }
    return fail(st);
  }
  auto version = result->find("protocolVersion");
  if (version == result->end() || !version->is_string()) {
    return fail(Status::error(fmt::format(
        "{}: the answer to initialize has no string \"protocolVersion\"", error_prefix())));
  }
  const std::string agreed = version->get<std::string>();
  if (agreed != kProtocolVersion && agreed != kPreviousProtocolVersion) {
    return fail(Status::error(fmt::format(
        "{} answered initialize with protocol version \"{}\"; mecha offered \"{}\" and also "
        "speaks \"{}\"",
        error_prefix(), replace_invalid_utf8(agreed), kProtocolVersion, kPreviousProtocolVersion)));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    protocol_version_ = agreed;
    auto info = result->find("serverInfo");
    if (info != result->end()) server_info_ = *info;
  }
  transport_->on_initialized(agreed);
  Status sent = transport_->send(encode_notification("notifications/initialized", Json()), false);
  if (!sent.ok()) {
    return fail(Status::error(fmt::format("{}: {}", error_prefix(), sent.message())));
  }
  return ok_status();
}

Result<Json> Client::request(const std::string& method, Json params,
                             const RequestOptions& options) {
  auto pending = std::make_shared<Pending>();
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.ok()) return failure_;
    id = next_id_++;
    pending_[id] = pending;
  }
  if (options.with_progress) {
    if (!params.contains("_meta")) params["_meta"] = Json::object();
    params["_meta"]["progressToken"] = id;
  }
  auto forget = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
  };
  Status sent = transport_->send(encode_request(id, method, params), true);
  if (!sent.ok()) {
    forget();
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.ok()) return failure_;
    return Status::error(
        fmt::format("{}: cannot send {}: {}", error_prefix(), options.what, sent.message()));
  }
  auto abandon = [&](const std::string& reason) {
    forget();
    transport_->abandon(id);
    // The spec forbids cancelling initialize: the connection is dropped instead.
    if (method == "initialize") return;
    // The server may stop working on it; if the notice cannot be sent the server is gone
    // anyway.
    Status ignored = transport_->send(
        encode_notification("notifications/cancelled", Json{{"requestId", id}, {"reason", reason}}),
        false);
    (void)ignored;
  };
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    while (!pending->notes.empty()) {
      std::string note = std::move(pending->notes.front());
      pending->notes.pop_front();
      if (options.on_note != nullptr && *options.on_note) {
        lock.unlock();
        (*options.on_note)(note);
        lock.lock();
      }
    }
    if (pending->done) break;
    if (!failure_.ok()) {
      Status failed = failure_;
      pending_.erase(id);
      return failed;
    }
    if (options.cancel != nullptr && options.cancel->cancelled()) {
      lock.unlock();
      abandon("cancelled by the user");
      return Status::cancelled(fmt::format("{}: {} cancelled", error_prefix(), options.what));
    }
    if (SteadyClock::now() >= options.deadline) {
      lock.unlock();
      abandon("timed out");
      return Status::error(fmt::format("{}: {} did not finish {}{}", error_prefix(), options.what,
                                       options.timeout_text,
                                       method == "initialize" ? "" : "; it was cancelled"));
    }
    cv_.wait_for(lock, kPollSlice);
  }
  pending_.erase(id);
  RpcMessage reply = std::move(*pending->reply);
  lock.unlock();
  if (reply.kind == RpcMessage::Kind::kError) {
    return Status::error(fmt::format("{}: {} failed: {} (error {})", error_prefix(), options.what,
                                     replace_invalid_utf8(reply.error_message), reply.error_code));
  }
  return std::move(reply.result);
}

Status Client::on_message(std::string_view text) {
  // The transport ends the connection with this message (and on_closed names the server).
  auto parsed = parse_message(text, "it sent garbage");
  if (!parsed.ok()) return parsed.status();
  RpcMessage& msg = *parsed;
  switch (msg.kind) {
    case RpcMessage::Kind::kResponse:
    case RpcMessage::Kind::kError: {
      if (!msg.id.is_number_integer()) {
        if (msg.kind == RpcMessage::Kind::kError && msg.id.is_null()) {
          // The server could not read something we sent: it says so, but about no request.
          return Status::error(fmt::format("it answered with an error about no request: {} ({})",
                                           replace_invalid_utf8(msg.error_message),
                                           msg.error_code));
        }
        return ok_status();  // not an id we issue
      }
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pending_.find(msg.id.get<int64_t>());
      // No such request: a late answer to one that was cancelled or timed out.
      if (it == pending_.end()) return ok_status();
      it->second->reply = std::move(msg);
      it->second->done = true;
      cv_.notify_all();
      return ok_status();
    }
    case RpcMessage::Kind::kRequest:
      answer(msg);
      return ok_status();
    case RpcMessage::Kind::kNotification:
      take_notification(msg);
      return ok_status();
  }
  return ok_status();
}

void Client::answer(const RpcMessage& request) {
  std::string reply;
  if (request.method == "ping") {
    reply = encode_result(request.id, Json::object());
  } else if (request.method == "roots/list") {
    Json roots = Json::array();
    if (!options_.work_tree.empty()) {
      roots.push_back({{"uri", file_uri(options_.work_tree)},
                       {"name", options_.work_tree.filename().string()}});
    }
    reply = encode_result(request.id, Json{{"roots", roots}});
  } else if (request.method == "elicitation/create" || request.method == "sampling/createMessage") {
    reply = encode_error(request.id, kMethodNotFound,
                         fmt::format("mecha declines {}: it does not let servers ask the user "
                                     "or the model",
                                     request.method));
  } else {
    reply = encode_error(request.id, kMethodNotFound,
                         fmt::format("mecha does not support {}", request.method));
  }
  Status ignored = transport_->send(std::move(reply), false);
  (void)ignored;
}

void Client::take_notification(const RpcMessage& note) {
  std::lock_guard<std::mutex> lock(mu_);
  if (note.method == "notifications/progress") {
    if (!note.params.is_object()) return;
    auto token = note.params.find("progressToken");
    if (token == note.params.end() || !token->is_number_integer()) return;
    auto it = pending_.find(token->get<int64_t>());
    if (it == pending_.end()) return;
    // A flood of progress is bounded: the oldest notes go.
    if (it->second->notes.size() >= 100) it->second->notes.pop_front();
    it->second->notes.push_back(progress_note(note.params));
    cv_.notify_all();
  } else if (note.method == "notifications/tools/list_changed") {
    tools_stale_ = true;
  } else if (note.method == "notifications/message") {
    if (!note.params.is_object()) return;
    if (log_notes_.size() >= kMaxLogNotes) log_notes_.pop_front();
    log_notes_.push_back(log_note(note.params));
  }
}

void Client::on_closed(const Status& why) {
  std::string tail = transport_->stderr_tail();
  std::string message = fmt::format("{} stopped: {}", error_prefix(), why.message());
  if (!tail.empty()) message += fmt::format("; its stderr ends with:\n{}", tail);
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_.ok()) failure_ = Status::error(message);
  cv_.notify_all();
}

Result<std::vector<ToolInfo>> Client::list_tools(const CancelToken* cancel,
                                                 std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tools_stale_ = false;
  }
  std::vector<ToolInfo> tools;
  std::optional<std::string> cursor;
  RequestOptions req;
  req.cancel = cancel;
  req.deadline = SteadyClock::now() + timeout;
  req.timeout_text = fmt::format("within {}", seconds_text(timeout));
  req.what = "tools/list";
  for (int page = 0;; ++page) {
    if (page == kMaxToolPages) {
      return Status::error(fmt::format("{}: tools/list went on for more than {} pages",
                                       error_prefix(), kMaxToolPages));
    }
    Json params = Json::object();
    if (cursor) params["cursor"] = *cursor;
    auto result = request("tools/list", std::move(params), req);
    if (!result.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      tools_stale_ = true;
      return result.status();
    }
    auto read =
        read_tool_page(*result, fmt::format("{}: tools/list page {}", error_prefix(), page + 1));
    if (!read.ok()) return read.status();
    for (auto& tool : read->tools) tools.push_back(std::move(tool));
    if (tools.size() > kMaxTools) {
      return Status::error(
          fmt::format("{}: tools/list gave more than {} tools", error_prefix(), kMaxTools));
    }
    if (!read->next_cursor) break;
    cursor = std::move(read->next_cursor);
  }
  return tools;
}

Result<CallResult> Client::call_tool(const std::string& name, const Json& arguments,
                                     const CallOptions& options) {
  RequestOptions req;
  req.cancel = options.cancel;
  req.deadline = SteadyClock::now() + options.timeout;
  req.timeout_text = fmt::format("within {} (tool_timeout)", seconds_text(options.timeout));
  req.what = fmt::format("tools/call \"{}\"", name);
  req.with_progress = true;
  req.on_note = &options.on_note;
  auto result = request("tools/call", Json{{"name", name}, {"arguments", arguments}}, req);
  if (!result.ok()) return result.status();
  return read_call_result(*result,
                          fmt::format("{}: the result of tools/call \"{}\"", error_prefix(), name));
}

Status Client::ping(const CancelToken* cancel, std::chrono::milliseconds timeout) {
  RequestOptions req;
  req.cancel = cancel;
  req.deadline = SteadyClock::now() + timeout;
  req.timeout_text = fmt::format("within {}", seconds_text(timeout));
  req.what = "ping";
  auto result = request("ping", Json::object(), req);
  return result.status();
}

bool Client::tools_stale() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tools_stale_;
}

Status Client::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

std::string Client::protocol_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

Json Client::server_info() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_info_;
}

std::vector<std::string> Client::log_notes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {log_notes_.begin(), log_notes_.end()};
}

}  // namespace mecha::mcp
