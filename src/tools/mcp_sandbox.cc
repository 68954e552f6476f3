#include "tools/mcp_sandbox.h"

#include <unistd.h>

#include <fmt/format.h>

#include "base/state_dir.h"
#include "guard/path_model.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInsideHome = "/tmp/mecha-home";

// Whether `program` can be run with `env`'s PATH: a path that is an executable file, or a
// name found in one of PATH's folders.
bool findable(const std::string& program, const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// What must live as long as the server: the seccomp filter's descriptor and its cgroup.
struct Held {
  SandboxedCommand command;
};

}  // namespace

mcp::Launcher mcp_sandbox_launcher(const config::McpServerConfig& server, const fs::path& work_tree,
                                   const McpSandbox& sandbox,
                                   std::shared_ptr<BoundarySlot> boundary) {
  if (!sandbox.enabled || !server.sandbox || server.transport != config::McpTransport::kStdio)
    return nullptr;
  return [server, work_tree, sandbox,
          boundary](const mcp::ChildOptions& plain) -> Result<mcp::Launch> {
    const std::string where = fmt::format("MCP server \"{}\"", server.name);
    if (Status s = sandbox_available(); !s.ok()) {
      return Status::error(fmt::format(
          "{}: {}; it was not started (set sandbox = false for it in ~/.config/mecha/config.toml "
          "to run it on the host)",
          where, s.message()));
    }
    auto state = private_state_dir();
    if (!state.ok()) return Status::error(fmt::format("{}: {}", where, state.message()));
    const fs::path home = *state / "mcp-homes" / server.name;
    MECHA_RETURN_IF_ERROR(make_private_dir(home));
    auto opened = boundary->open(work_tree, sandbox.masks);
    if (!opened.ok()) return Status::error(fmt::format("{}: {}", where, opened.message()));
    std::shared_ptr<TreeBoundary> b = *opened;

    std::vector<SandboxBind> binds = b->binds();
    const std::string user_home = home_directory();
    for (const std::string& p : server.paths) {
      const std::string path = guard::expand_home(p, user_home);
      std::error_code ec;
      if (!fs::exists(path, ec)) {
        return Status::error(fmt::format("{}: paths names {}, which does not exist", where, path));
      }
      binds.push_back({path, path, SandboxBind::Kind::kWritable});
    }
    binds.push_back({home.string(), kInsideHome, SandboxBind::Kind::kWritable});

    BashSettings settings = sandbox.settings;
    settings.network = server.network;
    const std::string tree = work_tree.string();
    const std::string cwd = plain.cwd.empty() ? tree : plain.cwd.string();
    std::vector<std::string> env = command_environment(settings);
    // A command that is not there is said as it was without the sandbox, not as bwrap's
    // exit: looked up in the PATH the sandbox gives it.
    if (!findable(plain.argv.front(), env)) {
      return Status::error(
          fmt::format("cannot run '{}' in {}: No such file or directory", plain.argv.front(), cwd));
    }
    auto command = sandbox_command(settings, tree, hidden_paths(tree, user_home, sandbox.secrets),
                                   binds, plain.argv, -1, cwd);
    if (!command.ok()) return Status::error(fmt::format("{}: {}", where, command.message()));
    MECHA_RETURN_IF_ERROR(b->begin());
    auto held = std::make_shared<Held>();
    held->command = std::move(*command);

    mcp::Launch launch;
    launch.options.argv = held->command.options.argv;
    launch.options.cwd = tree;
    std::erase_if(env, [](const std::string& e) { return e.rfind("HOME=", 0) == 0; });
    env.push_back(std::string("HOME=") + kInsideHome);
    for (const auto& [name, value] : server.env) {
      const std::string prefix = name + "=";
      std::erase_if(env, [&prefix](const std::string& e) { return e.rfind(prefix, 0) == 0; });
      env.push_back(prefix + value);
    }
    launch.options.env = std::move(env);
    launch.options.pass_fds = held->command.options.pass_fds;
    launch.hold = held;
    launch.ended = [b] { b->end_quietly(); };
    return launch;
  };
}

}  // namespace mecha::tools
