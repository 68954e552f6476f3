#include "tools/background_shell_tools.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include "tools/background_shells.h"
#include "tools/taint_marks.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {
namespace {

// The lines of `text` that match `filter`, in order.
std::string matching_lines(const std::string& text, const RE2& filter) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const size_t stop = end == std::string::npos ? text.size() : end;
    std::string_view line(text.data() + start, stop - start);
    if (RE2::PartialMatch(line, filter)) {
      out.append(line);
      out += '\n';
    }
    start = stop + 1;
  }
  return out;
}

std::string status_line(const ShellRead& r) {
  if (!r.start_error.empty()) return "Status: failed to start: " + r.start_error;
  if (r.running) return "Status: running";
  if (r.killed) return "Status: killed";
  if (r.timed_out) return "Status: timed out and killed (exit code 124)";
  if (r.signal != 0) {
    return fmt::format("Status: exited, exit code {} (killed by signal {})", 128 + r.signal,
                       r.signal);
  }
  return fmt::format("Status: exited, exit code {}", r.exit_code);
}

}  // namespace

std::string BashOutputTool::description() const {
  return "Reads the output of a background shell (started by Bash with run_in_background): "
         "what it wrote since the last read, stdout and stderr interleaved, and whether it is "
         "still running or its exit code. filter, a regular expression, keeps only the new "
         "lines that match it; the others are gone for good.";
}

Json BashOutputTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "bash_id": {"type": "string", "description": "The ID of the background shell to read"},
      "filter": {"type": "string", "description": "A regular expression: only the new lines that match it are returned; the others are dropped for good"}
    },
    "required": ["bash_id"],
    "additionalProperties": false
  })json");
}

Capabilities BashOutputTool::capabilities() const {
  // Bash's own: the output of a command that can reach the network is what the network sent.
  const bool network = settings_.network || !settings_.sandbox;
  Capabilities c;
  c.untrusted_input = network;
  c.external_send = network;
  return c;
}

ToolOutput BashOutputTool::call(const Json& input, ToolContext& ctx) {
  const std::string id = input.at("bash_id").get<std::string>();
  std::unique_ptr<RE2> filter;
  if (input.contains("filter")) {
    RE2::Options options;
    options.set_log_errors(false);
    filter = std::make_unique<RE2>(input.at("filter").get<std::string>(), options);
    if (!filter->ok()) {
      return ToolOutput::error(
          fmt::format("filter is not a valid regular expression: {}", filter->error()));
    }
  }
  const auto shells = existing_background_shells(ctx);
  if (!shells) {
    return ToolOutput::error(
        fmt::format("no background shell {}: none was started in this run", id));
  }
  auto r = shells->read(id);
  if (!r) return ToolOutput::error(r.message());
  std::string out = filter ? matching_lines(r->output, *filter) : r->output;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += status_line(*r);
  out += boundary_note(r->boundary, /*foreground=*/false);
  // What the background shells wrote meanwhile is marked as a foreground command's is.
  if (std::string note = mark_sandbox_writes(ctx); !note.empty()) out += "\n[note: " + note + "]";
  ToolOutput result = ToolOutput::ok(std::move(out));
  result.external = settings_.network;
  return result;
}

std::string KillShellTool::description() const {
  return "Stops a background shell (started by Bash with run_in_background) and every process "
         "it started. Takes the shell_id that Bash returned.";
}

Json KillShellTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "shell_id": {"type": "string", "description": "The ID of the background shell to kill"}
    },
    "required": ["shell_id"],
    "additionalProperties": false
  })json");
}

ToolOutput KillShellTool::call(const Json& input, ToolContext& ctx) {
  const std::string id = input.at("shell_id").get<std::string>();
  const auto shells = existing_background_shells(ctx);
  if (!shells) {
    return ToolOutput::error(
        fmt::format("no background shell {}: none was started in this run", id));
  }
  if (Status s = shells->kill(id); !s.ok()) return ToolOutput::error(s.message());
  return ToolOutput::ok(
      fmt::format("Killed background shell {} and every process it started.", id));
}

}  // namespace mecha::tools
