#include "tools/builtin.h"

namespace mecha::tools {

Status add_builtin_tools(const config::Config& /*config*/, ToolRegistry& /*registry*/) {
  return ok_status();
}

}  // namespace mecha::tools
