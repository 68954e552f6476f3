// Client: the MCP protocol over one Transport, for one connection to one server.
//
// Lifecycle: start() opens the transport, sends initialize (offering kProtocolVersion,
// accepting kPreviousProtocolVersion), then notifications/initialized. The client declares
// only {roots: {listChanged: false}}; roots/list is answered with the work tree as one
// file:// URI; ping is answered; elicitation/create, sampling/createMessage and any other
// request are answered with an error (mecha declines them). notifications/tools/list_changed
// marks the tool list stale; logging notifications are kept as the last kMaxLogNotes notes.
//
// Promises:
//  1. Every error names the server: `MCP server "NAME": ...`.
//  2. Once the connection fails (the server exited, wrote garbage, the HTTP session broke)
//     the client is dead: failure() says why, with the server's stderr tail, every request
//     in flight and every later one returns that same error. A dead client is not revived;
//     the owner (ServerHandle) makes a new one.
//  3. A request whose CancelToken fires, or whose timeout passes, is abandoned at once (the
//     token is polled every 20 ms): notifications/cancelled with its id is sent and the call
//     returns a cancelled (or timeout) error; the connection stays usable.
//  4. Progress notifications of a call reach its on_note callback, on the calling thread.
//
// Thread-safety: all public methods may be called from several threads at once; requests
// are multiplexed over the one connection. The destructor closes the transport.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/result.h"
#include "base/strict_json.h"
#include "tools/mcp/call_result.h"
#include "tools/mcp/jsonrpc.h"
#include "tools/mcp/tool_list.h"
#include "tools/mcp/transport.h"

namespace mecha::mcp {

inline constexpr const char* kProtocolVersion = "2025-11-25";
inline constexpr const char* kPreviousProtocolVersion = "2025-06-18";
inline constexpr size_t kMaxLogNotes = 20;
// A server that pages its tool list forever is cut off here.
inline constexpr int kMaxToolPages = 100;
inline constexpr size_t kMaxTools = 1000;

struct ClientOptions {
  std::string server_name;
  // Offered as the one root. Default: empty, no roots (roots/list answers []).
  std::filesystem::path work_tree;
  // Default: 30 s.
  std::chrono::milliseconds startup_timeout{30'000};
};

struct CallOptions {
  const CancelToken* cancel = nullptr;  // Default: none
  std::chrono::milliseconds timeout{600'000};
  // Progress of the call ("progress 2/5: reading"), on the calling thread. Default: none.
  std::function<void(const std::string& note)> on_note;
};

class Client {
 public:
  Client(ClientOptions options, std::unique_ptr<Transport> transport);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Opens the transport and initializes. On failure the client is dead (failure()).
  Status start(const CancelToken* cancel);

  // All pages of tools/list. Clears the stale mark.
  Result<std::vector<ToolInfo>> list_tools(const CancelToken* cancel,
                                           std::chrono::milliseconds timeout);
  Result<CallResult> call_tool(const std::string& name, const Json& arguments,
                               const CallOptions& options);
  Status ping(const CancelToken* cancel, std::chrono::milliseconds timeout);

  // True after notifications/tools/list_changed, until the next list_tools().
  bool tools_stale() const;
  // ok while the connection lives; else why it ended (promise 2).
  Status failure() const;
  // The version agreed at initialize; "" before.
  std::string protocol_version() const;
  // The server's serverInfo from initialize; null before.
  Json server_info() const;
  // The server's logging notifications, oldest first, at most kMaxLogNotes.
  std::vector<std::string> log_notes() const;
  std::string stderr_tail() const { return transport_->stderr_tail(); }

 private:
  struct Pending {
    bool done = false;
    std::optional<RpcMessage> reply;
    std::deque<std::string> notes;
  };
  struct RequestOptions {
    const CancelToken* cancel = nullptr;
    std::chrono::steady_clock::time_point deadline;
    std::string timeout_text;  // "within 2 s (startup_timeout)"
    std::string what;          // "tools/call \"echo\"", for messages
    bool with_progress = false;
    const std::function<void(const std::string&)>* on_note = nullptr;
  };

  Result<Json> request(const std::string& method, Json params, const RequestOptions& options);
  Status on_message(std::string_view text);
  void on_closed(const Status& why);
  void answer(const RpcMessage& request);
  void take_notification(const RpcMessage& note);
  std::string error_prefix() const;

  const ClientOptions options_;
  const std::unique_ptr<Transport> transport_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_id_ = 1;                                  // GUARDED_BY(mu_)
  std::map<int64_t, std::shared_ptr<Pending>> pending_;  // GUARDED_BY(mu_)
  Status failure_;                                       // GUARDED_BY(mu_)
  bool tools_stale_ = false;                             // GUARDED_BY(mu_)
  std::string protocol_version_;                         // GUARDED_BY(mu_)
  Json server_info_;                                     // GUARDED_BY(mu_)
  std::deque<std::string> log_notes_;                    // GUARDED_BY(mu_)
};

// "file:///a/b%20c" for /a/b c.
std::string file_uri(const std::filesystem::path& path);

}  // namespace mecha::mcp
