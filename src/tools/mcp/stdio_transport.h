// StdioTransport: an MCP server run as a child process, speaking newline-delimited JSON-RPC
// on its stdin and stdout (the MCP stdio transport).
//
// Promises (beyond transport.h):
//  1. The child is spawned by the transport's own reader thread, which lives exactly as
//     long as the child: PR_SET_PDEATHSIG then kills the child when the transport goes, or
//     when mecha dies, whichever thread started the server.
//  2. A line from the server longer than kMaxMessageBytes is garbage: the connection ends
//     with an error naming the limit. Blank lines are skipped.
//  3. stderr is kept in a ring of the last kStderrTailBytes bytes (stderr_tail()), and
//     appended to `stderr_log` when one is given.
//  4. When the child exits or closes stdout, on_closed says how it ended ("exited with
//     status 1"); close() kills the child's whole process group.
//  5. send() waits for room in the pipe at most `write_timeout`; a server that does not
//     read its stdin is an error, not a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "base/unique_fd.h"
#include "tools/mcp/child_process.h"
#include "tools/mcp/stderr_ring.h"
#include "tools/mcp/transport.h"

namespace mecha::mcp {

inline constexpr size_t kStderrTailBytes = 4096;

struct StdioOptions {
  ChildOptions child;
  // Starts the child some other way (child_process.h). Default: none, as `child` says.
  Launcher launcher;
  // Default: none.
  std::filesystem::path stderr_log;
  // Default: 10 s.
  std::chrono::milliseconds write_timeout{10'000};
};

class StdioTransport final : public Transport {
 public:
  explicit StdioTransport(StdioOptions options);
  ~StdioTransport() override;
  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;

  Status open(Receiver receiver) override;
  Status send(std::string message, bool answered) override;
  void close() override;
  std::string stderr_tail() const override { return stderr_.tail(); }

 private:
  void read_loop(std::unique_ptr<ChildProcess> child);
  Status take_stdout(std::string_view chunk);

  const StdioOptions options_;
  Receiver receiver_;
  StderrRing stderr_;
  std::thread reader_;
  UniqueFd wake_read_, wake_write_;  // close() wakes the reader through this pipe
  std::atomic<bool> closing_{false};
  std::mutex close_mu_;
  std::mutex write_mu_;
  UniqueFd stdin_;    // a duplicate of the child's stdin, GUARDED_BY(write_mu_)
  std::string line_;  // the part of a line read so far (reader thread only)
};

}  // namespace mecha::mcp
