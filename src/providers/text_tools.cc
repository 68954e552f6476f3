#include "providers/text_tools.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <vector>

namespace mecha::providers {
namespace {

constexpr std::string_view kDefaultToolsPrompt =
    R"(# How you act

You have tools, but no tool calls: you act by writing exactly one action in each reply, as one fenced code block, after your reasoning:

- a ```bash block holding a shell command; it runs with the Bash tool, and its output and exit code come back in the next message;
- or a ```json block naming another tool, with an input that matches its schema:
```json
{"tool": "Read", "input": {"file_path": "/path/to/file"}}
```

Write no other ```bash or ```json block in a reply: a reply with no action, or with more than one, is refused and you are asked again.

When the task is done and you have checked your work, submit: run a command whose output starts with the line {{submit_marker}}, followed by your final answer, for example
```bash
echo {{submit_marker}} && echo "The failing test now passes: ..."
```
Nothing runs after a submission.

# The tools

{{tools}})";

constexpr std::string_view kDefaultObservation =
    R"(Result of {{tool}} (is_error: {{is_error}}, return code: {{returncode}}):
<output>
{{output}}
</output>)";

constexpr std::string_view kDefaultFormatError =
    R"(Your reply was not in the required format: {{error}} (finish_reason: {{finish_reason}}).

Reply with exactly one action: one ```bash block holding one command, or one ```json block {"tool": "NAME", "input": {...}}. When the task is done, run a command whose output starts with the line {{submit_marker}}, followed by your final answer.)";

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// A fence opens with at least three backticks after up to three spaces (CommonMark); the
// count of backticks, 0 when the line opens none.
size_t fence_ticks(std::string_view line) {
  size_t indent = 0;
  while (indent < line.size() && indent < 3 && line[indent] == ' ') ++indent;
  size_t n = 0;
  while (indent + n < line.size() && line[indent + n] == '`') ++n;
  return n >= 3 ? n : 0;
}

struct Fence {
  std::string lang;  // the info string's first word, lower case
  std::string body;
  bool closed = false;
};

// Every fenced block of the text, in order. Blocks do not nest: inside one, only its closing
// fence (as many backticks or more, nothing else on the line) ends it.
std::vector<Fence> fences(std::string_view text) {
  std::vector<Fence> out;
  std::vector<std::string_view> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t ticks = fence_ticks(lines[i]);
    if (ticks == 0) continue;
    std::string_view info = trim(trim(lines[i]).substr(ticks));
    if (info.find('`') != std::string_view::npos) continue;  // inline code, not a fence
    Fence f;
    f.lang = std::string(info.substr(0, info.find_first_of(" \t{")));
    for (char& c : f.lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string body;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      std::string_view t = trim(lines[j]);
      if (t.size() >= ticks && t.find_first_not_of('`') == std::string_view::npos) {
        f.closed = true;
        break;
      }
      body += lines[j];
      body += '\n';
    }
    if (!body.empty()) body.pop_back();
    f.body = std::move(body);
    out.push_back(std::move(f));
    i = j;
  }
  return out;
}

bool is_bash(const std::string& lang) { return lang == "bash" || lang == "sh" || lang == "shell"; }

std::string cut_note(std::string_view stop_reason) {
  return stop_reason == "max_tokens"
             ? "; the reply was cut off at the output token limit, so write less before the "
               "block"
             : "";
}

ParsedReply from_json_block(const std::string& body) {
  ParsedReply r;
  auto j = parse_json(body, "the ```json block");
  if (!j) {
    r.error = fmt::format("{} (write {{\"tool\": \"NAME\", \"input\": {{...}}}})", j.message());
    return r;
  }
  if (!j->is_object()) {
    r.error = fmt::format(
        "the ```json block must be an object {{\"tool\": \"NAME\", \"input\": {{...}}}}, not {}",
        json_type_name(*j));
    return r;
  }
  for (const auto& [key, _] : j->items()) {
    if (key != "tool" && key != "input") {
      r.error = fmt::format(
          "the ```json block has the key '{}'; it takes only \"tool\" and \"input\"", key);
      return r;
    }
  }
  if (!j->contains("tool") || !(*j)["tool"].is_string() ||
      (*j)["tool"].get<std::string>().empty()) {
    r.error = "the ```json block needs \"tool\": the name of a tool, as a string";
    return r;
  }
  TextAction a;
  a.tool = (*j)["tool"].get<std::string>();
  if (j->contains("input")) {
    if (!(*j)["input"].is_object()) {
      r.error = fmt::format("the ```json block's \"input\" must be an object, not {}",
                            json_type_name((*j)["input"]));
      return r;
    }
    a.input = (*j)["input"];
  }
  r.action = std::move(a);
  return r;
}

// The return code a result reports: Bash's "Exit code: N" line, else 1 for an error and 0.
std::string returncode_of(const ToolResultBlock& r) {
  constexpr std::string_view kExit = "Exit code: ";
  size_t at = r.content.rfind(kExit);
  while (at != std::string::npos && at != 0 && r.content[at - 1] != '\n') {
    at = r.content.rfind(kExit, at - 1);
  }
  if (at != std::string::npos) {
    const char* first = r.content.data() + at + kExit.size();
    int code = 0;
    auto [end, ec] = std::from_chars(first, r.content.data() + r.content.size(), code);
    if (ec == std::errc() && end != first) return std::to_string(code);
  }
  return r.is_error ? "1" : "0";
}

// The final answer a Bash output submits: what follows the marker line, when the first
// line that is not blank is exactly the marker.
std::optional<std::string> submission_of(const std::string& content) {
  std::string_view rest = content;
  size_t start = rest.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(start);
  size_t nl = rest.find('\n');
  if (trim(rest.substr(0, nl)) != kSubmitMarker) return std::nullopt;
  std::string answer(nl == std::string_view::npos ? "" : rest.substr(nl + 1));
  // Bash appends "Exit code: N" on a line of its own; it is not part of the answer.
  size_t last = answer.rfind("Exit code: ");
  if (last != std::string::npos && (last == 0 || answer[last - 1] == '\n') &&
      answer.find('\n', last) == std::string::npos) {
    answer.resize(last);
  }
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
  return answer;
}

std::string fenced_call(const ToolUseBlock& use) {
  if (use.name == "Bash" && use.input.is_object() && use.input.contains("command") &&
      use.input["command"].is_string()) {
    return fmt::format("```bash\n{}\n```", use.input["command"].get<std::string>());
  }
  Json call = {{"tool", use.name}, {"input", use.input}};
  return fmt::format("```json\n{}\n```", dump_json(call));
}

std::string tools_listing(const std::vector<ToolSpec>& tools) {
  std::string out;
  for (const auto& t : tools) {
    if (!out.empty()) out += "\n\n";
    out += fmt::format("## {}\n{}\nInput schema: {}", t.name, t.description,
                       dump_json(t.input_schema));
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

TextProtocol TextProtocol::defaults() {
  return {std::string(kDefaultToolsPrompt), std::string(kDefaultObservation),
          std::string(kDefaultFormatError)};
}

TextProtocol TextProtocol::from_config(const config::ProviderConfig& cfg) {
  TextProtocol p = defaults();
  if (!cfg.tools_prompt_template.empty()) p.tools_prompt_template = cfg.tools_prompt_template;
  if (!cfg.observation_template.empty()) p.observation_template = cfg.observation_template;
  if (!cfg.format_error_template.empty()) p.format_error_template = cfg.format_error_template;
  return p;
}

ParsedReply parse_text_reply(std::string_view text, std::string_view stop_reason) {
  ParsedReply r;
  std::vector<Fence> actions;
  for (Fence& f : fences(text)) {
    if (is_bash(f.lang) || f.lang == "json") actions.push_back(std::move(f));
  }
  if (actions.empty()) {
    r.error = trim(text).empty() ? "the reply is empty: it has no action"
                                 : "the reply has no action (no ```bash or ```json block)";
    r.error += cut_note(stop_reason);
    return r;
  }
  if (actions.size() > 1) {
    r.error = fmt::format(
        "the reply has {} actions (```bash or ```json blocks); exactly one is allowed per "
        "reply",
        actions.size());
    return r;
  }
  const Fence& f = actions.front();
  if (!f.closed) {
    r.error =
        fmt::format("the ```{} block is not closed with ```{}", f.lang, cut_note(stop_reason));
    return r;
  }
  if (f.lang == "json") return from_json_block(f.body);
  if (trim(f.body).empty()) {
    r.error = "the ```bash block is empty: it needs a command";
    return r;
  }
  r.action = TextAction{"Bash", Json{{"command", f.body}}};
  return r;
}

std::string render_text_template(std::string_view tmpl,
                                 const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t at = tmpl.find("{{", pos);
    if (at == std::string_view::npos) break;
    size_t end = tmpl.find("}}", at + 2);
    if (end == std::string_view::npos) break;
    auto it = values.find(std::string(tmpl.substr(at + 2, end - at - 2)));
    out.append(tmpl.substr(pos, at - pos));
    if (it == values.end()) {
      out.append(tmpl.substr(at, end + 2 - at));
    } else {
      out += it->second;
    }
    pos = end + 2;
  }
  out.append(tmpl.substr(pos));
  return out;
}

TextToolsProvider::TextToolsProvider(std::shared_ptr<Provider> inner, TextProtocol protocol)
    : inner_(std::move(inner)), protocol_(std::move(protocol)) {}

CompletionRequest TextToolsProvider::wire_request(const CompletionRequest& request) const {
  CompletionRequest wire;
  wire.agent = request.agent;
  wire.top_level = request.top_level;
  wire.max_tokens = request.max_tokens;
  wire.cancel = request.cancel;
  const std::string marker(kSubmitMarker);
  std::string tools_prompt =
      render_text_template(protocol_.tools_prompt_template,
                           {{"tools", tools_listing(request.tools)}, {"submit_marker", marker}});
  wire.system = request.system.empty() ? tools_prompt : request.system + "\n\n" + tools_prompt;

  std::map<std::string, const ToolUseBlock*> uses;
  for (const Message& m : request.messages) {
    Message folded{m.role, {}};
    std::vector<std::string> parts;
    for (const Block& b : m.blocks) {
      if (const auto* t = std::get_if<TextBlock>(&b)) {
        if (!t->text.empty()) parts.push_back(t->text);
      } else if (const auto* u = std::get_if<ToolUseBlock>(&b)) {
        uses[u->id] = u;
        // The adapter's own calls are already in the text as the model wrote them.
        if (!starts_with(u->id, kTextCallIdPrefix) &&
            !starts_with(u->id, kTextFormatErrorIdPrefix)) {
          parts.push_back(fenced_call(*u));
        }
      } else if (const auto* r = std::get_if<ToolResultBlock>(&b)) {
        auto it = uses.find(r->tool_use_id);
        const ToolUseBlock* use = it == uses.end() ? nullptr : it->second;
        if (starts_with(r->tool_use_id, kTextFormatErrorIdPrefix) && use) {
          parts.push_back(render_text_template(protocol_.format_error_template,
                                               {{"error", use->input_error},
                                                {"finish_reason", use->raw_input},
                                                {"submit_marker", marker}}));
        } else {
          parts.push_back(render_text_template(protocol_.observation_template,
                                               {{"tool", use ? use->name : std::string("the tool")},
                                                {"output", r->content},
                                                {"is_error", r->is_error ? "true" : "false"},
                                                {"returncode", returncode_of(*r)}}));
        }
      }
    }
    std::string text;
    for (const auto& p : parts) text += (text.empty() ? "" : "\n\n") + p;
    // An API refuses an empty turn, and dropping it would leave two user turns in a row.
    if (text.empty() && m.role == Role::kAssistant) text = "(an empty reply)";
    folded.blocks.push_back(TextBlock{std::move(text)});
    wire.messages.push_back(std::move(folded));
  }
  return wire;
}

Result<CompletionResponse> TextToolsProvider::complete(const CompletionRequest& request,
                                                       StreamSink* sink) {
  if (request.tools.empty()) return inner_->complete(request, sink);

  // A submission ends the run without another model call.
  if (request.messages.size() >= 2 && request.messages.back().role == Role::kUser) {
    const Message& asked = request.messages[request.messages.size() - 2];
    for (const Block& b : request.messages.back().blocks) {
      const auto* r = std::get_if<ToolResultBlock>(&b);
      if (r == nullptr || r->is_error) continue;
      bool from_bash = false;
      for (const ToolUseBlock* u : asked.tool_uses())
        from_bash |= u->id == r->tool_use_id && u->name == "Bash";
      if (!from_bash) continue;
      if (auto answer = submission_of(r->content)) {
        CompletionResponse done;
        done.message = Message::assistant_text(std::move(*answer));
        done.stop_reason = "end_turn";
        done.model = inner_->model();
        return done;
      }
    }
  }

  auto resp = inner_->complete(wire_request(request), sink);
  if (!resp) return resp.status();
  // The model was offered no native tools; a call it makes anyway has no pairing on the
  // wire, so only its text is kept.
  std::string text = resp->message.text();
  int calls = 0;
  for (const Message& m : request.messages) calls += static_cast<int>(m.tool_uses().size());
  const std::string n = std::to_string(calls + 1);

  ParsedReply parsed = parse_text_reply(text, resp->stop_reason);
  CompletionResponse out;
  out.model = resp->model;
  out.usage = resp->usage;
  out.usage_error = resp->usage_error;
  out.stop_reason = resp->stop_reason == "max_tokens" ? resp->stop_reason : "tool_use";
  out.message.role = Role::kAssistant;
  if (!text.empty()) out.message.blocks.push_back(TextBlock{text});
  ToolUseBlock use;
  if (parsed.action) {
    use.id = std::string(kTextCallIdPrefix) + n;
    use.name = parsed.action->tool;
    use.input = std::move(parsed.action->input);
  } else {
    use.id = std::string(kTextFormatErrorIdPrefix) + n;
    use.name = request.tools.front().name;
    for (const auto& t : request.tools) {
      if (t.name == "Bash") use.name = t.name;
    }
    use.input_error = parsed.error;
    use.raw_input = resp->stop_reason.empty() ? "unknown" : resp->stop_reason;
    out.malformed_tool_args = 1;
  }
  out.message.blocks.push_back(std::move(use));
  return out;
}

}  // namespace mecha::providers
