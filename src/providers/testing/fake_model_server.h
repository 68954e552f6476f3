// FakeModelServer: a loopback HTTP server that plays a scripted model API, for tests.
//
// Each POST takes the next scripted response, in order, and is recorded (method, path,
// headers, body) before it is answered. A streamed response is sent with chunked transfer
// encoding, one chunk per ScriptedChunk and byte for byte as given, each after its delay; a
// response can instead end by closing the connection mid-stream (`cut`). When the script
// runs out the server answers 500 with a body that says so. Delays are cut short when the
// server stops, so a test that stalls a response still ends promptly. By default the server
// closes each connection after its answer; kKeptAlive keeps it for the client's next request,
// as model servers do, and connections() counts the connections requests came on.
//
// Thread-safe. Listens on 127.0.0.1 on a free port from construction to destruction.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/strict_json.h"

namespace mecha::providers::testing {

struct ScriptedChunk {
  std::string bytes;
  std::chrono::milliseconds delay_before{0};
};

struct ScriptedResponse {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent chunked when `streamed`, else as one body with a Content-Length.
  bool streamed = true;
  std::vector<ScriptedChunk> chunks;
  bool cut = false;  // close the connection after the chunks instead of ending the body
  // The wait, after the last chunk, before a streamed body ends.
  std::chrono::milliseconds end_delay{0};

  // A streamed body in chunks of `chunk_size` bytes (the whole body in one when 0), each
  // `gap` after the one before.
  static ScriptedResponse sse(std::string_view body, size_t chunk_size = 0,
                              std::chrono::milliseconds gap = std::chrono::milliseconds(0));
  // A plain body with a Content-Length.
  static ScriptedResponse plain(int status, std::string body,
                                std::string content_type = "application/json");
};

struct RecordedRequest {
  std::string method;
  std::string path;
  httplib::Headers headers;  // names compare case-insensitively
  std::string body;
  int remote_port = 0;  // the client's end of the connection

  // The value of a header, "" when absent; `has_header` tells absent from empty.
  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  // The body parsed as JSON (a test failure when it is not).
  Json json() const;
};

class FakeModelServer {
 public:
  enum class Connections { kOnePerRequest, kKeptAlive };
  explicit FakeModelServer(Connections connections = Connections::kOnePerRequest);
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" + prefix, e.g. base_url("/v1").
  std::string base_url(const std::string& prefix = "") const;

  void enqueue(ScriptedResponse response);
  std::vector<RecordedRequest> requests() const;
  size_t unused_responses() const;
  // How many connections the requests so far came on.
  size_t connections() const;

 private:
  void answer(const httplib::Request& req, httplib::Response& res);
  // Sleeps for `d` unless the server stops first; false when it stopped.
  bool wait(std::chrono::milliseconds d);

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable stopping_cv_;
  bool stopping_ = false;                // GUARDED_BY(mu_)
  std::deque<ScriptedResponse> script_;  // GUARDED_BY(mu_)
  std::vector<RecordedRequest> seen_;    // GUARDED_BY(mu_)
};

// A loopback port with nothing listening on it (bound, then released), for tests of
// refused connections.
int closed_port();

}  // namespace mecha::providers::testing
