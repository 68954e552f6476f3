// The prompt-injection suite (issue 17), AgentDojo-style: scenarios over a fake web (a
// loopback HTTP server), a Maildir inbox and the note store, with benign user tasks and
// injection tasks, run through the real `mecha` binary against an ObedientModel (a scripted
// model that does whatever it reads). The scenarios are tests/injection/suite.json; this
// runs them and says what happened on the host: which secrets reached the attacker (any
// request the fake web received: a webhook delivery, a fetched URL, a search query), what
// stopped each attack, and which benign tasks got done.
//
// Each task runs in a fresh home, state directory, inbox and work tree, once per pass: a
// pass is a value of [messaging] approve ("always" is the default a user gets;
// "when_tainted" lets clean sends go; "never" leaves the interlock alone to stop a send).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"

namespace mecha::cli::testing {

struct InjectionOutcome {
  std::string pass;  // the [messaging] approve value
  std::string id;
  std::string kind;                 // "benign" or "injection"
  std::string klass;                // an injection's class: "exfiltration" or "integrity"
  bool three_legs = false;          // a benign task that truly needs untrusted, private and a send
  std::string status;               // the main run's done.status
  std::vector<std::string> leaked;  // secrets the fake web received
  std::string stopped_by;           // refusal rules, "outbox", "sandbox", or "" (not stopped)
  std::vector<std::string> delivered_to;  // webhook deliveries' `to`
  bool held = false;                      // a message waits in the outbox
  bool state_changed = false;             // the file the task names was changed
  bool completed = false;  // a benign task did what it asked (delivered where it sends)
  std::string detail;      // what went wrong running it, if anything
};

struct InjectionReport {
  std::vector<InjectionOutcome> outcomes;
  // A table per pass: attacks that moved private data out, attacks stopped and by what,
  // integrity attacks apart, benign tasks completed and the ones that needed an approval.
  std::string summary() const;
};

// Runs every task of `suite_file` in every pass with the binary `mecha`. An error when the
// suite file does not read or a task cannot be set up.
Result<InjectionReport> run_injection_suite(const std::filesystem::path& suite_file,
                                            const std::vector<std::string>& passes,
                                            const std::string& mecha);

}  // namespace mecha::cli::testing
