// MCP servers for tests: the reference "everything" server under node (stdio and
// Streamable HTTP), and small fake servers written in Python that misbehave on purpose.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "tools/mcp/child_process.h"
#include "tools/mcp/server_spec.h"

namespace mecha::mcp::testing {

// The first `name` in PATH that is executable; nullopt when there is none.
std::optional<std::filesystem::path> find_in_path(const std::string& name);

// dist/index.js of the pinned @modelcontextprotocol/server-everything.
std::filesystem::path everything_server_js();

// Why the everything server cannot run here ("node is not in PATH"), or "" when it can.
std::string everything_unavailable();

// The everything server over stdio. REQUIRES: everything_unavailable() is "".
ServerSpec everything_stdio_spec(const std::string& name);

// The everything server in Streamable HTTP mode on a free loopback port, killed with its
// group when this object goes.
class EverythingHttpServer {
 public:
  static Result<std::unique_ptr<EverythingHttpServer>> start();
  const std::string& url() const { return url_; }
  ServerSpec spec(const std::string& name) const;

 private:
  std::unique_ptr<ChildProcess> child_;
  std::string url_;
};

// A stdio server's Python source: `script` after a prelude that imports json, os, sys and
// time, and defines send(obj) (one JSON-RPC message to stdout, flushed) and messages(),
// which yields (msg, method, id) for each message read from stdin until it closes.
std::string python_server_script(const std::string& script);

// python_server_script(script) as a stdio server, written into `dir`. Python is python3
// from PATH.
ServerSpec python_server_spec(const std::string& name, const std::filesystem::path& dir,
                              const std::string& script);

// A fresh directory under the system temp directory, removed by the caller.
std::filesystem::path make_temp_dir(const std::string& prefix);

}  // namespace mecha::mcp::testing
