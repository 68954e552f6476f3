// What a run pays before its first request for the issue-14 features: building the system
// prompt for a tree with nested AGENTS.md / CLAUDE.md files and imports, and loading 500
// Claude Code agent files from .claude/agents. Target: under 20 ms together
// (BM_PromptAndAgents).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "agent/system_prompt.h"
#include "config/agent_def.h"
#include "config/config.h"

namespace mecha {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string paragraph(const std::string& tag, int lines) {
  std::string out;
  for (int i = 0; i < lines; ++i) {
    out +=
        fmt::format("- {} rule {}: keep functions short, name things for what they do.\n", tag, i);
  }
  return out;
}

// A repository root/repo with the work tree four levels down; AGENTS.md and CLAUDE.md at
// each level, each importing a file of its own (which imports one more); a user's CLAUDE.md;
// and 500 agent definitions in the work tree's .claude/agents.
class Fixture {
 public:
  Fixture() {
    char tmpl[] = "/tmp/mecha-prompt-bench-XXXXXX";
    root_ = fs::path(mkdtemp(tmpl));
    fs::path dir = root_ / "repo";
    write(dir / ".git" / "HEAD", "ref: refs/heads/main\n");
    for (int level = 0; level < 5; ++level) {
      if (level > 0) dir /= fmt::format("level{}", level);
      std::string tag = fmt::format("L{}", level);
      write(dir / "AGENTS.md", paragraph(tag + " agents", 30) + "See @docs/style.md.\n");
      write(dir / "CLAUDE.md", paragraph(tag + " claude", 20) + "```\n@not/an/import.md\n```\n");
      write(dir / "docs" / "style.md", paragraph(tag + " style", 10) + "@more.md\n");
      write(dir / "docs" / "more.md", paragraph(tag + " more", 5));
    }
    tree_ = dir;
    write(root_ / "home" / ".claude" / "CLAUDE.md", paragraph("user", 20));
    for (int i = 0; i < 500; ++i) {
      write(tree_ / ".claude" / "agents" / fmt::format("agent-{:03}.md", i),
            fmt::format("---\nname: agent-{0:03}\ndescription: Reviews area {0} of the code and "
                        "reports what it finds.\ntools: Read, Grep, Glob\nmodel: inherit\n---\n"
                        "You are a reviewer for area {0}.\n\n{1}",
                        i, paragraph("agent", 15)));
    }
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  agent::PromptContext context() const {
    agent::PromptContext c;
    c.work_tree = tree_;
    c.home = root_ / "home";
    c.config_home = root_ / "home" / ".config";
    c.platform = "Linux";
    return c;
  }
  const fs::path& tree() const { return tree_; }

 private:
  fs::path root_;
  fs::path tree_;
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void BM_SystemPrompt(benchmark::State& state) {
  const auto context = fixture().context();
  size_t size = 0;
  for (auto _ : state) {
    std::string p = agent::build_system_prompt(context);
    size = p.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["prompt_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_SystemPrompt)->Unit(benchmark::kMillisecond);

void BM_LoadAgentDefs500(benchmark::State& state) {
  config::Config config;
  size_t count = 0;
  for (auto _ : state) {
    auto defs = config::load_agent_defs(config, fixture().tree());
    if (!defs) {
      state.SkipWithError(defs.message().c_str());
      return;
    }
    count = defs->size();
    benchmark::DoNotOptimize(defs);
  }
  state.counters["agents"] = static_cast<double>(count);
}
BENCHMARK(BM_LoadAgentDefs500)->Unit(benchmark::kMillisecond);

void BM_PromptAndAgents(benchmark::State& state) {
  config::Config config;
  const auto context = fixture().context();
  for (auto _ : state) {
    std::string p = agent::build_system_prompt(context);
    auto defs = config::load_agent_defs(config, fixture().tree());
    benchmark::DoNotOptimize(p);
    benchmark::DoNotOptimize(defs);
  }
}
BENCHMARK(BM_PromptAndAgents)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mecha

BENCHMARK_MAIN();
