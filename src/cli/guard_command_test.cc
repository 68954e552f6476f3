// `mecha guard check`, run as a program: verdicts, exit codes, JSON and batch mode.
#include <gtest/gtest.h>

#include "base/subprocess.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

SubprocessResult mecha(const std::vector<std::string>& args,
                       std::optional<std::string> stdin_data = {}) {
  return testing::run_guard_check(args, std::move(stdin_data));
}

TEST(GuardCheck, AllowsWithExitZero) {
  auto r = mecha({"ls -la && make"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.text(), "allow\n");
}

TEST(GuardCheck, RefusesWithExitOneAndSaysWhy) {
  auto r = mecha({"--json", "cat ~/.ssh/id_rsa"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.out.text(),
      R"({"message":"Refused by the command guard, rule 'secret-path': reads `~/.ssh/id_rsa`, a secret location )"
      R"((/home/user/.ssh/id_rsa). The work tree is /work/tree; commands may write only inside it (and /tmp). )"
      R"(This rule is permanent: variants of this command will be refused too, so do not retry it in another )"
      R"(form; choose a different approach that stays inside the work tree. Refusals so far in this run: 1.",)"
      R"("rule":"secret-path","verdict":"refuse"})"
      "\n");
}

TEST(GuardCheck, BatchWritesOneVerdictPerLine) {
  auto r = mecha({"--batch"}, R"({"command": "echo hi"}
{"command": "sudo ls", "category": "dangerous", "expect": "refuse"}
{"command": 7}
)");
  EXPECT_EQ(r.exit_code, 1);  // one line was not a command
  std::string out = r.out.text();
  EXPECT_EQ(out.substr(0, out.find('\n')),
            R"({"message":"allowed","rule":null,"verdict":"allow"})");
  EXPECT_NE(out.find(R"("rule":"privilege-escalation","verdict":"refuse"})"), std::string::npos)
      << out;
  EXPECT_NE(
      out.find(
          R"({"message":"line 3.command: expected a string, got integer","rule":null,"verdict":"error"})"),
      std::string::npos)
      << out;
}

}  // namespace
}  // namespace mecha::cli
