#include "cli/gateway/browser_events.h"

#include <fmt/format.h>

#include "agent/call_summary.h"
#include "base/json_limits.h"
#include "base/text.h"
#include "cli/gateway/markdown.h"
#include "wire/codec.h"

namespace mecha::gateway {
namespace {

// What one tool result or input may put on the page; the rest is in the session's log.
constexpr size_t kMaxShownBytes = 64 * 1024;
// Past this a reply is shown as plain text: cmark 0.30.2 takes time quadratic in some
// inputs ("![[]()" repeated: 0.1 s at 64 KB, 80 s at 1 MB), and a reply is the model's,
// which an injection may write.
constexpr size_t kMaxMarkdownBytes = 64 * 1024;
// And past this it is cut: the page and the session's event log hold what a person reads.
constexpr size_t kMaxPlainReplyBytes = 1024 * 1024;

Json usage_json(const Usage& u) {
  return Json{{"input_tokens", u.input_tokens},
              {"output_tokens", u.output_tokens},
              {"cache_read_tokens", u.cache_read_tokens},
              {"cache_write_tokens", u.cache_write_tokens}};
}

Json nullable(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

std::string shown_text(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}\n… {} more bytes not shown", text.substr(0, cut), text.size() - cut);
}

void BrowserEvents::begin_history() {
  in_history_ = true;
  untrusted_ = false;
}

Json BrowserEvents::text_event(const ShownText& t, bool untrusted) const {
  // Plain text has no links to defang: the browser shows it as text.
  std::string html =
      t.text.size() <= kMaxMarkdownBytes
          ? render_markdown(t.text, untrusted)
          : "<pre>" + escape_markup(shown_text(replace_invalid_utf8(t.text), kMaxPlainReplyBytes)) +
                "</pre>\n";
  return Json{{"type", "text"},          {"key", t.key},           {"agent", t.agent},
              {"html", std::move(html)}, {"untrusted", untrusted}, {"parent", t.parent}};
}

std::vector<Json> BrowserEvents::on_frame(const wire::Frame& frame) {
  std::vector<Json> out;
  if (const auto* o = std::get_if<wire::Opened>(&frame)) {
    session_untrusted_ = o->untrusted;
    untrusted_ = untrusted_ || o->untrusted;
    out.push_back(Json{{"type", "opened"},
                       {"id", o->session_id},
                       {"resumed", o->resumed},
                       {"untrusted", o->untrusted}});
  } else if (const auto* p = std::get_if<wire::PastTurn>(&frame)) {
    trusted_texts_.clear();
    out.push_back(Json{{"type", "user"}, {"text", p->text}, {"past", true}});
  } else if (const auto* u = std::get_if<wire::UserTurn>(&frame)) {
    trusted_texts_.clear();
    out.push_back(Json{{"type", "user"}, {"text", u->text}, {"past", false}});
  } else if (const auto* d = std::get_if<wire::TextDelta>(&frame)) {
    out.push_back(Json{{"type", "delta"}, {"agent", d->agent}, {"text", d->delta}});
  } else if (const auto* a = std::get_if<wire::ApprovalRequest>(&frame)) {
    out.push_back(Json{{"type", "approval"},
                       {"request_id", a->request_id},
                       {"action", a->action},
                       {"agent", a->agent},
                       {"tool", a->tool},
                       {"input", shown_text(dump_json(a->input, 2), kMaxShownBytes)},
                       {"reason", a->reason},
                       {"timeout_ms", a->timeout_ms}});
  } else if (const auto* t = std::get_if<wire::TurnDone>(&frame)) {
    untrusted_ = untrusted_ || t->untrusted;
    if (t->untrusted) {
      for (const ShownText& shown : trusted_texts_) out.push_back(text_event(shown, true));
    }
    trusted_texts_.clear();
    out.push_back(
        Json{{"type", "turn_done"}, {"untrusted", t->untrusted}, {"usage", usage_json(t->usage)}});
  } else if (const auto* e = std::get_if<wire::Error>(&frame)) {
    out.push_back(Json{{"type", "error"}, {"code", e->code}, {"message", e->message}});
  } else if (const auto* c = std::get_if<wire::CostReport>(&frame)) {
    out.push_back(Json{{"type", "cost"},
                       {"cost_usd", nullable(c->cost_usd)},
                       {"unpriced_calls", c->unpriced_calls},
                       {"usage", usage_json(c->usage)},
                       {"budget",
                        {{"max_cost_usd", nullable(c->max_cost_usd)},
                         {"max_turns", c->max_turns ? Json(*c->max_turns) : Json(nullptr)},
                         {"max_time_s", nullable(c->max_time_s)}}}});
  } else if (std::holds_alternative<wire::HistoryDone>(frame)) {
    in_history_ = false;
    untrusted_ = untrusted_ || session_untrusted_;
    trusted_texts_.clear();
    out.push_back(Json{{"type", "history_done"}});
  } else {
    on_event(frame, nullptr, &out);
  }
  return out;
}

void BrowserEvents::on_event(const wire::Frame& frame, const Json& parent, std::vector<Json>* out) {
  if (const auto* t = std::get_if<wire::Text>(&frame)) {
    ShownText shown{fmt::format("k{}", next_key_++), t->agent, t->text, parent};
    out->push_back(text_event(shown, untrusted_));
    if (!untrusted_) trusted_texts_.push_back(std::move(shown));
  } else if (const auto* c = std::get_if<wire::ToolCall>(&frame)) {
    out->push_back(
        Json{{"type", "tool_call"},
             {"agent", c->agent},
             {"id", c->id},
             {"name", c->name},
             {"label", fmt::format("{}({})", c->name, agent::key_argument(c->name, c->input, 100))},
             {"input", shown_text(dump_json(c->input, 2), kMaxShownBytes)},
             {"parent", parent}});
  } else if (const auto* r = std::get_if<wire::ToolResult>(&frame)) {
    if (r->untrusted) untrusted_ = true;
    out->push_back(Json{{"type", "tool_result"},
                        {"agent", r->agent},
                        {"id", r->id},
                        {"is_error", r->is_error},
                        {"untrusted", r->untrusted},
                        {"content", shown_text(r->content, kMaxShownBytes)},
                        {"parent", parent}});
  } else if (const auto* r = std::get_if<wire::Refusal>(&frame)) {
    out->push_back(Json{{"type", "refusal"},
                        {"agent", r->agent},
                        {"id", r->id},
                        {"rule", r->rule},
                        {"message", r->message},
                        {"parent", parent}});
  } else if (const auto* n = std::get_if<wire::Note>(&frame)) {
    out->push_back(
        Json{{"type", "note"}, {"agent", n->agent}, {"text", n->text}, {"parent", parent}});
  } else if (const auto* n = std::get_if<wire::Nested>(&frame)) {
    // The innermost wrapper's call is the parent: nested work folds under the call that ran it.
    auto inner = wire::decode_event(n->event, "nested.event");
    if (!inner) {
      out->push_back(Json{{"type", "note"},
                          {"agent", "mecha"},
                          {"text", "a subagent's event could not be read: " + inner.message()},
                          {"parent", n->id}});
      return;
    }
    on_event(*inner, Json(n->id), out);
  }
}

}  // namespace mecha::gateway
