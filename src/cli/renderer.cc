#include "cli/renderer.h"

#include <fmt/format.h>

namespace mecha::cli {
namespace {

std::string first_line(std::string_view s, size_t width) {
  std::string line(s.substr(0, s.find('\n')));
  if (line.size() > width) line = line.substr(0, width) + "…";
  return line;
}

size_t count_lines(std::string_view s) {
  if (s.empty()) return 0;
  size_t n = std::count(s.begin(), s.end(), '\n');
  return s.back() == '\n' ? n : n + 1;
}

std::string human_size(size_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KB", bytes / 1024.0);
  return fmt::format("{:.1f} MB", bytes / (1024.0 * 1024.0));
}

}  // namespace

void JsonLinesSink::on_event(const agent::Event& event) {
  if (std::holds_alternative<agent::TextDeltaEvent>(agent::innermost(event).kind())) return;
  std::string line = dump_json(to_json(event));
  std::lock_guard<std::mutex> lock(mu_);
  std::fputs(line.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

std::string summarize_input(const Json& input, size_t width) {
  std::string out;
  if (input.is_object()) {
    for (const auto& [k, v] : input.items()) {
      if (!out.empty()) out += ", ";
      std::string val =
          v.is_string() ? dump_json(Json(first_line(v.get<std::string>(), width))) : dump_json(v);
      out += k + "=" + val;
      if (out.size() > width) break;
    }
  } else {
    out = dump_json(input);
  }
  if (out.size() > width) out = out.substr(0, width) + "…";
  return out;
}

HumanRenderer::HumanRenderer(std::FILE* err, std::FILE* out, Options options)
    : err_(err), out_(out), opt_(std::move(options)) {}

void HumanRenderer::on_event(const agent::Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  render(event, 0);
}

void HumanRenderer::flush_pending(int depth) {
  if (pending_text_.empty()) return;
  std::string indent(depth * 2, ' ');
  std::string body = pending_text_;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  std::string prefixed;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    prefixed += indent + body.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  fmt::print(err_, "{}", prefixed);
  pending_text_.clear();
}

void HumanRenderer::render(const agent::Event& event, int depth) {
  const std::string indent(depth * 2, ' ');
  const char* dim = opt_.color ? "\x1b[2m" : "";
  const char* bold = opt_.color ? "\x1b[1m" : "";
  const char* red = opt_.color ? "\x1b[31m" : "";
  const char* reset = opt_.color ? "\x1b[0m" : "";
  // Streamed text ends where the next line of ours begins.
  auto end_stream = [&] {
    if (!streamed_.empty() && streamed_.back() != '\n') std::fputc('\n', err_);
    streamed_.clear();
  };
  std::visit(
      agent::Overloaded{
          [&](const agent::NestedEvent& e) { render(*e.event, depth + 1); },
          [&](const agent::TextDeltaEvent& e) {
            if (!opt_.stream || depth > 0 || e.agent != opt_.top_agent) return;
            streamed_ += e.delta;
            std::fwrite(e.delta.data(), 1, e.delta.size(), err_);
          },
          [&](const agent::TextEvent& e) {
            if (depth == 0 && opt_.stream) return;  // already shown as it streamed
            flush_pending(depth);
            pending_text_ = e.text;
            if (depth > 0) flush_pending(depth);
          },
          [&](const agent::ToolCallEvent& e) {
            if (depth == 0) end_stream();
            flush_pending(depth);
            fmt::print(err_, "{}{}● {}{}({})\n", indent, bold, e.name, reset,
                       summarize_input(e.input, 100));
          },
          [&](const agent::ToolResultEvent& e) {
            if (e.is_error) {
              fmt::print(err_, "{}  {}⎿ error: {}{}\n", indent, red, first_line(e.content, 160),
                         reset);
            } else {
              fmt::print(err_, "{}  {}⎿ {} lines ({}){}{}\n", indent, dim, count_lines(e.content),
                         human_size(e.content.size()), e.untrusted ? ", untrusted" : "", reset);
            }
          },
          [&](const agent::RefusalEvent& e) {
            fmt::print(err_, "{}  {}⎿ refused by rule '{}'{}\n", indent, red, e.rule, reset);
          },
          [&](const agent::NoteEvent& e) {
            fmt::print(err_, "{}{}note: {}{}\n", indent, dim, e.text, reset);
          },
          [&](const agent::ApprovalRequest& e) {
            fmt::print(err_, "{}{}asking to allow {} '{}': {}{}\n", indent, dim,
                       agent::approval_kind_name(e.kind), e.tool, e.reason, reset);
          },
          [&](const agent::UsageEvent&) {},
          [&](const agent::DoneEvent& e) {
            const agent::Outcome& o = e.outcome;
            std::string answer = o.text;
            pending_text_.clear();
            const bool streamed = !streamed_.empty();
            end_stream();
            switch (o.status) {
              case agent::RunStatus::kCompleted:
                if (!(streamed && opt_.answer_shown)) {
                  if (!answer.empty() && answer.back() != '\n') answer += '\n';
                  fmt::print(out_, "{}", answer);
                  std::fflush(out_);
                }
                break;
              case agent::RunStatus::kLimitsExceeded:
                fmt::print(err_, "{}mecha: stopped: limit reached: {}{}\n", red, o.limit, reset);
                break;
              case agent::RunStatus::kCancelled:
                fmt::print(err_, "mecha: cancelled\n");
                break;
              case agent::RunStatus::kError:
                fmt::print(err_, "{}mecha: error: {}{}\n", red, o.error, reset);
                break;
            }
            std::string cost =
                o.cost_usd ? fmt::format("${:.4f}", *o.cost_usd) : std::string("cost unknown");
            if (o.unpriced_calls > 0 && o.cost_usd) cost += " + unpriced calls";
            fmt::print(err_, "{}{} {} · {} in / {} out tokens · {}{}\n", dim, o.turns,
                       o.turns == 1 ? "turn" : "turns", o.usage.input_tokens, o.usage.output_tokens,
                       cost, reset);
          },
      },
      event.kind());
  std::fflush(err_);
}

}  // namespace mecha::cli
