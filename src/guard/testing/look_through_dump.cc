#include "guard/testing/look_through_dump.h"

#include "guard/wrappers.h"

namespace mecha::guard::testing {

std::vector<std::string> look_through_dump(const std::vector<std::string>& words) {
  std::vector<ShellWord> argv;
  for (const auto& w : words) argv.push_back(literal_word(w));
  LookThrough lt = look_through(argv);
  std::vector<std::string> out;
  for (const auto& c : lt.commands) {
    std::string s = "cmd " + c.via + ":";
    for (const auto& w : c.argv) s += " " + w.shown();
    out.push_back(s);
  }
  for (const auto& s : lt.scripts) out.push_back(s.via + ": " + s.text.shown());
  if (lt.not_understood) out.push_back(lt.rule + ": " + *lt.not_understood);
  return out;
}

}  // namespace mecha::guard::testing
