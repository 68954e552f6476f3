#include "providers/cassette.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace mecha::providers {
namespace {

constexpr std::string_view kTopLevelAgent = "main";

Result<std::vector<std::string>> read_string_list(StrictObject& obj, std::string_view key) {
  std::vector<std::string> out;
  const Json* v = obj.find(key);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    return Status::error(fmt::format("{}: expected an array of strings, got {}", obj.where_of(key),
                                     json_type_name(*v)));
  }
  for (const auto& x : *v) {
    if (!x.is_string()) {
      return Status::error(fmt::format("{}: expected an array of strings, found {}",
                                       obj.where_of(key), json_type_name(x)));
    }
    out.push_back(x.get<std::string>());
  }
  return out;
}

Result<CassetteExpect> parse_expect(const Json& j, const std::string& where) {
  auto obj = StrictObject::of(j, where);
  if (!obj) return obj.status();
  CassetteExpect e;
  if (obj->has("last_tool_result_contains")) {
    std::string s;
    MECHA_RETURN_IF_ERROR(obj->get("last_tool_result_contains", &s));
    e.last_tool_result_contains = s;
  }
  if (obj->has("first_message_contains")) {
    std::string s;
    MECHA_RETURN_IF_ERROR(obj->get("first_message_contains", &s));
    e.first_message_contains = s;
  }
  auto inc = read_string_list(*obj, "tools_include");
  if (!inc) return inc.status();
  e.tools_include = std::move(*inc);
  auto exc = read_string_list(*obj, "tools_exclude");
  if (!exc) return exc.status();
  e.tools_exclude = std::move(*exc);
  // One string, or a list of them.
  if (obj->has("system_contains")) {
    const Json& sc = *obj->find("system_contains");
    if (sc.is_string()) {
      e.system_contains.push_back(sc.get<std::string>());
    } else if (sc.is_array()) {
      auto sys = read_string_list(*obj, "system_contains");
      if (!sys) return sys.status();
      e.system_contains = std::move(*sys);
    } else {
      return Status::error(fmt::format("{}: expected a string or an array of strings, got {}",
                                       obj->where_of("system_contains"), json_type_name(sc)));
    }
  }
  MECHA_RETURN_IF_ERROR(obj->finish());
  return e;
}

Result<CompletionResponse> parse_response(const Json& j, const std::string& where) {
  auto obj = StrictObject::of(j, where);
  if (!obj) return obj.status();
  CompletionResponse r;
  r.message.role = Role::kAssistant;
  auto blocks = content_from_json(*obj);
  if (!blocks) return blocks.status();
  for (size_t i = 0; i < blocks->size(); ++i) {
    Block& b = (*blocks)[i];
    if (std::holds_alternative<ToolResultBlock>(b)) {
      return Status::error(fmt::format("{}[{}]: a model response cannot hold a tool_result",
                                       obj->where_of("content"), i));
    }
    if (auto* u = std::get_if<ToolUseBlock>(&b); u && !u->input_error.empty()) {
      ++r.malformed_tool_args;
    }
    r.message.blocks.push_back(std::move(b));
  }
  MECHA_RETURN_IF_ERROR(obj->get_optional("stop_reason", &r.stop_reason));
  if (r.stop_reason.empty())
    r.stop_reason = r.message.tool_uses().empty() ? "end_turn" : "tool_use";
  if (const Json* u = obj->find("usage")) {
    auto usage = usage_from_json(*u, obj->where_of("usage"));
    if (!usage) return usage.status();
    r.usage = *usage;
  }
  r.model = "cassette";
  MECHA_RETURN_IF_ERROR(obj->get_optional("model", &r.model));
  MECHA_RETURN_IF_ERROR(obj->finish());
  return r;
}

const ToolResultBlock* last_tool_result(const std::vector<Message>& messages) {
  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
    for (auto b = m->blocks.rbegin(); b != m->blocks.rend(); ++b) {
      if (const auto* r = std::get_if<ToolResultBlock>(&*b)) return r;
    }
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<CassetteProvider>> CassetteProvider::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("cannot open cassette {}: {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

Result<std::unique_ptr<CassetteProvider>> CassetteProvider::parse(std::string_view text,
                                                                  const std::string& name) {
  std::vector<CassetteLine> lines;
  bool header_seen = false;
  int number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::string where = fmt::format("{}:{}", name, number);
    auto j = parse_json(raw, where);
    if (!j) return j.status();
    auto obj = StrictObject::of(*j, where);
    if (!obj) return obj.status();
    if (!header_seen) {
      int64_t version = 0;
      Status st = obj->get("mecha_cassette", &version);
      if (!st.ok()) {
        return Status::error(
            fmt::format("{}: the first line must be the header {{\"mecha_cassette\": 1}} ({})",
                        where, st.message()));
      }
      if (version != 1) {
        return Status::error(
            fmt::format("{}: cassette version {} is not supported (this mecha reads version 1)",
                        where, version));
      }
      std::string note;
      MECHA_RETURN_IF_ERROR(obj->get_optional("note", &note));
      MECHA_RETURN_IF_ERROR(obj->finish());
      header_seen = true;
      continue;
    }
    CassetteLine line;
    line.line_number = number;
    MECHA_RETURN_IF_ERROR(obj->get_optional("agent", &line.agent));
    const Json* resp = obj->find("response");
    if (resp == nullptr) return Status::error(fmt::format("{}: missing field \"response\"", where));
    auto r = parse_response(*resp, where + ": response");
    if (!r) return r.status();
    line.response = std::move(*r);
    if (const Json* e = obj->find("expect")) {
      auto ex = parse_expect(*e, where + ": expect");
      if (!ex) return ex.status();
      line.expect = std::move(*ex);
    }
    MECHA_RETURN_IF_ERROR(obj->finish());
    lines.push_back(std::move(line));
  }
  if (!header_seen) {
    return Status::error(fmt::format("{}: empty cassette (no header line)", name));
  }
  return std::unique_ptr<CassetteProvider>(new CassetteProvider(name, std::move(lines)));
}

Status CassetteProvider::check(const CassetteLine& line, const CompletionRequest& request) const {
  if (!line.expect) return ok_status();
  const CassetteExpect& e = *line.expect;
  std::string where = fmt::format("{}:{}", name_, line.line_number);
  if (e.last_tool_result_contains) {
    const ToolResultBlock* r = last_tool_result(request.messages);
    if (r == nullptr) {
      return Status::error(fmt::format(
          "{}: expectation failed: last_tool_result_contains \"{}\", but the request has no tool "
          "result",
          where, *e.last_tool_result_contains));
    }
    if (r->content.find(*e.last_tool_result_contains) == std::string::npos) {
      std::string shown = r->content.size() > 300 ? r->content.substr(0, 300) + "..." : r->content;
      return Status::error(fmt::format(
          "{}: expectation failed: last_tool_result_contains \"{}\", but the last tool result "
          "was: {}",
          where, *e.last_tool_result_contains, shown));
    }
  }
  if (e.first_message_contains) {
    const std::string first = request.messages.empty() ? "" : request.messages[0].text();
    if (first.find(*e.first_message_contains) == std::string::npos) {
      std::string shown = first.size() > 300 ? first.substr(0, 300) + "..." : first;
      return Status::error(fmt::format(
          "{}: expectation failed: first_message_contains \"{}\", but the first message was: {}",
          where, *e.first_message_contains, shown.empty() ? "(none)" : shown));
    }
  }
  std::vector<std::string> offered;
  for (const auto& t : request.tools) offered.push_back(t.name);
  auto offered_has = [&](const std::string& n) {
    return std::find(offered.begin(), offered.end(), n) != offered.end();
  };
  for (const auto& n : e.tools_include) {
    if (!offered_has(n)) {
      return Status::error(
          fmt::format("{}: expectation failed: tools_include \"{}\", but the request offered [{}]",
                      where, n, fmt::join(offered, ", ")));
    }
  }
  for (const auto& n : e.tools_exclude) {
    if (offered_has(n)) {
      return Status::error(fmt::format(
          "{}: expectation failed: tools_exclude \"{}\", but the request offered it", where, n));
    }
  }
  for (const auto& text : e.system_contains) {
    if (request.system.find(text) == std::string::npos) {
      std::string shown =
          request.system.size() > 300 ? request.system.substr(0, 300) + "..." : request.system;
      return Status::error(fmt::format(
          "{}: expectation failed: system_contains \"{}\", but the system prompt was: {}", where,
          text, shown.empty() ? "(none)" : shown));
    }
  }
  return ok_status();
}

Result<CompletionResponse> CassetteProvider::complete(const CompletionRequest& request,
                                                      StreamSink* sink) {
  if (request.cancel && request.cancel->cancelled()) return Status::cancelled();
  const std::string asker = request.top_level ? std::string(kTopLevelAgent) : request.agent;
  const CassetteLine* line = nullptr;
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = ++asked_[asker];
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (drawn_lines_[i]) continue;
      const std::string& owner = lines_[i].agent;
      if (owner == asker || (request.top_level && !has_main_lines_ && owner == request.agent)) {
        drawn_lines_[i] = true;
        line = &lines_[i];
        break;
      }
    }
  }
  if (line == nullptr) {
    return Status::error(
        fmt::format("cassette exhausted: agent {} asked for response {}", asker, n));
  }
  MECHA_RETURN_IF_ERROR(check(*line, request));
  if (sink) {
    for (const Block& b : line->response.message.blocks) {
      if (const auto* t = std::get_if<TextBlock>(&b)) sink->on_text_delta(request.agent, t->text);
    }
  }
  return line->response;
}

Json cassette_line_json(const std::string& agent, const CompletionResponse& response) {
  Json content = Json::array();
  for (const Block& b : response.message.blocks) content.push_back(block_to_json(b));
  Json resp{{"content", std::move(content)},
            {"stop_reason", response.stop_reason},
            {"usage", usage_to_json(response.usage)}};
  if (!response.model.empty()) resp["model"] = response.model;
  return Json{{"agent", agent}, {"response", std::move(resp)}};
}

}  // namespace mecha::providers
