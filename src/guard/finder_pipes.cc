#include "guard/finder.h"

#include "guard/printed_text.h"

namespace mecha::guard {

void Finder::place_found_paths(Command& c, const std::vector<size_t>& previous) {
  // `find ROOT ... | xargs rm`: the arguments xargs reads are paths under ROOT.
  if (previous.size() != 1) return;
  const Command& up = script_.steps[previous.front()].command;
  if (up.name != "find") return;
  std::optional<std::string> root;
  for (size_t i = 1; i < up.argv.size(); ++i) {
    const std::string& a = up.argv[i].text;
    if (a == "-H" || a == "-L" || a == "-P") continue;
    if (!a.empty() && (a[0] == '-' || a == "(" || a == "!")) break;
    if (root || up.argv[i].dynamic) return;  // several roots: left unknown
    root = a;
  }
  if (!root) root = ".";
  for (ShellWord& w : c.argv) {
    if (w.text != std::string(1, kUnknown)) continue;
    w.text = *root + "/*?";
    w.dynamic = false;
    w.splits = false;
    w.glob = true;
  }
}

void Finder::resolve_pipes(size_t first_step) {
  // Members of each group by stage, in this run's steps only.
  std::map<uint32_t, std::map<uint32_t, std::vector<size_t>>> members;
  for (auto it = step_tags_.lower_bound(first_step); it != step_tags_.end(); ++it)
    for (const Tag& t : it->second) members[t.group][t.stage].push_back(it->first);
  step_tags_.erase(step_tags_.lower_bound(first_step), step_tags_.end());
  for (const auto& [group, stages] : members) {
    const Group& g = groups_[group];
    if (!g.is_pipeline) {
      Command& target = script_.steps[g.target].command;
      const std::vector<size_t>& feeders = stages.begin()->second;
      for (size_t s : feeders) target.fed_by.push_back(script_.steps[s].command.name);
      // `source <(echo ...)`, `exec bash <(printf ...)`: the script is what they print.
      uint32_t offset = target.offset;
      for (size_t s = g.target; s < script_.steps.size(); ++s) {
        if (script_.steps[s].kind != Step::Kind::kCommand) continue;
        Command& c = script_.steps[s].command;
        if (c.offset != offset || !c.script_operand_unknown) continue;
        std::optional<std::string> text;
        if (feeders.size() == 1) {
          const Command& up = script_.steps[feeders.front()].command;
          text = printed_text(up.name, up.argv);
        }
        if (text) {
          c.script_operand_unknown = false;
          add_script(literal_word(*text, c.offset), "a shell reading printed text", c.offset);
        }
      }
      continue;
    }
    std::vector<std::string> upstream;
    if (!g.first_fed_by.empty()) upstream.push_back(g.first_fed_by);
    const std::vector<size_t>* previous = nullptr;
    for (const auto& [stage, steps] : stages) {
      for (size_t s : steps) {
        Command& c = script_.steps[s].command;
        c.fed_by.insert(c.fed_by.end(), upstream.begin(), upstream.end());
        if (previous != nullptr && c.via.find("xargs") != std::string::npos)
          place_found_paths(c, *previous);
        if (c.reads_script_from_stdin && previous != nullptr) {
          // `echo 'ls' | sh`: when the text is echoed literally, screen it as a script.
          std::optional<std::string> printed;
          if (previous->size() == 1) {
            const Command& up = script_.steps[previous->front()].command;
            printed = printed_text(up.name, up.argv);
          }
          if (printed) {
            Language language = language_of(c.name);
            if (language != Language::kNone)
              screen_code(language, *printed, c.name + " reading printed code", c.offset);
            else
              add_script(literal_word(*printed), "a shell reading printed text", c.offset);
          } else {
            script_.steps[s].command.script_from_unknown_pipe = true;
          }
        } else if (c.reads_script_from_stdin && !upstream.empty()) {
          c.script_from_unknown_pipe = true;
        }
      }
      for (size_t s : steps) upstream.push_back(script_.steps[s].command.name);
      previous = &steps;
    }
  }
}

}  // namespace mecha::guard
