#include "config/claude_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "base/sha256.h"
#include "config/trust_store.h"

namespace mecha::config {
namespace {

class ClaudeSettings : public ::testing::Test {
 protected:
  ClaudeSettings() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mecha-claude-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data()) ? std::filesystem::canonical(tmpl) : std::filesystem::path();
    paths_.user = dir_ / "home/.claude/settings.json";
    paths_.project = dir_ / "tree/.claude/settings.json";
    paths_.project_local = dir_ / "tree/.claude/settings.local.json";
    paths_.trust_file = dir_ / "state/trusted-configs";
  }
  ~ClaudeSettings() override { std::filesystem::remove_all(dir_); }
  void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::filesystem::path dir_;
  ClaudeSettingsPaths paths_;
};

TEST_F(ClaudeSettings, ReadsTheFilesThatExistInOrderAndTrustsProjectFilesByContent) {
  EXPECT_TRUE(read_claude_settings(paths_)->empty());
  write(*paths_.user, "{\"model\": \"opus\"}");
  const std::string project = "{\"permissions\": {\"allow\": [\"Bash(make)\"]}}";
  write(*paths_.project, project);
  write(*paths_.project_local, "{}");
  auto files = read_claude_settings(paths_);
  ASSERT_TRUE(files.ok()) << files.message();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].path, paths_.user->string());
  EXPECT_FALSE((*files)[0].project);
  EXPECT_TRUE((*files)[0].trusted);
  EXPECT_EQ((*files)[0].doc["model"], "opus");
  EXPECT_EQ((*files)[1].path, paths_.project->string());
  EXPECT_TRUE((*files)[1].project);
  EXPECT_FALSE((*files)[1].trusted);
  EXPECT_EQ((*files)[1].text, project);
  EXPECT_FALSE((*files)[2].trusted);

  auto trust = TrustStore::load(*paths_.trust_file);
  ASSERT_TRUE(trust.ok());
  ASSERT_TRUE(trust->trust(paths_.project->string(), sha256_hex(project)).ok());
  files = read_claude_settings(paths_);
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE((*files)[1].trusted);
  EXPECT_FALSE((*files)[2].trusted);

  write(*paths_.project, project + " ");
  EXPECT_FALSE((*read_claude_settings(paths_))[1].trusted) << "an edit revokes the trust";
  paths_.trust_file.reset();
  write(*paths_.project, project);
  EXPECT_FALSE((*read_claude_settings(paths_))[1].trusted) << "no trust records: none trusted";
}

TEST_F(ClaudeSettings, AFileThatIsNotAnObjectIsAnErrorNamingIt) {
  write(*paths_.project, "[1, 2]");
  auto files = read_claude_settings(paths_);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.message(),
            paths_.project->string() + ": Claude Code settings must be a JSON object, not array");
  write(*paths_.project, "{\"permissions\": ");
  files = read_claude_settings(paths_);
  ASSERT_FALSE(files.ok());
  EXPECT_TRUE(files.message().starts_with(paths_.project->string())) << files.message();
  std::filesystem::remove(*paths_.project);
  std::filesystem::create_directories(*paths_.project);
  files = read_claude_settings(paths_);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.message(), paths_.project->string() + ": Claude Code settings must be a file");
}

TEST(LineOf, FindsTheFirstOccurrenceFromALine) {
  const std::string text =
      "{\n  \"permissions\": {\n    \"deny\": [\n      \"Read(x)\",\n"
      "      \"Read(x)\"\n    ]\n  }\n}\n";
  EXPECT_EQ(line_of(text, "\"permissions\""), 2);
  EXPECT_EQ(line_of(text, "\"Read(x)\""), 4);
  EXPECT_EQ(line_of(text, "\"Read(x)\"", 5), 5);
  EXPECT_EQ(line_of(text, "\"Read(x)\"", 6), 0);
  EXPECT_EQ(line_of(text, "nowhere"), 0);
  EXPECT_EQ(line_of(text, "{", 99), 0);
}

}  // namespace
}  // namespace mecha::config
