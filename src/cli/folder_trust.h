// The folder-trust question, as Claude Code asks it: at a terminal, the first run in a work
// tree whose files the user has not trusted (instructions, agents, config: agent/
// shipped_files.h) lists them and asks once whether to trust them as they are now. Yes
// records each in the trust store (config/trust_store.h); no leaves them untrusted, and the
// run goes on holding untrusted content from its first turn. Either way the tree is recorded
// in <state>/trust-asked and not asked about again; `mecha trust` trusts it later.
//
// Scripts (no controlling terminal), --json runs and daemons never ask: they run untrusted.
#pragma once

#include <filesystem>

#include "agent/file_standing.h"
#include "config/trust_store.h"

namespace mecha::cli {

// The standing of `tree`'s files for this user: `store`'s records and the tree's taint marks
// in its default session store. No deny masks: nothing is hidden from the person deciding.
agent::FileStanding tree_standing(const std::filesystem::path& tree,
                                  const config::TrustStore& store);

// Asks, when there is a terminal to ask at and the tree has untrusted files and was not
// asked about before. What fails (the state directory, the trust store) is said on stderr;
// the run then goes on as if the answer had been no.
void offer_tree_trust(const std::filesystem::path& tree);

}  // namespace mecha::cli
