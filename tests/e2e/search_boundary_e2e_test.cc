// Grep and Glob inside the boundary (issue 45, item 1), through the binary, against the race
// that led ripgrep out of the tree when it ran on the host: while the scripted model searches,
// a background command of its own swaps a folder of the tree with a link to a folder outside
// it, as fast as renameat2(RENAME_EXCHANGE) goes, so that ripgrep finds a folder when it lists its
// parent and a link when it opens the folder by name. The outside folder holds a marker in its
// files' text and names; no result, and no event, may ever show it. Another folder is swapped
// the same way with a link to a folder of the tree that a Read deny rule names: the rule lets
// a search of `data` run, and the mask must hold where the race leads.
//
// The outside folder is in the host's /tmp, which every sandbox replaces with its own, as it
// hides the user's home: a place a command of the run cannot read. (Reading what a Bash
// command could read anyway is no escape: tools/ripgrep.h.) With ripgrep on the host, as it
// ran before, this race led a search out of the tree about one time in four.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/testing/cassette_run.h"
#include "tools/bash_sandbox.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::of_type;
using testing::result_of;
using testing::text_line;
using testing::tool_line;

constexpr const char* kOutsideMarker = "OUTSIDE-SECRET-5519";
constexpr const char* kOutsideName = "outside-only";
constexpr const char* kInsideMarker = "inside-text";
constexpr const char* kVaultMarker = "VAULT-SECRET-0408";
constexpr const char* kVaultName = "vault-only";

// Swaps each pair of its arguments with renameat2(RENAME_EXCHANGE), round after round, for
// at most a minute, saying how many swaps it has made every 10000.
constexpr const char* kSwapper = R"py(import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
pairs = [(sys.argv[i].encode(), sys.argv[i + 1].encode()) for i in range(1, len(sys.argv), 2)]
swaps, deadline = 0, time.monotonic() + 60
while time.monotonic() < deadline:
    for a, b in pairs:
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
            swaps += 1
            if swaps % 10000 == 0:
                print("swaps", swaps, flush=True)
)py";

std::optional<std::string> search_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir) / name;
    if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

// A folder in the host's /tmp (not $TMPDIR: it must be where no sandbox looks), removed
// afterwards.
class HostTmpDir {
 public:
  HostTmpDir() {
    std::string tmpl = "/tmp/mecha-outside-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~HostTmpDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  HostTmpDir(const HostTmpDir&) = delete;
  HostTmpDir& operator=(const HostTmpDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

class SandboxSearchE2E : public testing::CassetteRunTest {
 protected:
  SandboxSearchE2E() : CassetteRunTest("search the data") {}

  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    if (!search_in_path("python3"))
      GTEST_SKIP() << "python3 is not in PATH: nothing can swap the folders";
    ASSERT_FALSE(outside_.path().empty()) << "cannot make a folder in /tmp";
    for (int i = 0; i < 40; ++i) {
      dir_.write(fmt::format("data/sub/in-{:02}.txt", i),
                 fmt::format("needle {} {}\n", kInsideMarker, i));
      dir_.write(fmt::format("data/sub2/in-{:02}.txt", i),
                 fmt::format("needle {} {}\n", kInsideMarker, i));
      std::ofstream(outside_.path() / fmt::format("{}-{:02}.txt", kOutsideName, i))
          << "needle " << kOutsideMarker << "\n";
      dir_.write(fmt::format("vault/{}-{:02}.txt", kVaultName, i),
                 std::string("needle ") + kVaultMarker + "\n");
    }
    dir_.write("data/top.txt", std::string("needle ") + kInsideMarker + "\n");
    fs::create_directory_symlink(outside_.path(), dir_.path() / "data/link");
    fs::create_directory_symlink("../vault", dir_.path() / "data/link2");
    // The vault is in the tree, where a deny rule hides it: a mask, not the sandbox's walls.
    dir_.write(".claude/settings.json", R"J({"permissions": {"deny": ["Read(./vault/**)"]}})J");
    ASSERT_EQ(mecha({"trust", ".claude/settings.json"}).exit_code, 0);
    // The same calls again and again, each with the same answer: the stuck-loop ladder would
    // (rightly) stop such a run long before the race had its chance.
    dir_.write(".home/.config/mecha/config.toml",
               "[loop]\nnote_after = 500\nwithhold_after = 501\nfresh_context_after = 502\n"
               "stuck_after = 503\n");
  }

  HostTmpDir outside_;
};

TEST_F(SandboxSearchE2E, AFolderSwappedForALinkNeverLeadsGrepOrGlobOutOfTheTreeOrPastAMask) {
  // Searches of the folder whose children are swapped, and of a child itself (checked on the
  // host as a folder, then entered by the sandbox by name), in every output mode.
  const std::vector<std::pair<std::string, Json>> searches = {
      {"Grep", {{"pattern", "needle"}, {"path", "data"}, {"output_mode", "content"}}},
      {"Grep", {{"pattern", "needle"}, {"path", "data"}}},
      {"Grep", {{"pattern", "needle"}, {"path", "data"}, {"output_mode", "count"}}},
      {"Glob", {{"pattern", "**/*.txt"}, {"path", "data"}}},
      {"Grep", {{"pattern", "needle"}, {"path", "data/sub"}, {"output_mode", "content"}}},
      {"Glob", {{"pattern", "*.txt"}, {"path", "data/sub2"}}},
  };
  // The model's own process swaps (in the background, in its sandbox, which may rename what
  // is its tree's), and the run stops it when it ends.
  dir_.write("swap.py", kSwapper);
  std::string lines =
      tool_line("main", "b1", "Bash",
                {{"command", "python3 swap.py data/sub data/link data/sub2 data/link2"},
                 {"run_in_background", true}}) +
      tool_line("main", "w1", "Bash",
                {{"command", "until [ -L data/sub ]; do sleep 0.01; done; echo swapping"}});
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < searches.size(); ++i) {
      lines +=
          tool_line("main", fmt::format("s{}-{}", round, i), searches[i].first, searches[i].second);
    }
  }
  lines += tool_line("main", "o1", "BashOutput", {{"bash_id", "bash_1"}}) +
           text_line("main", "searched");

  const std::vector<Json> events = run(lines, {"--max-turns", "1000"});
  // The race really ran: tens of thousands of swaps while the searches went on.
  const std::string swapped = result_of(events, "o1");
  const size_t last = swapped.rfind("swaps ");
  ASSERT_NE(last, std::string::npos) << swapped;
  EXPECT_GE(std::stol(swapped.substr(last + 6)), 10000) << swapped;

  int found_inside = 0, searched = 0;
  for (const Json& r : of_type(events, "tool_result")) {
    if (r.at("id").get<std::string>().front() != 's') continue;
    ++searched;
    const std::string content = r.at("content");
    if (content.find(kInsideMarker) != std::string::npos ||
        content.find("in-0") != std::string::npos)
      ++found_inside;
  }
  ASSERT_EQ(searched, static_cast<int>(searches.size()) * kRounds) << events.back().dump();
  // The searches did search (in the tree), whichever name a folder had at the time. (A search
  // of data/sub or data/sub2 that finds a link there is refused before it runs.)
  EXPECT_GT(found_inside, searched / 2);
  for (const Json& e : events) {
    const std::string text = e.dump();
    for (const char* never : {kOutsideMarker, kOutsideName, kVaultMarker, kVaultName})
      EXPECT_EQ(text.find(never), std::string::npos) << never << " in " << text;
  }
}

}  // namespace
}  // namespace mecha::cli
