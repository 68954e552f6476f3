// The system prompt a run sends (agent/system_prompt.h), checked through the binary: the
// cassette's `expect.system_contains` fails the run when the request's system prompt lacks a
// text, so these runs pass only if the prompt really reached the model.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::BinaryResult;
using testing::json_lines;
using testing::run_mecha;
using testing::TempDir;

std::string today() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// A cassette of one text reply whose request must contain each of `texts`.
std::string prompt_expecting(const std::vector<std::string>& texts,
                             const std::string& agent = "main") {
  return "{\"mecha_cassette\": 1}\n" +
         dump_json(Json{{"agent", agent},
                        {"expect", {{"system_contains", texts}}},
                        {"response", {{"content", {{{"type", "text"}, {"text", "done"}}}}}}}) +
         "\n";
}

// A repository dir/repo (branch main) with the work tree dir/repo/app: a root AGENTS.md, a
// nested one that imports docs/style.md, and a secret beside the repository.
class SystemPromptE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    dir_.write("repo/AGENTS.md", "Root rule: run make check.\n");
    dir_.write("repo/app/AGENTS.md", "Nested rule: use tabs. See @docs/style.md for more.\n");
    dir_.write("repo/app/docs/style.md", "Imported style: no exceptions.\n");
    dir_.write("outside.txt", "OUTSIDE-SECRET\n");
    dir_.write("config.toml", "[sandbox]\nmode = \"off\"\n");
  }

  fs::path tree() const { return dir_.path() / "repo" / "app"; }

  BinaryResult run(const std::string& cassette, std::vector<std::string> extra = {}) {
    dir_.write("c.jsonl", cassette);
    std::vector<std::string> args = {"run",           "--config", "config.toml",     "-C",
                                     tree().string(), "--model",  "cassette:c.jsonl"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("hello");
    return run_mecha(args, dir_.path());
  }

  BinaryResult prompt(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"prompt", "--config", "config.toml", "-C", tree().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mecha(args, dir_.path());
  }

  TempDir dir_;
};

TEST_F(SystemPromptE2E, ARunSendsTreeDateBranchAndTheProjectsInstructions) {
  auto r = run(prompt_expecting(
      {"You are mecha, a coding agent.", "- Work tree: " + tree().string(),
       "- Today's date: " + today(), ", branch main", "Root rule: run make check.",
       "Nested rule: use tabs.", "Imported style: no exceptions.",
       "(project, untrusted, imported by", "written by anyone who can commit to it"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");

  // The check is real: a text the prompt lacks fails the run.
  auto bad = run(prompt_expecting({"not in any prompt"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("expectation failed: system_contains \"not in any prompt\""),
            std::string::npos)
      << bad.err;
}

TEST_F(SystemPromptE2E, SystemReplacesTheBuiltinPartAndAppendSystemAdds) {
  auto replaced = run(prompt_expecting({"You are a pirate.", "- Work tree: " + tree().string(),
                                        "Nested rule: use tabs."}),
                      {"--system", "You are a pirate."});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  auto gone = run(prompt_expecting({"You are mecha"}), {"--system", "You are a pirate."});
  EXPECT_EQ(gone.exit_code, 1) << gone.err;

  auto appended = run(prompt_expecting({"You are mecha", "Nested rule", "Answer in French."}),
                      {"--append-system", "Answer in French."});
  EXPECT_EQ(appended.exit_code, 0) << appended.err;

  auto p = prompt({"--system", "You are a pirate.", "--append-system", "Answer in French."});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(p.out.starts_with("You are a pirate.\n\n# Environment\n")) << p.out;
  EXPECT_TRUE(p.out.ends_with("\nAnswer in French.\n")) << p.out;
  EXPECT_EQ(p.out.find("You are mecha"), std::string::npos) << p.out;
}

TEST_F(SystemPromptE2E, MechaPromptPrintsWhatARunSends) {
  auto p = prompt();
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(p.out.starts_with("You are mecha, a coding agent.")) << p.out;
  for (const std::string& s :
       {"- Work tree: " + tree().string() + "\n", "- Today's date: " + today() + "\n",
        "## " + (dir_.path() / "repo/AGENTS.md").string() + " (project, untrusted)\nRoot rule",
        "## " + (tree() / "AGENTS.md").string() + " (project, untrusted)\nNested rule",
        "## " + (tree() / "docs/style.md").string() + " (project, untrusted, imported by " +
            (tree() / "AGENTS.md").string() + ")\nImported style"}) {
    EXPECT_NE(p.out.find(s), std::string::npos) << s << "\nin:\n" << p.out;
  }
  // The whole prompt, as a run sends it: the run fails unless its prompt holds all of it.
  auto r = run(prompt_expecting({p.out}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(SystemPromptE2E, ImportsThatLeaveTheTreeAreNotRead) {
  fs::create_symlink(dir_.path() / "outside.txt", tree() / "link.md");
  fs::create_symlink(dir_.path() / "outside.txt", tree() / "CLAUDE.md");
  dir_.write("repo/app/AGENTS.md", "Escapes:\n@../../outside.txt\n@/etc/passwd\n@" +
                                       (dir_.path() / "outside.txt").string() +
                                       "\n@link.md\n@~/../outside.txt\nend of escapes\n");
  auto p = prompt();
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.find("OUTSIDE-SECRET"), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("root:"), std::string::npos) << p.out;
  // The file itself is quoted, its imports left as they were written.
  EXPECT_NE(p.out.find("@/etc/passwd\n@"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("@link.md\n@~/../outside.txt\nend of escapes\n"), std::string::npos)
      << p.out;
  EXPECT_NE(p.out.find("[mecha: " + (tree() / "CLAUDE.md").string() +
                       " was not read: it leads outside the repository]"),
            std::string::npos)
      << p.out;
  // And a run sends the same: the file's text, no secret (the run passes only with the
  // first, and the prompt it sends is the one printed above).
  auto r =
      run(prompt_expecting({"end of escapes", "was not read: it leads outside the repository"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(SystemPromptE2E, AHugeClaudeMdIsCutWithANote) {
  dir_.write("repo/app/CLAUDE.md", "HUGE-START\n" + std::string(1 << 20, 'x') + "\n");
  auto p = prompt();
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("HUGE-START"), std::string::npos);
  EXPECT_NE(p.out.find("[mecha: cut here; " + (tree() / "CLAUDE.md").string() + " holds " +
                       std::to_string((1 << 20) + 12) +
                       " bytes, of which only the first 20480 "
                       "were read]"),
            std::string::npos)
      << p.out.substr(p.out.size() - 500);
  EXPECT_LT(p.out.size(), 48u * 1024);
}

TEST_F(SystemPromptE2E, AChatTurnSendsTheSamePrompt) {
  dir_.write("c.jsonl", prompt_expecting({"You are mecha", "- Work tree: " + tree().string(),
                                          "Nested rule: use tabs.",
                                          "Imported style: no exceptions.", "Be brief."}));
  auto r =
      run_mecha({"chat", "--json", "--socket", "none.sock", "--config", "config.toml", "-C",
                 tree().string(), "--model", "cassette:c.jsonl", "--append-system", "Be brief."},
                dir_.path(), "hi\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A failed expectation is an error frame, and the turn still ends: the frames must be the
  // reply's.
  std::vector<std::string> kinds;
  for (const auto& f : json_lines(r.out)) kinds.push_back(f.at("kind"));
  EXPECT_EQ(kinds, (std::vector<std::string>{"opened", "text_delta", "text", "turn_done"}))
      << r.out;
  EXPECT_EQ(r.out.find("expectation failed"), std::string::npos) << r.out;
}

TEST_F(SystemPromptE2E, ASubagentGetsItsBodyAndTheEnvironment) {
  dir_.write("repo/app/.mecha/agents/scout.md",
             "---\nname: scout\ndescription: Looks around.\ntools: Glob\n---\n"
             "You look around.\n");
  const std::string cassette =
      "{\"mecha_cassette\": 1}\n"
      R"({"response": {"content": [{"type": "tool_use", "id": "m1", "name": "scout", "input": {"task": "look"}}]}})"
      "\n" +
      dump_json(
          Json{{"agent", "scout"},
               {"expect",
                {{"system_contains",
                  {"You look around.\n\n# Environment\n- Work tree: " + tree().string()}}}},
               {"response", {{"content", {{{"type", "text"}, {"text", "seen-by-scout"}}}}}}}) +
      "\n" +
      R"({"expect": {"last_tool_result_contains": "seen-by-scout"}, "response": {"content": [{"type": "text", "text": "done"}]}})" +
      "\n";
  auto r = run(cassette);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
}

}  // namespace
}  // namespace mecha::cli
