// The cassette provider: replays a recorded or scripted model (DESIGN.md, cassette
// version 1).
//
// Each agent draws the next line not yet drawn that carries its name ("main" when a line
// names none), so parallel subagents replay deterministically. The top-level agent
// (CompletionRequest::top_level) is "main" whatever definition it runs: it draws the lines
// for "main". A cassette recorded before that rule has no line for "main" and names the
// top-level agent by its definition; from such a cassette the top-level agent draws the
// lines naming its definition, sharing them in file order with subagents of that name
// (which run only while it waits on a tool call), so the run replays as it was recorded.
// A line's optional `expect` is checked against the request before its response is given.
// Running past an agent's last line is the error `cassette exhausted: agent X asked for
// response N` (X is "main" for the top-level agent). Thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "providers/provider.h"

namespace mecha::providers {

struct CassetteExpect {
  std::optional<std::string> last_tool_result_contains;
  std::vector<std::string> tools_include;
  std::vector<std::string> tools_exclude;
  // Each must be a substring of the request's system prompt.
  std::vector<std::string> system_contains;
  // How many messages the request holds (after a compaction or a fresh context: few).
  std::optional<int64_t> message_count;
  // Each must be a substring of the text of the request's first message (the task, or the
  // summary that replaced the conversation: agent/compaction.h, agent/loop_ladder.h).
  std::vector<std::string> first_message_contains;
};

struct CassetteLine {
  int line_number = 0;  // 1-based line in the file
  std::string agent = "main";
  CompletionResponse response;
  std::optional<CassetteExpect> expect;
};

class CassetteProvider final : public Provider {
 public:
  // Reads and checks the whole file; errors name the file and line.
  static Result<std::unique_ptr<CassetteProvider>> open(const std::string& path);
  // From text already in memory; `name` stands for the file in messages.
  static Result<std::unique_ptr<CassetteProvider>> parse(std::string_view text,
                                                         const std::string& name);

  Result<CompletionResponse> complete(const CompletionRequest& request, StreamSink* sink) override;
  std::string model() const override { return "cassette"; }

 private:
  CassetteProvider(std::string name, std::vector<CassetteLine> lines)
      : name_(std::move(name)),
        lines_(std::move(lines)),
        has_main_lines_(std::any_of(lines_.begin(), lines_.end(),
                                    [](const CassetteLine& l) { return l.agent == "main"; })),
        drawn_lines_(lines_.size(), false) {}
  Status check(const CassetteLine& line, const CompletionRequest& request) const;

  const std::string name_;
  const std::vector<CassetteLine> lines_;
  const bool has_main_lines_;  // false: recorded before the top-level agent was always "main"
  std::mutex mu_;
  std::map<std::string, size_t> asked_;  // GUARDED_BY(mu_): requests per agent, for errors
  std::vector<bool> drawn_lines_;        // GUARDED_BY(mu_): parallel to lines_
};

// Writes one response line of a cassette, for --record. `response` keeps its agent.
Json cassette_line_json(const std::string& agent, const CompletionResponse& response);

}  // namespace mecha::providers
