// Transport: carries JSON-RPC messages between the client and one MCP server (a child over
// stdio, or a Streamable HTTP endpoint). It moves text; what the text means is the client's.
//
// Promises:
//  1. Messages from the server are handed to Receiver::on_message one at a time, in order,
//     on a thread of the transport. A failed Status from on_message (the server sent
//     garbage) ends the connection: the transport stops reading and reports on_closed with
//     that Status.
//  2. on_closed is called at most once, when the connection ends on its own (the child
//     exited, the HTTP session failed); never after close() has begun.
//  3. close() is idempotent, waits for the transport's threads, and after it returns no
//     callback runs. REQUIRES: not called from inside a callback.
//
// Thread-safety: send() may be called from any thread, including from on_message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::mcp {

struct Receiver {
  std::function<Status(std::string_view message)> on_message;
  std::function<void(const Status& why)> on_closed;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Starts the connection (spawns the child). Fails when it cannot be started.
  virtual Status open(Receiver receiver) = 0;
  // Sends one message (one line of JSON, no newline). `answered` says whether the
  // message is a request the server will answer (HTTP reads the answer from the POST).
  virtual Status send(std::string message, bool answered) = 0;
  // The protocol version agreed at initialize; HTTP sends it as MCP-Protocol-Version on
  // every later request and opens the server's stream. Default: nothing.
  virtual void on_initialized(const std::string& protocol_version) { (void)protocol_version; }
  // The client no longer waits for the answer to this request (it was cancelled or timed
  // out): HTTP stops reading that answer's stream, and its end is no failure. Default:
  // nothing.
  virtual void abandon(int64_t request_id) { (void)request_id; }
  virtual void close() = 0;
  // The last lines the server wrote on stderr, "" when none or not a child.
  virtual std::string stderr_tail() const { return ""; }
};

}  // namespace mecha::mcp
