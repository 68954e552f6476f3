#include "store/record.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <ctime>

namespace mecha::store {
namespace {

constexpr std::array<std::pair<RecordKind, std::string_view>, 10> kKindNames{{
    {RecordKind::kUserMessage, "user_message"},
    {RecordKind::kAssistantMessage, "assistant_message"},
    {RecordKind::kToolCall, "tool_call"},
    {RecordKind::kToolResult, "tool_result"},
    {RecordKind::kRefusal, "refusal"},
    {RecordKind::kUsage, "usage"},
    {RecordKind::kNote, "note"},
    {RecordKind::kRunStart, "run_start"},
    {RecordKind::kRunEnd, "run_end"},
    {RecordKind::kCompaction, "compaction"},
}};

Record make(RecordKind kind, Json body) {
  Record r;
  r.kind = kind;
  r.body = std::move(body);
  return r;
}

}  // namespace

std::string_view record_kind_name(RecordKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

Result<RecordKind> record_kind_from_name(std::string_view name) {
  std::string known;
  for (const auto& [k, n] : kKindNames) {
    if (n == name) return k;
    known += known.empty() ? "" : ", ";
    known += n;
  }
  return Status::error(fmt::format("unknown record kind \"{}\" (expected one of {})", name, known));
}

Record Record::user_message(const Message& m) {
  return make(RecordKind::kUserMessage, Json{{"message", message_to_json(m)}});
}

Record Record::assistant_message(std::string_view agent, const Message& m) {
  return make(RecordKind::kAssistantMessage,
              Json{{"agent", agent}, {"message", message_to_json(m)}});
}

Record Record::tool_call(std::string_view agent, std::string_view id, std::string_view name,
                         const Json& input) {
  return make(RecordKind::kToolCall,
              Json{{"agent", agent}, {"id", id}, {"name", name}, {"input", input}});
}

Record Record::tool_result(std::string_view agent, std::string_view id, bool is_error,
                           bool untrusted, std::string_view content, bool private_data) {
  Json body{{"agent", agent},
            {"id", id},
            {"is_error", is_error},
            {"untrusted", untrusted},
            {"content", content}};
  if (private_data) body["private"] = true;
  return make(RecordKind::kToolResult, std::move(body));
}

Record Record::refusal(std::string_view agent, std::string_view id, std::string_view rule,
                       std::string_view message) {
  return make(RecordKind::kRefusal,
              Json{{"agent", agent}, {"id", id}, {"rule", rule}, {"message", message}});
}

Record Record::usage(std::string_view agent, std::string_view model, const Usage& usage,
                     std::optional<double> cost_usd) {
  return make(RecordKind::kUsage, Json{{"agent", agent},
                                       {"model", model},
                                       {"usage", usage_to_json(usage)},
                                       {"cost_usd", cost_usd ? Json(*cost_usd) : Json(nullptr)}});
}

Record Record::note(std::string_view agent, std::string_view text) {
  return make(RecordKind::kNote, Json{{"agent", agent}, {"text", text}});
}

Record Record::compaction(std::string_view agent, std::string_view trigger,
                          std::string_view summary, int64_t replaced) {
  return make(
      RecordKind::kCompaction,
      Json{{"agent", agent}, {"trigger", trigger}, {"summary", summary}, {"replaced", replaced}});
}

Record Record::run_start(Json body) { return make(RecordKind::kRunStart, std::move(body)); }
Record Record::run_end(Json body) { return make(RecordKind::kRunEnd, std::move(body)); }

bool Record::private_result() const {
  if (kind != RecordKind::kToolResult || !body.is_object()) return false;
  auto it = body.find("private");
  return it != body.end() && (!it->is_boolean() || it->get<bool>());
}

bool Record::untrusted_result() const {
  if (kind != RecordKind::kToolResult || !body.is_object()) return false;
  auto it = body.find("untrusted");
  // A result whose label is missing or unreadable counts as untrusted: never read as clean.
  return it == body.end() || !it->is_boolean() || it->get<bool>();
}

Json record_to_json(const Record& r) {
  return Json{{"seq", r.seq},
              {"at", iso8601_utc(r.at_ms)},
              {"kind", record_kind_name(r.kind)},
              {"body", r.body}};
}

int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string iso8601_utc(int64_t unix_ms) {
  std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, unix_ms % 1000);
}

}  // namespace mecha::store
