#include "tools/bash_tool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <system_error>

#include "base/state_dir.h"
#include "base/subprocess.h"
#include "config/config.h"
#include "guard/path_model.h"
#include "tools/background_shells.h"
#include "tools/bash_output.h"
#include "tools/persistent_shell.h"
#include "tools/shell_pool.h"
#include "tools/tree_boundary.h"

namespace mecha::tools {
namespace {

std::string seconds(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return fmt::format("{} s", ms.count() / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

// Where the next command starts: `cwd` (what the shell reported, or kept) when it is a folder
// inside the tree, canonical; otherwise the tree, with a note for the model when `cwd` was
// set (a command left the tree, or the folder is gone).
std::string shell_directory(const std::string& cwd, const std::string& tree, std::string& notes) {
  if (cwd.empty() || cwd == tree) return tree;
  std::error_code ec;
  auto canonical = std::filesystem::canonical(cwd, ec);
  if (!ec && std::filesystem::is_directory(canonical, ec) &&
      guard::within(canonical.string(), tree))
    return canonical.string();
  if (notes.find("Shell cwd was reset") == std::string::npos)
    notes += fmt::format("\nShell cwd was reset to {}", tree);
  return tree;
}

}  // namespace

BashTool::BashTool(guard::CommandGuard guard, BashSettings settings)
    : settings_(std::move(settings)) {
  std::promise<Result<guard::CommandGuard>> ready;
  ready.set_value(std::move(guard));
  guard_ = ready.get_future().share();
}

Result<std::shared_ptr<BashTool>> BashTool::create(const config::Config& config) {
  BashSettings settings = bash_settings(config.bash, config.sandbox);
  std::error_code ec;
  // With the sandbox on and no network, a network command is refused as one that cannot
  // work; without the sandbox the guard cannot know, and assumes a network.
  const bool network = !settings.sandbox || settings.network;
  auto build = [guard_config = config.guard, tree = std::filesystem::current_path(ec).string(),
                home = home_directory(), network]() -> Result<guard::CommandGuard> {
    auto policy = guard::policy_from_config(guard_config, tree, home);
    if (!policy) return policy.status();
    policy->network = network;
    return guard::CommandGuard::create(std::move(*policy));
  };
  if (config.guard == config::GuardConfig{}) {
    // The default rules cannot fail to build (the guard's tests check them), so nothing needs
    // saying at start, and they compile when the first command needs them: 3.5 ms of CPU and
    // 0.6 MiB that a run which never calls Bash does not spend. Compiled on a thread at
    // start instead, they competed with the run's own start on a 2-CPU machine: a run with
    // no tool call took 21-24 ms against 19.5 (turn_overhead_bench --ns 0).
    return std::make_shared<BashTool>(std::async(std::launch::deferred, build).share(),
                                      std::move(settings));
  }
  auto guard = build();
  if (!guard) return guard.status();
  return std::make_shared<BashTool>(std::move(*guard), std::move(settings));
}

std::string BashTool::description() const {
  return fmt::format(
      "Runs a bash command in the work tree and returns its output (stdout and stderr "
      "interleaved) and exit code. The working directory persists between calls (it starts at "
      "the work tree, and goes back there if a command leaves the tree); the environment does "
      "not: each call is a fresh bash, so variables, functions and aliases do not carry over. "
      "Files in /tmp persist between the calls of a run. Commands are screened before they run: "
      "writing outside the work tree (except "
      "/tmp), reading secrets (~/.ssh, credentials), privilege escalation, downloading and "
      "running code, and commands the guard cannot understand (eval, a command name in a "
      "variable) are refused, permanently. Commands run in a sandbox: the file system is "
      "read-only outside the work tree and /tmp, and so are .git/hooks, .git/config and the "
      "settings of mecha, editors and shells inside it{}. timeout is in milliseconds (default {}, "
      "at "
      "most {}); a command that runs longer is killed with everything it started and reports "
      "exit code 124. Output over {} characters keeps the beginning and the end. With "
      "run_in_background: true the command starts and the call returns its shell id at once "
      "(no timeout unless one is given); BashOutput reads what it wrote since the last read, "
      "KillShell stops it, and every background command is killed when the run ends (at most "
      "{} run at once). Use the Read, Write, Edit, Glob and Grep tools for files rather than "
      "cat, echo, sed or grep.",
      settings_.network ? "" : ", and there is no network", settings_.default_timeout.count(),
      settings_.max_timeout.count(), settings_.max_output_chars, kMaxRunningShells);
}

Json BashTool::input_schema() const {
  Json schema = Json::parse(R"json({
    "type": "object",
    "properties": {
      "command": {"type": "string", "description": "The bash command to run"},
      "timeout": {"type": "integer", "minimum": 1, "description": "Milliseconds before the command is killed"},
      "description": {"type": "string", "description": "What the command does, in five to ten words"},
      "run_in_background": {"type": "boolean", "description": "Set to true to run this command in the background. Use BashOutput to read the output later."}
    },
    "required": ["command"],
    "additionalProperties": false
  })json");
  schema["properties"]["timeout"]["maximum"] = settings_.max_timeout.count();
  return schema;
}

Capabilities BashTool::capabilities() const {
  // Without network a command can only touch this machine, like the file tools; with it, it
  // can fetch what an attacker wrote and send data out. Without the sandbox nothing keeps
  // the network away.
  const bool network = settings_.network || !settings_.sandbox;
  Capabilities c;
  c.untrusted_input = network;
  c.external_send = network;
  return c;
}

ToolOutput BashTool::start_in_background(const std::string& command,
                                         std::optional<std::chrono::milliseconds> timeout,
                                         SandboxedCommand sandboxed,
                                         std::shared_ptr<TreeBoundary> boundary, ToolContext& ctx) {
  sandboxed.options.timeout = timeout;
  BackgroundCommand c;
  c.command = command;
  c.sandboxed = std::move(sandboxed);
  c.boundary = std::move(boundary);
  c.max_output_chars = settings_.max_output_chars;
  c.network = settings_.network || !settings_.sandbox;
  auto id = background_shells(ctx).start(std::move(c));
  if (!id) return ToolOutput::error(id.message() + "; the command was not run");
  ToolOutput out = ToolOutput::ok(fmt::format(
      "Command running in the background with ID: {}. Read its output with BashOutput "
      "(bash_id \"{}\"); stop it with KillShell (shell_id \"{}\"). It is killed when the run "
      "ends.",
      *id, *id, *id));
  return out;
}

ToolOutput BashTool::call(const Json& input, ToolContext& ctx) {
  const std::string command = input.at("command").get<std::string>();
  std::chrono::milliseconds timeout = settings_.default_timeout;
  if (input.contains("timeout"))
    timeout = std::min(std::chrono::milliseconds(input.at("timeout").get<int64_t>()),
                       settings_.max_timeout);

  const std::string tree = ctx.work_tree.string();
  const bool background = input.value("run_in_background", false);
  // Where the command starts: the run's shell directory (a background command starts in the
  // tree). The guard resolves relative paths from there, as bash will.
  ShellPool& pool = shell_pool(ctx);
  std::string notes;
  const std::string cwd = background ? tree : shell_directory(pool.cwd(), tree, notes);
  const Result<guard::CommandGuard>& built = guard_.get();
  if (!built.ok()) return ToolOutput::error(built.message());
  guard::CommandGuard guard = built->for_work_tree(tree);
  guard::Verdict verdict = guard.screen(command, cwd);
  if (!verdict.allowed) {
    ++ctx.refusals;
    return ToolOutput::refusal(verdict.rule, guard.refusal_message(verdict, ctx.refusals));
  }

  std::shared_ptr<TreeBoundary> boundary;
  std::vector<SandboxBind> binds;
  std::vector<std::string> hidden;
  if (settings_.sandbox) {
    if (Status s = sandbox_available(); !s.ok()) {
      return ToolOutput::error(s.message() +
                               "; the command was not run (set [sandbox] mode = \"off\" in the "
                               "config to run commands without a sandbox)");
    }
    auto opened = tree_boundary(ctx);
    if (!opened.ok()) return ToolOutput::error(opened.message() + "; the command was not run");
    boundary = std::move(*opened);
    binds = boundary->binds();
    const guard::Places& places = guard.policy().places;
    hidden = hidden_paths(places.work_tree, places.home, places.secrets);
  }
  if (background) {
    SandboxedCommand sandboxed;
    if (settings_.sandbox) {
      auto c = sandbox_command(settings_, tree, hidden, binds, command);
      if (!c.ok()) return ToolOutput::error(c.message() + "; the command was not run");
      sandboxed = std::move(*c);
    } else {
      sandboxed.options.argv = {"/bin/bash", "-c", command};
      sandboxed.options.cwd = ctx.work_tree;
      sandboxed.options.env = command_environment(settings_);
    }
    return start_in_background(command,
                               input.contains("timeout") ? std::optional(timeout) : std::nullopt,
                               std::move(sandboxed), std::move(boundary), ctx);
  }
  if (command.find('\0') != std::string::npos)
    return ToolOutput::error(
        "the command holds a NUL character, which bash cannot run; the "
        "command was not run");

  // A shell made for other mounts (what the boundary protects changed) is not taken.
  ShellSpec spec{settings_, tree, hidden, binds};
  bool restarted = false;
  std::unique_ptr<PersistentShell> shell = pool.take(spec);
  if (boundary) {
    if (Status s = boundary->begin(); !s.ok()) {
      pool.give_back(std::move(shell));
      return ToolOutput::error(s.message() + "; the command was not run");
    }
  }
  // Bytes kept: enough for max_output_chars characters of any width.
  const size_t keep = settings_.max_output_chars * 4;
  Result<ShellRun> r = Status::error("no shell");
  // Twice at most: when the shell broke after the last command ended (that command lowered
  // the driver's limits, say), this one never ran and runs once more, in a fresh shell.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!shell) {
      if (pool.take_restart_note()) restarted = true;
      auto started = PersistentShell::start(spec);
      if (!started.ok()) {
        r = started.status();
        break;
      }
      shell = std::move(*started);
    }
    r = shell->run(command, cwd, timeout, ctx.cancel, keep);
    if (!r.ok() || !r->never_started) break;
    shell.reset();
    restarted = true;
  }
  if (restarted)
    notes += "\nThe shell was restarted: files the earlier commands left in /tmp are gone.";
  // Every process of the command is gone (the driver or the sandbox's end killed them all):
  // the boundary checks what it left without a race with it.
  const std::string note =
      boundary ? boundary_note(boundary->end(), /*foreground=*/true) : std::string();
  if (!r.ok())
    return ToolOutput::error(
        fmt::format("the command could not be started: {}{}", r.message(), note));
  if (r->shell_died) pool.note_restart();
  pool.give_back(std::move(shell));
  if (!r->shell_died && r->cwd) {
    std::string reported = shell_directory(*r->cwd, tree, notes);
    pool.set_cwd(reported);
  }
  if (r->cancelled) return ToolOutput::error("cancelled: the command was killed" + note);

  std::string out =
      cap_output(r->out.head, r->out.tail, r->out.dropped, settings_.max_output_chars);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (r->timed_out) {
    out += fmt::format(
        "Exit code: 124\nThe command timed out after {} and was killed, with every process it "
        "started. Run something quicker, or give a longer timeout (at most {}).",
        seconds(timeout), seconds(settings_.max_timeout));
    out += note + notes;
    ToolOutput t = ToolOutput::error(std::move(out));
    t.external = settings_.network;
    return t;
  }
  if (r->shell_died) {
    out += fmt::format(
        "The shell ended before the command did ({}); every process of the "
        "command was killed. The next command starts a new shell.",
        r->failure);
    out += note + notes;
    ToolOutput t = ToolOutput::error(std::move(out));
    t.external = settings_.network;
    return t;
  }
  if (r->signal != 0) {
    out += fmt::format("Exit code: {} (killed by signal {})", 128 + r->signal, r->signal);
  } else {
    out += fmt::format("Exit code: {}", r->exit_code);
  }
  out += note + notes;
  ToolOutput result = ToolOutput::ok(std::move(out));
  result.external = settings_.network;
  return result;
}

}  // namespace mecha::tools
