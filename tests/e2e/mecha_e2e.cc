// build/mecha-e2e: the mecha command line with three test tools added, for end-to-end tests
// of the trifecta interlock through a real process, its session store and its events. The
// real web, memory and messaging tools come later; until then these stand in for them:
//   FetchPage    untrusted_input: returns an attacker's instructions, marked external
//   ReadNotes    private_data: returns the user's private notes
//   SendMessage  external_send: appends each call that runs to sent.jsonl in the work tree;
//                left out when [messaging] backend is set, where the real SendMessage is
// Only tests build and run this binary; `mecha` itself registers no tools of this kind.
#include "agent/testing/test_tools.h"
#include "cli/app.h"
#include "tools/builtin.h"

int main(int argc, char** argv) {
  using namespace mecha;
  tools::add_tool_source([](const config::Config& config, tools::ToolRegistry& registry) -> Status {
    MECHA_RETURN_IF_ERROR(registry.add(agent::testing::untrusted_reader("FetchPage")));
    MECHA_RETURN_IF_ERROR(registry.add(agent::testing::private_reader("ReadNotes")));
    if (!config.messaging.backend.empty()) return ok_status();
    return registry.add(agent::testing::send_tool("SendMessage", "sent.jsonl"));
  });
  return cli::run_app(argc, argv);
}
