#include "tools/builtin.h"

#include <memory>
#include <vector>

#include "guard/policy.h"
#include "tools/background_shell_tools.h"
#include "tools/bash_tool.h"
#include "tools/edit_tool.h"
#include "tools/glob_tool.h"
#include "tools/grep_tool.h"
#include "tools/mail_tools.h"
#include "tools/memory_tools.h"
#include "tools/read_tool.h"
#include "tools/send_message_tool.h"
#include "tools/todo_write_tool.h"
#include "tools/web_fetch_tool.h"
#include "tools/web_search_tool.h"
#include "tools/write_tool.h"

namespace mecha::tools {
namespace {

std::vector<ToolSource>& tool_sources() {
  static std::vector<ToolSource> sources;
  return sources;
}

}  // namespace

void add_tool_source(ToolSource source) { tool_sources().push_back(std::move(source)); }

Status add_builtin_tools(const config::Config& config, ToolRegistry& registry) {
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<ReadTool>()));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<WriteTool>()));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<EditTool>()));
  auto bash = BashTool::create(config);
  if (!bash) return bash.status();
  const BashSettings bash_settings = (*bash)->settings();
  // Grep and Glob run ripgrep inside the boundary Bash's commands run in (ripgrep.h).
  SearchSandbox search{bash_settings.sandbox, bash_settings, guard::default_secrets()};
  search.secrets.insert(search.secrets.end(), config.guard.secrets.begin(),
                        config.guard.secrets.end());
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<GlobTool>(search)));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<GrepTool>(search)));
  MECHA_RETURN_IF_ERROR(registry.add(std::move(*bash)));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<BashOutputTool>(bash_settings)));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<KillShellTool>()));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<WebFetchTool>(config.web)));
  MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<TodoWriteTool>()));
  if (!config.web.search.backend.empty()) {
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<WebSearchTool>(config.web)));
  }
  if (config.mail.maildir) {
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<ReadInboxTool>(*config.mail.maildir)));
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<ReadMessageTool>(*config.mail.maildir)));
  }
  if (!config.messaging.backend.empty()) {
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<SendMessageTool>(config.messaging)));
  }
  if (config.memory.enabled) {
    auto notes = std::make_shared<NoteStoreHandle>(config.memory.file);
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<RememberTool>(notes)));
    MECHA_RETURN_IF_ERROR(registry.add(std::make_shared<RecallTool>(notes)));
  }
  for (const ToolSource& source : tool_sources()) MECHA_RETURN_IF_ERROR(source(config, registry));
  return ok_status();
}

}  // namespace mecha::tools
