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

void JsonLinesSink::on_event(const Json& event) {
  std::string line = dump_json(event);
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

void HumanRenderer::on_text_delta(std::string_view agent, std::string_view delta) {
  if (!opt_.stream || agent != opt_.top_agent) return;
  std::lock_guard<std::mutex> lock(mu_);
  streamed_ += delta;
  std::fwrite(delta.data(), 1, delta.size(), err_);
  std::fflush(err_);
}

void HumanRenderer::on_event(const Json& event) {
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

void HumanRenderer::render(const Json& event, int depth) {
  const std::string type = event.value("type", "");
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
  if (type == "nested") {
    render(event.at("event"), depth + 1);
  } else if (type == "text") {
    if (depth == 0 && opt_.stream) return;  // already shown as it streamed
    flush_pending(depth);
    pending_text_ = event.value("text", "");
    if (depth > 0) flush_pending(depth);
  } else if (type == "tool_call") {
    if (depth == 0) end_stream();
    flush_pending(depth);
    fmt::print(err_, "{}{}● {}{}({}){}\n", indent, bold, event.value("name", ""), reset,
               summarize_input(event.value("input", Json::object()), 100), "");
  } else if (type == "tool_result") {
    std::string content = event.value("content", "");
    if (event.value("is_error", false)) {
      fmt::print(err_, "{}  {}⎿ error: {}{}\n", indent, red, first_line(content, 160), reset);
    } else {
      fmt::print(err_, "{}  {}⎿ {} lines ({}){}{}\n", indent, dim, count_lines(content),
                 human_size(content.size()), event.value("untrusted", false) ? ", untrusted" : "",
                 reset);
    }
  } else if (type == "refusal") {
    fmt::print(err_, "{}  {}⎿ refused by rule '{}'{}\n", indent, red, event.value("rule", ""),
               reset);
  } else if (type == "note") {
    fmt::print(err_, "{}{}note: {}{}\n", indent, dim, event.value("text", ""), reset);
  } else if (type == "done") {
    const std::string status = event.value("status", "");
    std::string answer = event.value("text", "");
    pending_text_.clear();
    const bool streamed = !streamed_.empty();
    end_stream();
    if (status == "completed") {
      if (!(streamed && opt_.answer_shown)) {
        if (!answer.empty() && answer.back() != '\n') answer += '\n';
        fmt::print(out_, "{}", answer);
        std::fflush(out_);
      }
    } else if (status == "limits_exceeded") {
      fmt::print(err_, "{}mecha: stopped: limit reached: {}{}\n", red, event.value("limit", ""),
                 reset);
    } else if (status == "cancelled") {
      fmt::print(err_, "mecha: cancelled\n");
    } else {
      fmt::print(err_, "{}mecha: error: {}{}\n", red, event.value("error", ""), reset);
    }
    const Json usage = event.value("usage", Json::object());
    std::string cost = event["cost_usd"].is_number()
                           ? fmt::format("${:.4f}", event["cost_usd"].get<double>())
                           : std::string("cost unknown");
    if (event.value("unpriced_calls", 0) > 0 && event["cost_usd"].is_number())
      cost += " + unpriced calls";
    fmt::print(err_, "{}{} turns · {} in / {} out tokens · {}{}\n", dim, event.value("turns", 0),
               usage.value("input_tokens", 0), usage.value("output_tokens", 0), cost, reset);
  }
  std::fflush(err_);
}

}  // namespace mecha::cli
