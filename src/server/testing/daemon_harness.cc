#include "server/testing/daemon_harness.h"

#include <gtest/gtest.h>

#include "providers/cassette.h"
#include "server/testing/receive_deadline.h"
#include "server/testing/test_tools.h"
#include "server/unix_socket.h"

namespace mecha::server::testing {

DaemonHarness::DaemonHarness(const std::string& cassette, std::function<void(DaemonOptions&)> tune,
                             std::function<void(HarnessRun&)> tune_run)
    : socket_(dir_.path() / "mecha.sock"),
      store_path_(dir_.path() / "sessions.db"),
      cassette_(cassette),
      tune_(std::move(tune)),
      tune_run_(std::move(tune_run)) {
  start();
}

DaemonHarness::~DaemonHarness() {
  if (daemon_) (void)stop();
}

void DaemonHarness::start() {
  DaemonOptions options;
  HarnessRun run;
  run.work_tree = dir_.path();
  run.tools = test_registry(sent_);
  if (tune_run_) tune_run_(run);
  std::string text = cassette_;
  options.turns.make_plan = [text, run]() -> Result<std::shared_ptr<const agent::RunPlan>> {
    auto p = providers::CassetteProvider::parse(text, "test.cassette");
    if (!p) return p.status();
    auto plan = std::make_shared<agent::RunPlan>();
    plan->agent = std::make_shared<const agent::Agent>(
        run.spec, std::shared_ptr<providers::Provider>(std::move(*p)), run.tools);
    plan->work_tree = run.work_tree;
    plan->max_time_s = run.max_time_s;
    plan->max_cost_usd = run.max_cost_usd;
    plan->permissions = run.permissions;
    plan->security_mode = run.security_mode;
    return std::shared_ptr<const agent::RunPlan>(std::move(plan));
  };
  options.workers = 8;
  if (tune_) tune_(options);
  auto store = store::SessionStore::open(store_path_);
  ASSERT_TRUE(store.ok()) << store.message();
  auto listener = listen_unix(socket_);
  ASSERT_TRUE(listener.ok()) << listener.message();
  daemon_ = std::make_unique<Daemon>(std::move(options), std::move(*store));
  thread_ = std::thread([this, l = std::make_shared<UniqueFd>(std::move(*listener))]() mutable {
    served_ = daemon_->serve(std::move(*l));
  });
}

Status DaemonHarness::stop() {
  daemon_->stop();
  thread_.join();
  daemon_.reset();
  return served_;
}

void DaemonHarness::restart() { start(); }

std::unique_ptr<Client> DaemonHarness::connect() {
  auto c = Client::connect(socket_, "test client");
  EXPECT_TRUE(c.ok()) << c.message();
  return c.ok() ? std::move(*c) : nullptr;
}

std::vector<wire::Frame> run_turn(
    Client& client, const std::string& text,
    std::function<std::optional<bool>(const wire::ApprovalRequest&)> on_approval) {
  if (!on_approval) return run_turn_answering(client, text, nullptr);
  return run_turn_answering(
      client, text, [&](const wire::ApprovalRequest& a) -> std::optional<wire::ApprovalAnswer> {
        auto yes = on_approval(a);
        if (!yes) return std::nullopt;
        return wire::ApprovalAnswer{a.request_id, *yes, false};
      });
}

std::vector<wire::Frame> run_turn_answering(
    Client& client, const std::string& text,
    std::function<std::optional<wire::ApprovalAnswer>(const wire::ApprovalRequest&)> on_approval) {
  std::vector<wire::Frame> frames;
  if (!client.send(wire::UserTurn{text}).ok()) return frames;
  ReceiveDeadline deadline(client, "turn_done of the turn \"" + text + "\"");
  while (auto d = client.receive()) {
    if (!d->ok()) {
      frames.push_back(d->error);
      continue;
    }
    wire::Frame f = std::move(*d->frame);
    if (std::holds_alternative<wire::TextDelta>(f)) continue;
    if (const auto* a = std::get_if<wire::ApprovalRequest>(&f); a && on_approval) {
      if (auto answer = on_approval(*a)) (void)client.send(*answer);
    }
    const bool done = std::holds_alternative<wire::TurnDone>(f);
    frames.push_back(std::move(f));
    if (done) break;
  }
  return frames;
}

std::string cassette_header() {
  return R"({"mecha_cassette": 1, "note": "test"})"
         "\n";
}

std::string cassette_line(const Json& content, const std::string& stop_reason, int input_tokens,
                          int output_tokens, const Json& expect) {
  Json line{{"response",
             {{"content", content},
              {"stop_reason", stop_reason},
              {"usage", {{"input_tokens", input_tokens}, {"output_tokens", output_tokens}}}}}};
  if (!expect.is_null()) line["expect"] = expect;
  return line.dump() + "\n";
}

Json text_block(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

Json tool_use(const std::string& id, const std::string& name, const Json& input) {
  return {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", input}};
}

std::string noop_cassette() {
  return cassette_header() +
         cassette_line(
             Json::array({text_block("Working."), tool_use("t1", "Noop", Json::object())}),
             "tool_use", 100, 10) +
         cassette_line(Json::array({text_block("done")}), "end_turn", 120, 5,
                       {{"last_tool_result_contains", "ok"}});
}

std::vector<wire::Frame> noop_transcript() {
  return {wire::Text{"main", "Working."}, wire::ToolCall{"main", "t1", "Noop", Json::object()},
          wire::ToolResult{"main", "t1", false, false, false, "ok"}, wire::Text{"main", "done"},
          wire::TurnDone{"done", Usage{220, 15, 0, 0}, false}};
}

}  // namespace mecha::server::testing
