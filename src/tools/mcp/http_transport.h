// HttpTransport: the MCP Streamable HTTP transport (spec revision 2025-11-25).
//
// Each message is POSTed to the endpoint with "Accept: application/json, text/event-stream".
// A request's answer comes back as one JSON body or as an SSE stream carrying the answer and
// any requests or notifications the server sends meanwhile; notifications and responses we
// send get 202 Accepted. The Mcp-Session-Id the server gives at initialize is sent with every
// later request, and MCP-Protocol-Version once the version is agreed. After initialize a GET
// opens the server's own stream (for list changes and server requests); a server that
// answers 405 has none; initialize waits (at most kListenWait) for that stream to open, so a
// notification the server sends right after initialized is not lost. An SSE stream that drops
// before the answer came is resumed with GET and Last-Event-ID (at most kMaxResumes times). close()
// ends the session with DELETE.
//
// Promises (beyond transport.h):
//  1. A POST that fails (connection refused, HTTP 4xx/5xx, a 404 for an expired session,
//     a stream that ends without the answer and cannot be resumed) ends the connection with an
//     error naming the URL and what happened.
//  2. open() refuses a configured header that is not one "Name: value" line (a line break
//     in a value would smuggle in headers of its own). Every body is bounded: a JSON answer or an
//     SSE event of more than kMaxMessageBytes is garbage.
//  3. The POST of a request runs on a thread of its own, so a long tools/call does not hold
//     up its cancellation; close() cancels them all and waits for them. Notifications and
//     answers are POSTed before send() returns, so they keep their order.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/cancel.h"
#include "base/strict_json.h"
#include "tools/mcp/transport.h"

namespace mecha::mcp {

inline constexpr int kMaxResumes = 3;
inline constexpr std::chrono::milliseconds kListenWait{2000};

struct HttpTransportOptions {
  std::string url;
  std::vector<std::string> headers;  // "Name: value", sent with every request
  std::chrono::milliseconds connect_timeout{10'000};
};

class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(HttpTransportOptions options);
  ~HttpTransport() override;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  Status open(Receiver receiver) override;
  Status send(std::string message, bool answered) override;
  void on_initialized(const std::string& protocol_version) override;
  void abandon(int64_t request_id) override;
  void close() override;

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void spawn(std::function<void()> work);
  void post(const std::string& message, bool answered);
  void listen();
  // Reads an SSE stream (or a JSON body) into messages; sets *answered when the answer to
  // `request_id` (when not null) went by, and *last_event_id as events arrive.
  Status stream(const std::string& method, const std::string& body, const CancelToken* cancel,
                const Json* request_id, bool* answered, std::string* last_event_id, long* status);
  void stop_all();  // cancels every exchange
  std::vector<std::string> request_headers(bool sse_only) const;
  Status deliver(std::string_view message, const Json* request_id, bool* answered);
  void fail(const Status& why);
  void listening();  // the server's stream is open, or will not be

  const HttpTransportOptions options_;
  Receiver receiver_;
  CancelToken stop_;  // fired by close() or a failure: every exchange ends
  std::atomic<bool> closing_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::string session_id_;        // GUARDED_BY(mu_)
  std::string protocol_version_;  // GUARDED_BY(mu_)
  std::list<Worker> workers_;     // GUARDED_BY(mu_)
  // The requests whose answers are being read, by id, each with its own token so that one
  // can be abandoned.
  std::map<std::string, std::shared_ptr<CancelToken>> in_flight_;  // GUARDED_BY(mu_)
  std::mutex deliver_mu_;  // one message at a time to the receiver
  std::mutex close_mu_;
  std::promise<void> listening_;
  std::atomic<bool> listening_told_{false};
};

}  // namespace mecha::mcp
