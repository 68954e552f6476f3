// ServerSpec: how to reach one MCP server, as plain values. The config layer turns its
// [mcp_servers.NAME] tables and Claude Code's .mcp.json entries into these; nothing here
// reads a file or the environment.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tools/mcp/child_process.h"

namespace mecha::mcp {

struct ServerSpec {
  // The server's name as the user configured it; every error about the server names it.
  std::string name;

  // A stdio server: the command (looked up in PATH when it has no slash) and its
  // arguments. Exactly one of `command` and `url` is set.
  std::string command;
  std::vector<std::string> args;
  // Added to (or replacing in) the environment the child inherits.
  std::map<std::string, std::string> env;
  // The child's working directory. Default: empty, the caller's.
  std::filesystem::path cwd;

  // A Streamable HTTP server: its endpoint URL, and headers sent with every request
  // ("Authorization: Bearer ...", values already resolved by the caller).
  std::string url;
  std::map<std::string, std::string> headers;

  // How long the server may take to answer `initialize` (for stdio: from the spawn).
  // Default: 30 s.
  std::chrono::milliseconds startup_timeout{30'000};
  // How long one tools/call may take before it is cancelled. Default: 600 s.
  std::chrono::milliseconds tool_timeout{600'000};

  // For a stdio server: starts its process some other way (a sandbox). Default: none.
  Launcher launcher;

  bool is_http() const { return !url.empty(); }
};

}  // namespace mecha::mcp
