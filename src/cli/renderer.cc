#include "cli/renderer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

#include <fmt/format.h>

#include "cli/todo_view.h"

namespace mecha::cli {
namespace {

constexpr size_t kDiffLines = 6;
constexpr size_t kBashLines = 4;
constexpr const char* kWaitingForModel = "waiting for the model";

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

// mecha ignores SIGPIPE (app.cc), so a reader of its output that went away (`| head -1`)
// shows as EPIPE here. End as the signal would have ended us, rather than run on, spending
// turns, for nobody.
void end_if_reader_gone(std::FILE* f) {
  if (std::fflush(f) == 0 || errno != EPIPE) return;
  std::signal(SIGPIPE, SIG_DFL);
  std::raise(SIGPIPE);
}

}  // namespace

void JsonLinesSink::on_event(const agent::Event& event) {
  if (std::holds_alternative<agent::TextDeltaEvent>(agent::innermost(event).kind())) return;
  std::string line = dump_json(to_json(event));
  std::lock_guard<std::mutex> lock(mu_);
  std::fputs(line.c_str(), out_);
  std::fputc('\n', out_);
  end_if_reader_gone(out_);
}

HumanRenderer::Options HumanRenderer::for_terminal(int err_fd, int out_fd) {
  Options o;
  o.stream = o.spinner = isatty(err_fd) == 1;
  o.color = color_wanted(err_fd);
  struct stat se {
  }, so{};
  o.answer_shown = o.stream && isatty(out_fd) == 1 && fstat(err_fd, &se) == 0 &&
                   fstat(out_fd, &so) == 0 && se.st_rdev == so.st_rdev;
  return o;
}

HumanRenderer::HumanRenderer(std::FILE* err, std::FILE* out, Options options)
    : err_(err), out_(out), opt_(std::move(options)), p_(Palette::of(opt_.color)) {
  if (opt_.spinner) spinner_ = std::make_unique<Spinner>(err_, opt_.color);
}

HumanRenderer::~HumanRenderer() = default;

void HumanRenderer::waiting_for_model() {
  std::lock_guard<std::mutex> lock(mu_);
  wait_for(kWaitingForModel);
  if (spinner_) spinner_->show(wait_label_, true);
}

void HumanRenderer::pause_spinner() {
  std::lock_guard<std::mutex> lock(mu_);
  wait_label_.clear();
  if (spinner_) spinner_->hide();
}

void HumanRenderer::wait_for(std::string label) {
  restart_clock_ = label != wait_label_ || restart_clock_;
  wait_label_ = std::move(label);
}

void HumanRenderer::on_event(const agent::Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spinner_) spinner_->hide();
  restart_clock_ = false;
  render(event, 0);
  end_if_reader_gone(err_);
  end_if_reader_gone(out_);
  // The spinner never interrupts a line of streamed text.
  const bool mid_text = !streamed_.empty();
  if (spinner_ && !wait_label_.empty() && !mid_text) spinner_->show(wait_label_, restart_clock_);
}

void HumanRenderer::flush_pending(int depth) {
  if (pending_text_.empty()) return;
  std::string indent(depth * 2, ' ');
  std::string body = printable(pending_text_);
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
  // Streamed text ends where the next line of ours begins.
  auto end_stream = [&] {
    const std::string rest = stream_text_.finish();
    std::fwrite(rest.data(), 1, rest.size(), err_);
    if (!streamed_.empty() && streamed_.back() != '\n') std::fputc('\n', err_);
    streamed_.clear();
  };
  std::visit(
      agent::Overloaded{
          [&](const agent::NestedEvent& e) { render(*e.event, depth + 1); },
          [&](const agent::TextDeltaEvent& e) {
            if (!opt_.stream || depth > 0 || e.agent != opt_.top_agent) return;
            streamed_ += e.delta;
            std::string shown = stream_text_.feed(e.delta);
            std::fwrite(shown.data(), 1, shown.size(), err_);
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
            const std::string key = e.agent + "/" + e.id;
            const std::string argument = printable(key_argument(e.name, e.input, 100));
            calls_[key] = {e.name, fmt::format("{}({})", printable(e.name), argument)};
            last_call_[depth] = key;
            if (e.name == "TodoWrite") {
              if (auto list = todo_checklist(e.input, indent + "    ", p_)) {
                fmt::print(err_, "{}{}● TodoWrite{}\n{}", indent, p_.bold, p_.reset, *list);
                wait_for(printable_line(e.name));  // the model named it
                return;
              }
            }
            fmt::print(err_, "{}{}● {}{}({})\n", indent, p_.bold, printable(e.name), p_.reset,
                       argument);
            std::fputs(diff_preview(e.name, e.input, indent + "    ", kDiffLines, p_).c_str(),
                       err_);
            wait_for(printable_line(e.name));  // the model named it
          },
          [&](const agent::ToolResultEvent& e) {
            render_result(e, depth);
            wait_for(kWaitingForModel);
          },
          [&](const agent::RefusalEvent& e) {
            const std::string key = e.agent + "/" + e.id;
            std::string owner;
            if (auto found = calls_.find(key); found != calls_.end()) {
              if (key != last_call_[depth]) owner = found->second.label + ": ";
              calls_.erase(found);
            }
            last_call_.erase(depth);
            refused_.insert(key);
            std::string why = first_line(e.message, 160);
            fmt::print(err_, "{}  {}⎿ {}refused by rule '{}'{}{}{}\n", indent, p_.magenta, owner,
                       printable(e.rule), why.empty() ? "" : ": ", printable(why), p_.reset);
            wait_for(kWaitingForModel);
          },
          [&](const agent::NoteEvent& e) {
            fmt::print(err_, "{}{}note: {}{}\n", indent, p_.dim, printable(e.text), p_.reset);
          },
          [&](const agent::ApprovalRequest& e) {
            // rule_of_two holds a call that is neither a send nor asked by a rule: say what.
            const std::string what = e.kind == agent::ApprovalKind::kStateChange
                                         ? "a change of state by"
                                         : std::string(agent::approval_kind_name(e.kind));
            fmt::print(err_, "{}{}asking to allow {} '{}': {}{}\n", indent, p_.dim, what,
                       printable(e.tool), printable(e.reason), p_.reset);
            // The call as it will run, whole: the tool_call line above is cut at a width, and
            // a PreToolUse hook may have changed the input since.
            fmt::print(err_, "{}  {}\n", indent, printable(approval_subject(e.input)));
            wait_label_.clear();  // a person answers now, not the model
          },
          [&](const agent::UsageEvent&) {},
          [&](const agent::CompactionEvent& e) {
            fmt::print(err_, "{}{}{}{}\n", indent, p_.dim, printable(agent::compaction_note(e)),
                       p_.reset);
          },
          [&](const agent::LoopEvent& e) {
            fmt::print(err_, "{}{}loop: {}{}\n", indent, p_.yellow, printable(e.message), p_.reset);
          },
          [&](const agent::DoneEvent& e) {
            const bool streamed = !streamed_.empty();
            end_stream();
            render_done(e, streamed);
            wait_label_.clear();
          },
      },
      event.kind());
}

void HumanRenderer::render_result(const agent::ToolResultEvent& e, int depth) {
  const std::string indent(depth * 2, ' ');
  const std::string key = e.agent + "/" + e.id;
  // A refused call's error result says again what its refusal said.
  if (e.is_error && refused_.erase(key) > 0) return;
  ShownCall shown;
  if (auto found = calls_.find(key); found != calls_.end()) {
    shown = std::move(found->second);
    calls_.erase(found);
  }
  // A result right under its call needs no name; one that lands below other calls of its
  // level (calls made at once) says again which call it answers.
  const std::string owner =
      key == last_call_[depth] || shown.label.empty() ? "" : fmt::format("{}: ", shown.label);
  last_call_.erase(depth);
  // The checklist drawn for the call says it all.
  if (shown.name == "TodoWrite" && !e.is_error) return;
  std::string labels;
  if (e.untrusted) labels += fmt::format(", {}untrusted{}", p_.yellow, p_.reset);
  if (e.private_data) labels += fmt::format(", {}private data{}", p_.yellow, p_.reset);
  if (e.is_error) {
    fmt::print(err_, "{}  {}⎿ {}error: {}{}{}\n", indent, p_.red, owner,
               printable(first_line(e.content, 160)), p_.reset, labels);
  } else if (shown.name == "Bash") {
    std::string preview =
        head_preview(printable(e.content), indent + "  ⎿ " + owner, indent + "    ", kBashLines);
    fmt::print(err_, "{}{}{}", p_.dim, preview, p_.reset);
    if (!labels.empty()) fmt::print(err_, "{}    ({}){}\n", indent, labels.substr(2), p_.reset);
  } else {
    fmt::print(err_, "{}  {}⎿ {}{} ({}){}{}\n", indent, p_.dim, owner,
               count_of(static_cast<long long>(count_lines(e.content)), "line", "lines"),
               human_size(e.content.size()), p_.reset, labels);
  }
}

void HumanRenderer::render_done(const agent::DoneEvent& e, bool streamed) {
  const agent::Outcome& o = e.outcome;
  std::string answer = o.text;
  pending_text_.clear();
  switch (o.status) {
    case agent::RunStatus::kCompleted:
      // The answer is for a person wherever stdout goes (a file, a pager, a CI log is read
      // on a terminal later); --json is for programs.
      if (!(streamed && opt_.answer_shown)) {
        if (!answer.empty() && answer.back() != '\n') answer += '\n';
        write_printable(out_, answer);
        std::fflush(out_);
      }
      break;
    case agent::RunStatus::kLimitsExceeded:
      fmt::print(err_, "{}mecha: stopped: limit reached: {}{}\n", p_.red, printable(o.limit),
                 p_.reset);
      break;
    case agent::RunStatus::kCancelled:
      fmt::print(err_, "{}mecha: cancelled{}\n", p_.yellow, p_.reset);
      break;
    case agent::RunStatus::kError:
      fmt::print(err_, "{}mecha: error: {}{}\n", p_.red, printable(o.error), p_.reset);
      break;
    case agent::RunStatus::kStuck:
      fmt::print(err_, "{}mecha: stopped: stuck in a loop: {}{}\n", p_.red, printable(o.stuck),
                 p_.reset);
      break;
  }
  if (!opt_.summary) return;
  std::string cost = o.cost_usd ? fmt::format("${:.4f}", *o.cost_usd) : std::string("cost unknown");
  if (o.unpriced_calls > 0 && o.cost_usd) cost += " + unpriced calls";
  fmt::print(err_, "{}{} · {} in / {} out tokens · {}{}\n", p_.dim,
             count_of(o.turns, "turn", "turns"), o.usage.input_tokens, o.usage.output_tokens, cost,
             p_.reset);
}

}  // namespace mecha::cli
