// Bounds on YAML that a repository ships (the front matter of agent definitions), checked on
// the parser's events before yaml-cpp builds nodes and before anything walks them.
//
// Why: yaml-cpp has no limits of its own but a recursion guard at 2000 levels. It builds an
// alias as a second reference to its anchor's node, so loading a "billion laughs" file is
// cheap, but everything that walks the nodes afterwards (our conversion to field values, a
// copy, an emit) expands every alias: 1.4 KB of nine-fold aliases are 387 million scalars,
// and a process that walks them dies of std::bad_alloc. An alias inside the node it names
// makes the walk endless.
//
// What is checked, in one pass over the events of the first document (as YAML::Load reads
// only that one), with no recursion of ours:
//  1. the text is at most YamlLimits::max_bytes;
//  2. no collection is nested deeper than YamlLimits::max_depth;
//  3. the nodes, counted with every alias expanded to the nodes of its anchor, are at most
//     YamlLimits::max_nodes: this bounds what any later walk of the tree visits;
//  4. no alias names a collection it is inside (a cycle).
// Aliases themselves are allowed: YAML has them, and a small file may repeat a list with
// one; what they can cost is bounded by 3.
//
// Errors are "FILE:LINE: ..." and name the limit. Bad YAML is reported as yaml-cpp reports
// it ("FILE:LINE: bad YAML in the front matter: ..."), so a caller need not parse twice to
// say why.
//
// Thread-safe: no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::config {

struct YamlLimits {
  // Default: 64 KiB. Claude Code's agent files hold a few fields and a description of a few
  // kilobytes; the body (the system prompt) is not YAML and not counted.
  size_t max_bytes = 64 * 1024;
  // Default: 32. A definition's fields nest two levels (a mapping of lists of strings).
  int max_depth = 32;
  // Default: 10,000 nodes after expanding aliases: far more than any definition's fields.
  size_t max_nodes = 10'000;
};

// OK when `yaml` stays within `limits`. `file` and `first_line` (the file's line of the
// YAML's first line) place the error; `what` names the YAML in messages ("the front matter").
Status check_yaml_limits(std::string_view yaml, const std::string& file, int first_line,
                         std::string_view what, const YamlLimits& limits = {});

}  // namespace mecha::config
