// Tool: something the model can call. Tools carry Claude Code's names and input fields, so
// agent definitions written for it work here.
//
// A tool declares what it can do to the run's security (Capabilities) and whether it only
// reads. A refusal or a failure is an is_error ToolOutput that the model reads and recovers
// from, never an exception. call() may run on any thread; a tool keeps no per-run state of
// its own (per-run state lives in ToolContext).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/cancel.h"
#include "base/result.h"
#include "base/strict_json.h"
#include "store/file_taint.h"

namespace mecha::tools {

// What a tool can do to the trifecta (DESIGN.md, security model).
struct Capabilities {
  bool untrusted_input = false;  // can return content an attacker could have written
  bool private_data = false;     // can return the user's private data
  bool external_send = false;    // can move data out of the machine
  bool operator==(const Capabilities&) const = default;
};

// A run in plan phase may only use read-only tools.
enum class Phase { kPlan, kExecute };

// How a tool reaches the files of the work tree, which decides how taint follows data
// through it (DESIGN.md, security model 1).
enum class TreeAccess {
  // It never reads or writes the work tree (a fetch, a message).
  kNone,
  // It reads and writes only the paths it names, and records their taint itself: a read of
  // a tainted file sets ToolOutput::tainted_source, a write while the run is untrusted marks
  // the file (Read, Write, Edit, Glob, Grep; a subagent, whose tools do it).
  kTracked,
  // It may read or write any file unseen (a shell, an outside server). While the run is
  // untrusted or the tree holds tainted files, the tree is compared before and after a call
  // and what changed is marked; and while the tree holds tainted files its results are
  // untrusted, since it may have read one (tools/tree_watch.h).
  kOpaque,
};

class BackgroundShells;
class ShellPool;
class BoundarySlot;
class SandboxMasks;

// Per-run state that tools read and update. Owned by the run; one thread at a time.
// Polymorphic so that a tool of a layer above (a subagent) can find the run it is part of.
class Tool;

struct ToolContext {
  virtual ~ToolContext() = default;
  std::filesystem::path work_tree;      // absolute, canonical
  const CancelToken* cancel = nullptr;  // never null while a tool runs
  Phase phase = Phase::kExecute;
  std::string agent = "main";        // the agent making the call
  std::set<std::string> files_read;  // canonical paths this run has read (Write checks)
  int refusals = 0;                  // guard refusals so far in this run

  // Taint of files. `untrusted` is whether the run holds untrusted content now (the loop
  // sets it before each call). While it does, what a tool writes in the work tree is marked
  // in `file_taint` under `session_id`, and what is marked there is untrusted to read.
  // Null when nothing is recorded (a tool's unit test, a run without a store).
  bool untrusted = false;
  store::FileTaint* file_taint = nullptr;
  std::string session_id;

  // Tells whoever watches the run something about the call in flight (an MCP server's
  // progress), on the calling thread. Default: nobody hears it.
  virtual void note(const std::string& text) { (void)text; }

  // The URLs the user wrote in the run's prompts (the loop gathers them from the user's own
  // messages, never from tool results): fetching one of them carries nothing the model chose,
  // so it is not a send (tools/web_fetch_tool.h). A subagent inherits its caller's.
  std::set<std::string> user_urls;

  // The run's deny rules as sandbox masks (sandbox_masks.h): what every sandbox of the run
  // hides or keeps read-only. Null: none. A subagent inherits its caller's.
  std::shared_ptr<const SandboxMasks> masks;

  // What keeps the run's sandboxed processes from planting what host programs obey
  // (tree_boundary.h), opened by the first sandbox of the run and shared like the shells
  // below, which it outlives (members go in reverse order).
  std::shared_ptr<BoundarySlot> boundary;

  // The commands this run started in the background (Bash's run_in_background), made at the
  // first one: they are killed when the run's context goes (background_shells.h).
  std::shared_ptr<BackgroundShells> background_shells;

  // The run's persistent shells and their working directory, made at the first Bash call
  // (shell_pool.h); shared with subagents and parallel calls like background_shells.
  std::shared_ptr<ShellPool> shells;

  // Set by the loop while a send runs that a person has just approved (the interlock asked
  // them): the tool does not ask again.
  bool send_approved = false;

  // Asks a person, now, whether a send may go out (a message waiting for approval under
  // [messaging] approve). True only when someone answered yes; false when they said no or
  // nobody can be asked (a headless run, a subagent: those hold the send for later). Blocking.
  virtual bool ask_person(const std::string& tool, const Json& input, const std::string& why) {
    (void)tool, (void)input, (void)why;
    return false;
  }

  // A request the tool is about to make on its own while running the model's call (WebFetch
  // following a redirect): checked as if the model had asked for it with `input`, by the
  // same hooks, permission rules and interlock, before any lookup or connection. An error
  // is the refusal, worded for the model; nothing was requested. The base class has no
  // rules to apply and lets it through (a tool's unit test).
  virtual Status follow_up(const Tool& tool, const Json& input) {
    (void)tool, (void)input;
    return ok_status();
  }
};

struct ToolOutput {
  std::string content;
  bool is_error = false;
  // True when the content came from outside (a fetched page, a tainted note): with
  // Capabilities::untrusted_input it marks the run untrusted.
  bool external = false;
  // True when the content holds (or may hold) what a tainted file of the work tree says: the
  // loop marks the run untrusted whatever the tool's capabilities.
  bool tainted_source = false;
  // Set when a policy refused the call: the rule that fired. The loop emits a refusal event.
  std::optional<std::string> refusal_rule;

  static ToolOutput ok(std::string content) {
    ToolOutput out;
    out.content = std::move(content);
    return out;
  }
  static ToolOutput error(std::string message) {
    ToolOutput out;
    out.content = std::move(message);
    out.is_error = true;
    return out;
  }
  static ToolOutput refusal(std::string rule, std::string message) {
    ToolOutput out = error(std::move(message));
    out.refusal_rule = std::move(rule);
    return out;
  }
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  // One paragraph for the model; the first sentence is the one-line summary people see.
  virtual std::string description() const = 0;
  // A JSON Schema object: {"type":"object","properties":{...},"required":[...]}.
  virtual Json input_schema() const = 0;
  // input_schema(), built on the first use and kept: a run offers every tool at every turn
  // and checks every call against its schema, and most schemas are parsed from text.
  const Json& schema() const {
    std::call_once(schema_once_, [this] { schema_ = input_schema(); });
    return schema_;
  }
  virtual bool read_only() const = 0;
  virtual Capabilities capabilities() const = 0;
  // The labels of one call, which may depend on its input: a fetch of a URL the user wrote
  // in the prompt is not a send. Never more than capabilities(), which is what a subagent's
  // labels are derived from. Default: capabilities().
  virtual Capabilities capabilities_for(const Json& input, const ToolContext& ctx) const {
    (void)input, (void)ctx;
    return capabilities();
  }
  // Whether a call changes state outside the conversation: the third leg in rule_of_two
  // mode (DESIGN.md, security model 2). Default: !read_only().
  virtual bool changes_state() const { return !read_only(); }
  // A send the interlock holds back may be kept for a person instead of dropped: SendMessage
  // stages the message in the outbox, marked with `why`, and returns what the model is told
  // (that it was held, not sent). nullopt: this tool cannot stage (the call is refused).
  virtual std::optional<ToolOutput> stage(const Json& input, ToolContext& ctx,
                                          const std::string& why) {
    (void)input, (void)ctx, (void)why;
    return std::nullopt;
  }
  // Default: kOpaque, so a tool that says nothing is watched rather than trusted.
  virtual TreeAccess tree_access() const { return TreeAccess::kOpaque; }
  // REQUIRES: input has been validated against input_schema().
  virtual ToolOutput call(const Json& input, ToolContext& ctx) = 0;

 private:
  mutable std::once_flag schema_once_;
  mutable Json schema_;
};

}  // namespace mecha::tools
