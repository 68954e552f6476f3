// libFuzzer target over the MCP tool server (tools/mcp/tool_server.h): any byte stream on its
// input must be answered without crashing, hanging or throwing, and everything it writes
// must be JSON-RPC 2.0 responses, one JSON object a line, each with a result or an error.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/mcp/tool_server.h"

namespace {

using mecha::Json;

std::string read_all(int fd) {
  std::string out;
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

void check_output(const std::string& out) {
  size_t at = 0;
  while (at < out.size()) {
    size_t nl = out.find('\n', at);
    if (nl == std::string::npos) __builtin_trap();  // every message ends its line
    auto j = mecha::parse_json(std::string_view(out).substr(at, nl - at), "output");
    if (!j || !j->is_object() || (*j)["jsonrpc"] != "2.0" || !j->contains("id")) __builtin_trap();
    if (j->contains("result") == j->contains("error")) __builtin_trap();
    at = nl + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mecha::mcp::ToolServerOptions options;
  options.version = "fuzz";
  options.max_line_bytes = 1024;
  options.max_json_depth = 16;
  options.max_calls_in_flight = 4;
  mecha::mcp::ToolServer server(
      {{"Echo", "Says its input back.", {{"type", "object"}}, true}},
      [](const std::string&, const Json& args, const mecha::CancelToken&) {
        return mecha::mcp::ToolCallResult{mecha::dump_json(args), false};
      },
      options);
  int in = ::memfd_create("in", 0);
  int out = ::memfd_create("out", 0);
  if (in < 0 || out < 0) __builtin_trap();
  if (size > 0 && ::write(in, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
  ::lseek(in, 0, SEEK_SET);
  if (!server.serve(in, out).ok()) __builtin_trap();
  check_output(read_all(out));
  ::close(in);
  ::close(out);
  return 0;
}
