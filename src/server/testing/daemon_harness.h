// DaemonHarness: a daemon serving on a socket in a temp dir, on its own thread, with a
// cassette per session and the test tools. For tests and benchmarks.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/client.h"
#include "server/daemon.h"
#include "store/testing/temp_dir.h"
#include "tools/registry.h"

namespace mecha::server::testing {

// What the harness's sessions run: the test tools in the harness's temp dir, unless tuned.
struct HarnessRun {
  std::filesystem::path work_tree;
  tools::ToolRegistry tools;
  agent::AgentSpec spec;
  std::optional<double> max_time_s;
  std::optional<double> max_cost_usd;
  // Null: no permission rules or mode (every call may run), as in a run built by a library.
  std::shared_ptr<const agent::PermissionPolicy> permissions;
  config::SecurityMode security_mode = config::SecurityMode::kTrifecta;
};

class DaemonHarness {
 public:
  // `cassette` is the text of a cassette file; each session replays it from its start.
  // `tune` may change the options before the daemon starts, `tune_run` what it runs.
  explicit DaemonHarness(const std::string& cassette,
                         std::function<void(DaemonOptions&)> tune = nullptr,
                         std::function<void(HarnessRun&)> tune_run = nullptr);
  ~DaemonHarness();

  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& store_path() const { return store_path_; }
  std::atomic<int>& sends() { return *sent_; }
  // Stops the daemon and waits for serve() to return; returns its status.
  Status stop();
  // Starts it again on the same socket and store (after stop()).
  void restart();

  std::unique_ptr<Client> connect();

 private:
  void start();
  store::testing::TempDir dir_;
  std::filesystem::path socket_;
  std::filesystem::path store_path_;
  std::string cassette_;
  std::function<void(DaemonOptions&)> tune_;
  std::function<void(HarnessRun&)> tune_run_;
  std::shared_ptr<std::atomic<int>> sent_ = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<Daemon> daemon_;
  std::thread thread_;
  Status served_;
};

// Sends a user_turn and collects every frame up to and including turn_done (text_delta
// frames left out). `on_approval` answers approval requests; null leaves them unanswered.
// A turn_done that has not come within kReceiveLimit fails the test (receive_deadline.h) and
// the frames so far are returned.
std::vector<wire::Frame> run_turn(
    Client& client, const std::string& text,
    std::function<std::optional<bool>(const wire::ApprovalRequest&)> on_approval = nullptr);
// The same, with the whole answer (`always` included) in the test's hands.
std::vector<wire::Frame> run_turn_answering(
    Client& client, const std::string& text,
    std::function<std::optional<wire::ApprovalAnswer>(const wire::ApprovalRequest&)> on_approval);

// One cassette line: {"response": {"content": blocks, "stop_reason", "usage"}}.
std::string cassette_line(const Json& content, const std::string& stop_reason, int input_tokens,
                          int output_tokens, const Json& expect = nullptr);
std::string cassette_header();

// Content blocks of a cassette response.
Json text_block(const std::string& text);
Json tool_use(const std::string& id, const std::string& name, const Json& input);

// One tool call to Noop, then an answer; the second line checks the tool's result came back.
std::string noop_cassette();
// The frames a turn on noop_cassette() sends, turn_done included.
std::vector<wire::Frame> noop_transcript();

}  // namespace mecha::server::testing
