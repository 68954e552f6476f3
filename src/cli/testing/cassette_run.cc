#include "cli/testing/cassette_run.h"

#include <algorithm>
#include <fstream>

#include "agent/testing/cassette_script.h"

namespace mecha::cli::testing {

std::string tool_line(const std::string& agent, const std::string& id, const std::string& name,
                      const Json& input) {
  return mecha::agent::testing::tool_line(agent, id, name, input) + "\n";
}

std::string text_line(const std::string& agent, const std::string& text) {
  return mecha::agent::testing::text_line(agent, text) + "\n";
}

std::vector<Json> of_type(const std::vector<Json>& all, const std::string& type) {
  std::vector<Json> out;
  for (const auto& e : all) {
    if (e.value("type", "") == type) out.push_back(e);
  }
  return out;
}

std::string result_of(const std::vector<Json>& events, const std::string& id) {
  for (const auto& e : events)
    if (e.value("type", "") == "tool_result" && e.value("id", "") == id)
      return e.at("content").get<std::string>();
  return "<no result for " + id + ">";
}

BinaryResult CassetteRunTest::mecha(const std::vector<std::string>& args) {
  return run_mecha(args, dir_.path(), "", mecha_e2e_binary());
}

std::vector<Json> CassetteRunTest::run(const std::string& lines, std::vector<std::string> extra) {
  dir_.write("c.jsonl", "{\"mecha_cassette\": 1}\n" + lines);
  std::vector<std::string> args = {"run", "--json", "--model", "cassette:c.jsonl"};
  if (!permission_mode_.empty() &&
      std::find(extra.begin(), extra.end(), "--permission-mode") == extra.end()) {
    args.insert(args.end(), {"--permission-mode", permission_mode_});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(prompt_);
  BinaryResult r = mecha(args);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  return json_lines(r.out);
}

std::vector<Json> CassetteRunTest::sent() const {
  std::vector<Json> out;
  std::ifstream in(dir_.path() / "sent.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (auto j = parse_json(line, "sent.jsonl")) out.push_back(*j);
  }
  return out;
}

}  // namespace mecha::cli::testing
