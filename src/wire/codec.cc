#include "wire/codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "base/json_limits.h"

namespace mecha::wire {
namespace {

// ---- field readers beyond StrictObject's scalars ----

Status get_object(StrictObject& o, std::string_view key, Json* out) {
  MECHA_RETURN_IF_ERROR(o.get(key, out));
  if (!out->is_object()) {
    return Status::error(
        fmt::format("{}: expected an object, got {}", o.where_of(key), json_type_name(*out)));
  }
  return ok_status();
}

Status read_usage(StrictObject& parent, std::string_view key, Usage* out) {
  Json j;
  MECHA_RETURN_IF_ERROR(get_object(parent, key, &j));
  auto o = StrictObject::of(j, parent.where_of(key));
  if (!o) return o.status();
  MECHA_RETURN_IF_ERROR(o->get("input_tokens", &out->input_tokens));
  MECHA_RETURN_IF_ERROR(o->get("output_tokens", &out->output_tokens));
  MECHA_RETURN_IF_ERROR(o->get("cache_read_tokens", &out->cache_read_tokens));
  MECHA_RETURN_IF_ERROR(o->get("cache_write_tokens", &out->cache_write_tokens));
  return o->finish();
}

Json usage_json(const Usage& u) {
  return Json{{"input_tokens", u.input_tokens},
              {"output_tokens", u.output_tokens},
              {"cache_read_tokens", u.cache_read_tokens},
              {"cache_write_tokens", u.cache_write_tokens}};
}

// A required field whose value is a number or null.
Status get_nullable(StrictObject& o, std::string_view key, std::optional<double>* out) {
  const Json* v = o.find(key);
  if (v == nullptr) return Status::error(fmt::format("{}: missing field \"{}\"", o.where(), key));
  if (v->is_null()) {
    out->reset();
    return ok_status();
  }
  if (!v->is_number()) {
    return Status::error(
        fmt::format("{}: expected a number or null, got {}", o.where_of(key), json_type_name(*v)));
  }
  *out = v->get<double>();
  return ok_status();
}

Json nullable(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// A required field whose value is an integer or null.
Status get_nullable(StrictObject& o, std::string_view key, std::optional<int64_t>* out) {
  const Json* v = o.find(key);
  if (v == nullptr) return Status::error(fmt::format("{}: missing field \"{}\"", o.where(), key));
  if (v->is_null()) {
    out->reset();
    return ok_status();
  }
  if (!v->is_number_integer()) {
    return Status::error(fmt::format("{}: expected an integer or null, got {}", o.where_of(key),
                                     json_type_name(*v)));
  }
  *out = v->get<int64_t>();
  return ok_status();
}

Json nullable(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

// ---- one reader and one writer per body ----

Status read(StrictObject& o, Hello* b) {
  MECHA_RETURN_IF_ERROR(o.get("protocol_version", &b->protocol_version));
  return o.get("software", &b->software);
}
Json write(const Hello& b) {
  return {{"protocol_version", b.protocol_version}, {"software", b.software}};
}

Status read(StrictObject& o, Open* b) { return o.get_optional("session_id", &b->session_id); }
Json write(const Open& b) { return {{"session_id", b.session_id}}; }

Status read(StrictObject& o, Opened* b) {
  MECHA_RETURN_IF_ERROR(o.get("session_id", &b->session_id));
  MECHA_RETURN_IF_ERROR(o.get("resumed", &b->resumed));
  MECHA_RETURN_IF_ERROR(o.get("records", &b->records));
  return o.get("untrusted", &b->untrusted);
}
Json write(const Opened& b) {
  return {{"session_id", b.session_id},
          {"resumed", b.resumed},
          {"records", b.records},
          {"untrusted", b.untrusted}};
}

Status read(StrictObject& o, UserTurn* b) { return o.get("text", &b->text); }
Json write(const UserTurn& b) { return {{"text", b.text}}; }

Status read(StrictObject& o, TextDelta* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  return o.get("delta", &b->delta);
}
Json write(const TextDelta& b) { return {{"agent", b.agent}, {"delta", b.delta}}; }

Status read(StrictObject& o, Text* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  return o.get("text", &b->text);
}
Json write(const Text& b) { return {{"agent", b.agent}, {"text", b.text}}; }

Status read(StrictObject& o, ToolCall* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  MECHA_RETURN_IF_ERROR(o.get("id", &b->id));
  MECHA_RETURN_IF_ERROR(o.get("name", &b->name));
  return get_object(o, "input", &b->input);
}
Json write(const ToolCall& b) {
  return {{"agent", b.agent}, {"id", b.id}, {"name", b.name}, {"input", b.input}};
}

Status read(StrictObject& o, ToolResult* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  MECHA_RETURN_IF_ERROR(o.get("id", &b->id));
  MECHA_RETURN_IF_ERROR(o.get("is_error", &b->is_error));
  MECHA_RETURN_IF_ERROR(o.get("untrusted", &b->untrusted));
  MECHA_RETURN_IF_ERROR(o.get("private", &b->private_data));
  return o.get("content", &b->content);
}
Json write(const ToolResult& b) {
  return {{"agent", b.agent},          {"id", b.id},
          {"is_error", b.is_error},    {"untrusted", b.untrusted},
          {"private", b.private_data}, {"content", b.content}};
}

Status read(StrictObject& o, Refusal* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  MECHA_RETURN_IF_ERROR(o.get("id", &b->id));
  MECHA_RETURN_IF_ERROR(o.get("rule", &b->rule));
  return o.get("message", &b->message);
}
Json write(const Refusal& b) {
  return {{"agent", b.agent}, {"id", b.id}, {"rule", b.rule}, {"message", b.message}};
}

Status read(StrictObject& o, Note* b) {
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  return o.get("text", &b->text);
}
Json write(const Note& b) { return {{"agent", b.agent}, {"text", b.text}}; }

Status read(StrictObject& o, Nested* b) {
  MECHA_RETURN_IF_ERROR(o.get("tool", &b->tool));
  MECHA_RETURN_IF_ERROR(o.get("id", &b->id));
  Json event;
  MECHA_RETURN_IF_ERROR(get_object(o, "event", &event));
  // Read strictly, then kept in its written (canonical) form.
  auto inner = decode_event(event, o.where_of("event"));
  if (!inner) return inner.status();
  b->event = event_to_json(*inner);
  return ok_status();
}
Json write(const Nested& b) { return {{"tool", b.tool}, {"id", b.id}, {"event", b.event}}; }

Status read(StrictObject& o, ApprovalRequest* b) {
  MECHA_RETURN_IF_ERROR(o.get("request_id", &b->request_id));
  MECHA_RETURN_IF_ERROR(o.get("action", &b->action));
  MECHA_RETURN_IF_ERROR(o.get("agent", &b->agent));
  MECHA_RETURN_IF_ERROR(o.get("tool", &b->tool));
  MECHA_RETURN_IF_ERROR(get_object(o, "input", &b->input));
  MECHA_RETURN_IF_ERROR(o.get("reason", &b->reason));
  return o.get("timeout_ms", &b->timeout_ms);
}
Json write(const ApprovalRequest& b) {
  return {{"request_id", b.request_id}, {"action", b.action},
          {"agent", b.agent},           {"tool", b.tool},
          {"input", b.input},           {"reason", b.reason},
          {"timeout_ms", b.timeout_ms}};
}

Status read(StrictObject& o, ApprovalAnswer* b) {
  MECHA_RETURN_IF_ERROR(o.get("request_id", &b->request_id));
  MECHA_RETURN_IF_ERROR(o.get("approved", &b->approved));
  return o.get_optional("always", &b->always);
}
Json write(const ApprovalAnswer& b) {
  return {{"request_id", b.request_id}, {"approved", b.approved}, {"always", b.always}};
}

Status read(StrictObject& o, TurnDone* b) {
  MECHA_RETURN_IF_ERROR(o.get("content", &b->content));
  MECHA_RETURN_IF_ERROR(read_usage(o, "usage", &b->usage));
  return o.get("untrusted", &b->untrusted);
}
Json write(const TurnDone& b) {
  return {{"content", b.content}, {"usage", usage_json(b.usage)}, {"untrusted", b.untrusted}};
}

Status read(StrictObject& o, Error* b) {
  MECHA_RETURN_IF_ERROR(o.get("code", &b->code));
  return o.get("message", &b->message);
}
Json write(const Error& b) { return {{"code", b.code}, {"message", b.message}}; }

Status read(StrictObject&, Cancel*) { return ok_status(); }
Json write(const Cancel&) { return Json::object(); }

Status read(StrictObject&, ListSessions*) { return ok_status(); }
Json write(const ListSessions&) { return Json::object(); }

Status read(StrictObject& o, Sessions* b) {
  Json list;
  MECHA_RETURN_IF_ERROR(o.get("sessions", &list));
  if (!list.is_array()) {
    return Status::error(
        fmt::format("{}: expected an array, got {}", o.where_of("sessions"), json_type_name(list)));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    auto s = StrictObject::of(list[i], fmt::format("{}[{}]", o.where_of("sessions"), i));
    if (!s) return s.status();
    SessionSummary sum;
    MECHA_RETURN_IF_ERROR(s->get("session_id", &sum.session_id));
    MECHA_RETURN_IF_ERROR(s->get("title", &sum.title));
    MECHA_RETURN_IF_ERROR(s->get("started_ms", &sum.started_ms));
    MECHA_RETURN_IF_ERROR(s->get("updated_ms", &sum.updated_ms));
    MECHA_RETURN_IF_ERROR(s->get("records", &sum.records));
    MECHA_RETURN_IF_ERROR(s->get("turns", &sum.turns));
    MECHA_RETURN_IF_ERROR(get_nullable(*s, "cost_usd", &sum.cost_usd));
    MECHA_RETURN_IF_ERROR(s->get("untrusted", &sum.untrusted));
    MECHA_RETURN_IF_ERROR(s->get("attached", &sum.attached));
    MECHA_RETURN_IF_ERROR(s->finish());
    b->sessions.push_back(std::move(sum));
  }
  return ok_status();
}
Json write(const Sessions& b) {
  Json list = Json::array();
  for (const auto& s : b.sessions) {
    list.push_back({{"session_id", s.session_id},
                    {"title", s.title},
                    {"started_ms", s.started_ms},
                    {"updated_ms", s.updated_ms},
                    {"records", s.records},
                    {"turns", s.turns},
                    {"cost_usd", nullable(s.cost_usd)},
                    {"untrusted", s.untrusted},
                    {"attached", s.attached}});
  }
  return {{"sessions", std::move(list)}};
}

Status read(StrictObject&, CostQuery*) { return ok_status(); }
Json write(const CostQuery&) { return Json::object(); }

Status read(StrictObject& o, CostReport* b) {
  MECHA_RETURN_IF_ERROR(o.get("session_id", &b->session_id));
  MECHA_RETURN_IF_ERROR(read_usage(o, "usage", &b->usage));
  MECHA_RETURN_IF_ERROR(get_nullable(o, "cost_usd", &b->cost_usd));
  MECHA_RETURN_IF_ERROR(o.get("unpriced_calls", &b->unpriced_calls));
  MECHA_RETURN_IF_ERROR(get_nullable(o, "max_cost_usd", &b->max_cost_usd));
  MECHA_RETURN_IF_ERROR(get_nullable(o, "max_turns", &b->max_turns));
  return get_nullable(o, "max_time_s", &b->max_time_s);
}
Json write(const CostReport& b) {
  return {{"session_id", b.session_id},
          {"usage", usage_json(b.usage)},
          {"cost_usd", nullable(b.cost_usd)},
          {"unpriced_calls", b.unpriced_calls},
          {"max_cost_usd", nullable(b.max_cost_usd)},
          {"max_turns", nullable(b.max_turns)},
          {"max_time_s", nullable(b.max_time_s)}};
}

Status read(StrictObject&, History*) { return ok_status(); }
Json write(const History&) { return Json::object(); }

Status read(StrictObject& o, PastTurn* b) {
  MECHA_RETURN_IF_ERROR(o.get("text", &b->text));
  return o.get("at_ms", &b->at_ms);
}
Json write(const PastTurn& b) { return {{"text", b.text}, {"at_ms", b.at_ms}}; }

Status read(StrictObject& o, HistoryDone* b) { return o.get("turns", &b->turns); }
Json write(const HistoryDone& b) { return {{"turns", b.turns}}; }

// ---- dispatch by kind ----

using BodyReader = Result<Frame> (*)(StrictObject&);

template <class T>
Result<Frame> read_as(StrictObject& o) {
  T body;
  MECHA_RETURN_IF_ERROR(read(o, &body));
  MECHA_RETURN_IF_ERROR(o.finish());
  return Frame(std::move(body));
}

struct KindEntry {
  std::string_view kind;
  BodyReader reader;
  bool event;  // one of the events of a run
};

template <class... Ts>
constexpr auto make_table(std::variant<Ts...>*) {
  return std::array<KindEntry, sizeof...(Ts)>{KindEntry{Ts::kKind, &read_as<Ts>, false}...};
}

const auto& kind_table() {
  static const auto table = [] {
    auto t = make_table(static_cast<Frame*>(nullptr));
    for (auto& e : t) {
      for (std::string_view ev : {Text::kKind, ToolCall::kKind, ToolResult::kKind, Refusal::kKind,
                                  Note::kKind, Nested::kKind}) {
        if (e.kind == ev) e.event = true;
      }
    }
    return t;
  }();
  return table;
}

std::string kind_list(bool events_only) {
  std::string out;
  for (const auto& e : kind_table()) {
    if (events_only && !e.event) continue;
    if (!out.empty()) out += ", ";
    out += e.kind;
  }
  return out;
}

const KindEntry* find_kind(std::string_view kind) {
  for (const auto& e : kind_table()) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string_view> frame_kinds() {
  std::vector<std::string_view> out;
  for (const auto& e : kind_table()) out.push_back(e.kind);
  return out;
}

Json body_to_json(const Frame& frame) {
  return std::visit([](const auto& body) { return write(body); }, frame);
}

Json frame_to_json(const Frame& frame) {
  return Json{{"kind", kind_of(frame)}, {"body", body_to_json(frame)}};
}

std::string encode_frame(const Frame& frame) {
  // Text from tools and models may hold any bytes: invalid UTF-8 becomes U+FFFD, never a throw.
  std::string line = dump_json(frame_to_json(frame));
  line += '\n';
  return line;
}

Result<Frame> decode_body(std::string_view kind, const Json& body) {
  const KindEntry* entry = find_kind(kind);
  if (entry == nullptr) {
    return Status::error(fmt::format("frame.kind: unknown kind \"{}\" (expected one of {})", kind,
                                     kind_list(false)));
  }
  auto o = StrictObject::of(body, std::string(kind));
  if (!o) return o.status();
  return entry->reader(*o);
}

Result<Frame> decode_event(const Json& event, const std::string& where) {
  auto o = StrictObject::of(event, where);
  if (!o) return o.status();
  std::string type;
  MECHA_RETURN_IF_ERROR(o->get("type", &type));
  const KindEntry* entry = find_kind(type);
  if (entry == nullptr || !entry->event) {
    return Status::error(fmt::format("{}.type: unknown event type \"{}\" (expected one of {})",
                                     where, type, kind_list(true)));
  }
  return entry->reader(*o);
}

Json event_to_json(const Frame& frame) {
  Json j{{"type", kind_of(frame)}};
  j.update(body_to_json(frame));
  return j;
}

namespace {

// The library's message without its "[json.exception.<name>.<id>] " prefix.
std::string_view library_reason(const Json::exception& e) {
  std::string_view what = e.what();
  if (size_t end = what.find("] "); what.starts_with("[json.exception.") && end != what.npos) {
    what.remove_prefix(end + 2);
  }
  return what;
}

Decoded decode_checked(std::string_view line, const Limits& limits) {
  Decoded out;
  auto refuse = [&](std::string_view code, std::string message) {
    out.error = Error{std::string(code), std::move(message)};
    return out;
  };
  if (line.size() > limits.max_frame_bytes) {
    return refuse(codes::kFrameTooLarge,
                  fmt::format("frame of {} bytes refused: the limit is {} bytes", line.size(),
                              limits.max_frame_bytes));
  }
  if (json_depth(line, limits.max_depth) > limits.max_depth) {
    return refuse(codes::kTooDeep,
                  fmt::format("frame refused: nested deeper than {} levels", limits.max_depth));
  }
  auto parsed = parse_json(line, "frame");
  if (!parsed) return refuse(codes::kBadFrame, parsed.message());
  auto envelope = StrictObject::of(*parsed, "frame");
  if (!envelope) return refuse(codes::kBadFrame, envelope.message());
  std::string kind;
  Json body;
  Status s = envelope->get("kind", &kind);
  if (s.ok()) s = get_object(*envelope, "body", &body);
  if (s.ok()) s = envelope->finish();
  if (!s.ok()) return refuse(codes::kBadFrame, s.message());
  auto frame = decode_body(kind, body);
  if (!frame) return refuse(codes::kBadFrame, frame.message());
  out.frame = std::move(*frame);
  return out;
}

}  // namespace

Decoded decode_frame(std::string_view line, const Limits& limits) {
  // The edge where a peer's bytes meet the library: whatever it throws (a number past a
  // double's range such as 1e400, ill-formed UTF-8, a type it cannot convert) is a refusal.
  try {
    return decode_checked(line, limits);
  } catch (const Json::exception& e) {
    Decoded out;
    out.error = Error{std::string(codes::kBadFrame),
                      fmt::format("frame: invalid JSON: {}", library_reason(e))};
    return out;
  }
}

int json_value_depth(const Json& value, int stop_after) {
  // Iterative: a value nested 80,000 levels deep is measured without deep recursion.
  std::vector<std::pair<const Json*, int>> todo{{&value, 0}};
  int deepest = 0;
  while (!todo.empty()) {
    auto [j, above] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    const int depth = above + 1;
    deepest = std::max(deepest, depth);
    if (deepest > stop_after) return deepest;
    for (const Json& child : *j) todo.emplace_back(&child, depth);
  }
  return deepest;
}

}  // namespace mecha::wire
