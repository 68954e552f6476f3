#include "config/loop_config.h"

#include <fmt/format.h>

#include <cmath>

#include "config/section_readers.h"
#include "config/toml_reader.h"

namespace mecha::config {

int64_t default_context_window(std::string_view model) {
  auto has = [&](std::string_view part) { return model.find(part) != std::string_view::npos; };
  if (has("claude")) return 200'000;
  if (has("gpt-4.1")) return 1'047'576;
  if (has("gpt-5")) return 400'000;
  if (has("gpt-4o") || model.starts_with("o1") || model.starts_with("o3") ||
      model.starts_with("o4"))
    return 128'000;
  return 32'768;
}

int64_t context_window_for(const CompactionConfig& config, int64_t provider_window,
                           std::string_view model) {
  if (provider_window > 0) return provider_window;
  if (auto it = config.context_windows.find(std::string(model)); it != config.context_windows.end())
    return it->second;
  if (config.context_window > 0) return config.context_window;
  return default_context_window(model);
}

namespace {

constexpr int64_t kMaxWindow = 100'000'000;

}  // namespace

Status read_tools(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[tools]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[tools]");
  ToolsConfig& c = config->tools;
  MECHA_RETURN_IF_ERROR(r.get("parallel_bash", &c.parallel_bash));
  MECHA_RETURN_IF_ERROR(r.get("parallel_writes", &c.parallel_writes));
  MECHA_RETURN_IF_ERROR(r.get_in_range("max_parallel", &c.max_parallel, 1, 64));
  return r.finish();
}

Status read_compaction(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[compaction]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[compaction]");
  CompactionConfig& c = config->compaction;
  MECHA_RETURN_IF_ERROR(r.get("enabled", &c.enabled));
  MECHA_RETURN_IF_ERROR(r.get("threshold", &c.threshold));
  if (r.node("threshold") != nullptr && !(c.threshold >= 0.1 && c.threshold <= 0.99))
    return r.error_at("threshold",
                      fmt::format("must be a fraction of the context window from 0.1 to 0.99, "
                                  "not {}",
                                  c.threshold));
  MECHA_RETURN_IF_ERROR(r.get_in_range("context_window", &c.context_window, 1024, kMaxWindow));
  MECHA_RETURN_IF_ERROR(r.get_in_range("keep_recent_turns", &c.keep_recent_turns, 0, 20));
  if (const toml::node* windows = r.node("context_windows")) {
    auto w = table_of(*windows, reading.file, "[compaction.context_windows]");
    if (!w) return w.status();
    for (const auto& [model, _] : **w) {
      TableReader one(**w, reading.file, "[compaction.context_windows]");
      int64_t tokens = 0;
      const std::string key(model.str());
      MECHA_RETURN_IF_ERROR(one.get_in_range(key.c_str(), &tokens, 1024, kMaxWindow));
      c.context_windows[key] = tokens;
    }
  }
  return r.finish();
}

Status read_loop(const toml::node& value, const Reading& reading, Config* config) {
  auto t = table_of(value, reading.file, "[loop]");
  if (!t) return t.status();
  TableReader r(**t, reading.file, "[loop]");
  LoopConfig& c = config->loop;
  MECHA_RETURN_IF_ERROR(r.get_in_range("note_after", &c.note_after, 2, 1000));
  MECHA_RETURN_IF_ERROR(r.get_in_range("withhold_after", &c.withhold_after, 2, 1000));
  MECHA_RETURN_IF_ERROR(r.get_in_range("fresh_context_after", &c.fresh_context_after, 2, 1000));
  MECHA_RETURN_IF_ERROR(r.get_in_range("stuck_after", &c.stuck_after, 2, 1000));
  MECHA_RETURN_IF_ERROR(r.finish());
  if (!reading.whole) return ok_status();
  if (!(c.note_after < c.withhold_after && c.withhold_after < c.fresh_context_after &&
        c.fresh_context_after < c.stuck_after)) {
    return r.error(fmt::format(
        "needs note_after < withhold_after < fresh_context_after < stuck_after (each rung "
        "after the one before), not {} < {} < {} < {}",
        c.note_after, c.withhold_after, c.fresh_context_after, c.stuck_after));
  }
  return ok_status();
}

}  // namespace mecha::config
