// One turn of a session, run on a worker thread: the user's text in, the run's events out as
// frames, the records into the session's log, and turn_done last.
//
// Order of what a client sees and what the log holds:
//   1. the user_message record is committed first;
//   2. while the agent runs, its events stream as frames (text_delta, text, tool_call, ...)
//      and the session's journal (agent/session_journal.h) commits each message as it joins
//      the conversation, each tool result with its untrusted label, each model call's usage;
//   3. a run_end record closes the turn;
//   4. an error frame when the turn did not complete (turn_failed, turn_cancelled,
//      turn_limits), then turn_done {content, usage, untrusted}, `untrusted` read from the
//      log (Session::untrusted), so it holds across restarts and never becomes false again.
// Every record a client was told of is committed first, so a daemon killed at any point
// loses no acknowledged record; a turn cut short is rebuilt with its interruption marked
// (store/conversation_log.h). The session's taint carries from turn to turn: a send in a
// later turn is held when earlier turns read untrusted content and private data. Each turn is
// one run of the session's plan, under the plan's limits (max time and cost per turn).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/agent.h"
#include "agent/run_pipeline.h"
#include "server/connection.h"
#include "server/live_session.h"
#include "store/file_taint.h"

namespace mecha::server {

// Builds the run a session's turns share (agent/run_pipeline.h), called once per session at
// its first turn: a cassette replays from its start for each session.
using PlanFactory = std::function<Result<std::shared_ptr<const agent::RunPlan>>()>;

// What every turn of a daemon shares. Immutable while the daemon runs.
struct TurnSettings {
  PlanFactory make_plan;
  std::chrono::milliseconds approval_timeout{60000};  // Default: 60 s, then a denial
  // The limits each turn runs under, as a client is told them (cost_report); the plan
  // enforces them. Default: none known.
  std::optional<double> max_cost_usd;
  std::optional<int64_t> max_turns;
  std::optional<double> max_time_s;
  // Where files a turn writes while its session holds untrusted content are marked, and
  // marked files are untrusted to read (store/file_taint.h). Null: no file taint is kept.
  std::shared_ptr<store::FileTaint> file_taint;
};

// Runs the turn and returns its closing frames (the error frame when there is one, then
// turn_done), for the caller to send once it has called session.end_turn(): a client that
// answers turn_done with its next user_turn must find the session free.
// REQUIRES: session.begin_turn() succeeded.
std::vector<wire::Frame> run_turn(const TurnSettings& settings, LiveSession& session,
                                  const std::shared_ptr<Connection>& connection,
                                  const std::string& text);

// The spend recorded in a session's log, and the limits of its turns.
wire::CostReport cost_of(const TurnSettings& settings, LiveSession& session);

}  // namespace mecha::server
