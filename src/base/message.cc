#include "base/message.h"

#include <fmt/format.h>

namespace mecha {

std::string_view role_name(Role role) { return role == Role::kUser ? "user" : "assistant"; }

Message Message::user_text(std::string text) {
  return Message{Role::kUser, {TextBlock{std::move(text)}}};
}

Message Message::mecha_note(std::string text) {
  return Message{Role::kUser, {TextBlock{std::move(text), true}}};
}

Message Message::assistant_text(std::string text) {
  return Message{Role::kAssistant, {TextBlock{std::move(text)}}};
}

std::string Message::text() const {
  std::string out;
  for (const Block& b : blocks) {
    if (const auto* t = std::get_if<TextBlock>(&b)) out += t->text;
  }
  return out;
}

std::vector<const ToolUseBlock*> Message::tool_uses() const {
  std::vector<const ToolUseBlock*> out;
  for (const Block& b : blocks) {
    if (const auto* u = std::get_if<ToolUseBlock>(&b)) out.push_back(u);
  }
  return out;
}

Usage& Usage::operator+=(const Usage& o) {
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cache_read_tokens += o.cache_read_tokens;
  cache_write_tokens += o.cache_write_tokens;
  return *this;
}

Json block_to_json(const Block& block) {
  if (const auto* t = std::get_if<TextBlock>(&block)) {
    Json j{{"type", "text"}, {"text", t->text}};
    if (t->mecha_note) j["mecha_note"] = true;
    return j;
  }
  if (const auto* u = std::get_if<ToolUseBlock>(&block)) {
    Json j{{"type", "tool_use"}, {"id", u->id}, {"name", u->name}, {"input", u->input}};
    if (!u->input_error.empty()) {
      j["raw_input"] = u->raw_input;
      j["input_error"] = u->input_error;
    }
    return j;
  }
  const auto& r = std::get<ToolResultBlock>(block);
  return Json{{"type", "tool_result"},
              {"tool_use_id", r.tool_use_id},
              {"content", r.content},
              {"is_error", r.is_error}};
}

Result<Block> block_from_json(const Json& j, const std::string& where) {
  auto obj = StrictObject::of(j, where);
  if (!obj) return obj.status();
  std::string type;
  MECHA_RETURN_IF_ERROR(obj->get("type", &type));
  if (type == "text") {
    TextBlock t;
    MECHA_RETURN_IF_ERROR(obj->get("text", &t.text));
    MECHA_RETURN_IF_ERROR(obj->get_optional("mecha_note", &t.mecha_note));
    MECHA_RETURN_IF_ERROR(obj->finish());
    return Block(std::move(t));
  }
  if (type == "tool_use") {
    ToolUseBlock u;
    MECHA_RETURN_IF_ERROR(obj->get("id", &u.id));
    MECHA_RETURN_IF_ERROR(obj->get("name", &u.name));
    MECHA_RETURN_IF_ERROR(obj->get("input", &u.input));
    if (!u.input.is_object()) {
      return Status::error(fmt::format("{}: expected an object, got {}", obj->where_of("input"),
                                       json_type_name(u.input)));
    }
    MECHA_RETURN_IF_ERROR(obj->get_optional("raw_input", &u.raw_input));
    MECHA_RETURN_IF_ERROR(obj->get_optional("input_error", &u.input_error));
    MECHA_RETURN_IF_ERROR(obj->finish());
    return Block(std::move(u));
  }
  if (type == "tool_result") {
    ToolResultBlock r;
    MECHA_RETURN_IF_ERROR(obj->get("tool_use_id", &r.tool_use_id));
    MECHA_RETURN_IF_ERROR(obj->get("content", &r.content));
    MECHA_RETURN_IF_ERROR(obj->get_optional("is_error", &r.is_error));
    MECHA_RETURN_IF_ERROR(obj->finish());
    return Block(std::move(r));
  }
  return Status::error(fmt::format(
      "{}.type: unknown block type \"{}\" (expected text, tool_use or tool_result)", where, type));
}

Json message_to_json(const Message& m) {
  Json blocks = Json::array();
  for (const Block& b : m.blocks) blocks.push_back(block_to_json(b));
  return Json{{"role", role_name(m.role)}, {"content", std::move(blocks)}};
}

Result<Message> message_from_json(const Json& j, const std::string& where) {
  auto obj = StrictObject::of(j, where);
  if (!obj) return obj.status();
  std::string role;
  MECHA_RETURN_IF_ERROR(obj->get("role", &role));
  Message m;
  if (role == "user") {
    m.role = Role::kUser;
  } else if (role == "assistant") {
    m.role = Role::kAssistant;
  } else {
    return Status::error(
        fmt::format("{}.role: unknown role \"{}\" (expected user or assistant)", where, role));
  }
  auto blocks = content_from_json(*obj);
  if (!blocks) return blocks.status();
  m.blocks = std::move(*blocks);
  MECHA_RETURN_IF_ERROR(obj->finish());
  return m;
}

Result<std::vector<Block>> content_from_json(StrictObject& obj) {
  const Json* content = obj.find("content");
  if (content == nullptr) {
    return Status::error(fmt::format("{}: missing field \"content\"", obj.where()));
  }
  if (!content->is_array()) {
    return Status::error(fmt::format("{}: expected an array, got {}", obj.where_of("content"),
                                     json_type_name(*content)));
  }
  std::vector<Block> blocks;
  for (size_t i = 0; i < content->size(); ++i) {
    auto b = block_from_json((*content)[i], fmt::format("{}[{}]", obj.where_of("content"), i));
    if (!b) return b.status();
    blocks.push_back(std::move(*b));
  }
  return blocks;
}

Json usage_to_json(const Usage& u) {
  Json j{{"input_tokens", u.input_tokens}, {"output_tokens", u.output_tokens}};
  if (u.cache_read_tokens) j["cache_read_tokens"] = u.cache_read_tokens;
  if (u.cache_write_tokens) j["cache_write_tokens"] = u.cache_write_tokens;
  return j;
}

Result<Usage> usage_from_json(const Json& j, const std::string& where) {
  auto obj = StrictObject::of(j, where);
  if (!obj) return obj.status();
  Usage u;
  MECHA_RETURN_IF_ERROR(obj->get_optional("input_tokens", &u.input_tokens));
  MECHA_RETURN_IF_ERROR(obj->get_optional("output_tokens", &u.output_tokens));
  MECHA_RETURN_IF_ERROR(obj->get_optional("cache_read_tokens", &u.cache_read_tokens));
  MECHA_RETURN_IF_ERROR(obj->get_optional("cache_write_tokens", &u.cache_write_tokens));
  // The names Anthropic's API uses, accepted so a recorded usage object can be pasted in.
  MECHA_RETURN_IF_ERROR(obj->get_optional("cache_read_input_tokens", &u.cache_read_tokens));
  MECHA_RETURN_IF_ERROR(obj->get_optional("cache_creation_input_tokens", &u.cache_write_tokens));
  MECHA_RETURN_IF_ERROR(obj->finish());
  for (auto [key, count] :
       {std::pair{"input_tokens", u.input_tokens}, std::pair{"output_tokens", u.output_tokens},
        std::pair{"cache_read_tokens", u.cache_read_tokens},
        std::pair{"cache_write_tokens", u.cache_write_tokens}}) {
    if (count < 0 || count > kMaxTokenCount) {
      return Status::error(fmt::format("{}.{}: {} is not a token count (an integer from 0 to {})",
                                       where, key, count, kMaxTokenCount));
    }
  }
  return u;
}

}  // namespace mecha
