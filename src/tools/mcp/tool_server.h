// ToolServer: the server side of the Model Context Protocol over stdio, offering tools to
// another agent (`mecha mcp serve`). One JSON-RPC 2.0 message per line in each direction
// (newline-delimited, no batches); nothing else is ever written to the output.
//
// What it answers:
//   initialize       once, first: the client's protocolVersion when it is one of
//                    kSupportedProtocolVersions, else the latest; capabilities
//                    {tools: {listChanged: false}}; serverInfo {name, version}
//   ping             {} (also before initialize)
//   tools/list       every tool, in one page
//   tools/call       {content: [{type: "text", text}], isError}; an unknown tool or params
//                    of the wrong shape is a protocol error (-32602)
//   notifications/cancelled   cancels that call's CancelToken; its answer is not sent
//   other notifications       ignored; responses from the client are ignored too
// Errors: a line that is not JSON -32700, a message that is not a request (not an object,
// jsonrpc not "2.0", a method that is not a string, an id that is neither a string nor an
// integer, a batch, a request other than ping before initialize, a line past
// max_line_bytes) -32600, an unknown method -32601, bad params -32602. An id that cannot be
// echoed is answered with id null.
//
// The client is a hostile peer like any other: lines are bounded in size and depth, calls in
// flight are bounded in number, and nothing it sends stops the server but the end of input.
//
// Thread-safety: serve() runs on the caller's thread and calls `call` on threads of its
// own, one per tools/call, at most max_calls_in_flight at once; `call` must be safe to run
// concurrently with itself (it may serialize).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/cancel.h"
#include "base/json_limits.h"
#include "base/result.h"
#include "base/strict_json.h"

namespace mecha::mcp {

// Newest first; the first is what a client asking for another version is offered.
inline const std::vector<std::string> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"};

struct ToolDescriptor {
  std::string name;
  std::string description;
  Json input_schema;  // a JSON Schema object
  bool read_only = false;
  // Whether it may reach beyond what the server owns (MCP's openWorldHint; its default is
  // true). A client that labels unlabelled tools by annotations counts an open-world tool as
  // one that may send.
  bool open_world = true;
};

struct ToolCallResult {
  std::string text;
  bool is_error = false;
};

// Runs one call of the tool `name` (one of the descriptors') with the client's arguments
// (an object; {} when the client sent none). `cancel` is cancelled when the client cancels
// the call or stops reading; the call should return soon after.
using ToolCallback = std::function<ToolCallResult(const std::string& name, const Json& arguments,
                                                  const CancelToken& cancel)>;

struct ToolServerOptions {
  std::string name = "mecha";
  std::string version;
  std::size_t max_line_bytes = 16 << 20;  // Default: 16 MiB
  int max_json_depth = kDefaultMaxJsonDepth;
  std::size_t max_calls_in_flight = 16;
};

class ToolServer {
 public:
  ToolServer(std::vector<ToolDescriptor> tools, ToolCallback call, ToolServerOptions options);
  ToolServer(const ToolServer&) = delete;
  ToolServer& operator=(const ToolServer&) = delete;

  // Reads messages from `in_fd` until it ends, answering on `out_fd`. At the end of input the
  // calls in flight are waited for and answered (`printf REQUESTS | mecha mcp serve` gets
  // every answer); a client that wants them stopped cancels them, or ends the process. When
  // the output cannot be written (the client is gone) or the input cannot be read, the calls
  // in flight are cancelled, waited for, and the error returned.
  Status serve(int in_fd, int out_fd);

 private:
  class Session;
  std::vector<ToolDescriptor> tools_;
  ToolCallback call_;
  ToolServerOptions options_;
};

}  // namespace mecha::mcp
