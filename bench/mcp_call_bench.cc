// A tools/call round trip to a stdio MCP server (issue 16: mecha adds under 1 ms over the
// server's own time).
//
// The server is a tiny Python echo server that answers at once. BM_RawPipeRoundTrip is the
// server's own time as seen from outside: one pre-encoded tools/call line written to its
// stdin and its answer line read back, nothing else. BM_McpToolCall is the same call made
// the way an agent makes it, through ServerHandle::call_tool (encode, the reader thread,
// strict decode, the wake-up of the calling thread, the result's rendering). The difference
// of the two is what mecha adds.
//
// Measured 2026-12-01 on the shared two-core build machine (load average near 7), mean of
// three repetitions: raw pipe 31 us, through mecha 53 us; mecha adds about 22 us a call.
//
// Run: cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMECHA_BENCH=ON
//      ninja -C build-bench mcp_call_bench && ./build-bench/mcp_call_bench
#include <benchmark/benchmark.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/mcp/child_process.h"
#include "tools/mcp/jsonrpc.h"
#include "tools/mcp/server_handle.h"
#include "tools/mcp/testing/test_servers.h"

namespace mecha::mcp {
namespace {

constexpr const char* kEchoServer = R"PY(
for msg, method, mid in messages():
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
              {"type": "text", "text": msg["params"]["arguments"]["message"]}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
)PY";

std::filesystem::path server_script() {
  static const std::filesystem::path path = [] {
    auto p = std::filesystem::temp_directory_path() / "mecha_mcp_echo_bench.py";
    std::ofstream(p) << mecha::mcp::testing::python_server_script(kEchoServer);
    return p;
  }();
  return path;
}

const Json kArguments = {{"message", "a line of about the length of a short tool result"}};

void BM_RawPipeRoundTrip(benchmark::State& state) {
  auto child = ChildProcess::spawn(ChildOptions{{"python3", "-u", server_script()}, {}, {}});
  if (!child.ok()) return state.SkipWithError(child.message().c_str());
  ChildProcess& server = **child;
  // The child's stdin is non-blocking; every line here is small enough for the pipe.
  const std::string line =
      encode_request(1, "tools/call", Json{{"name", "echo"}, {"arguments", kArguments}}) + "\n";
  std::string buffer;
  char chunk[4096];
  for (auto _ : state) {
    if (::write(server.stdin_fd(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return state.SkipWithError("short write");
    while (buffer.find('\n') == std::string::npos) {
      ssize_t n = ::read(server.stdout_fd(), chunk, sizeof chunk);
      if (n <= 0) return state.SkipWithError("the server closed stdout");
      buffer.append(chunk, static_cast<size_t>(n));
    }
    buffer.erase(0, buffer.find('\n') + 1);
  }
}
BENCHMARK(BM_RawPipeRoundTrip)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void BM_McpToolCall(benchmark::State& state) {
  ServerSpec spec;
  spec.name = "echo";
  spec.command = "python3";
  spec.args = {"-u", server_script().string()};
  ServerHandle server(spec, HandleOptions{});
  if (Status st = server.ping(nullptr); !st.ok()) return state.SkipWithError(st.message().c_str());
  for (auto _ : state) {
    auto r = server.call_tool("echo", kArguments, {});
    if (!r.ok()) return state.SkipWithError(r.message().c_str());
    benchmark::DoNotOptimize(r->text.data());
  }
}
BENCHMARK(BM_McpToolCall)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace
}  // namespace mecha::mcp

BENCHMARK_MAIN();
