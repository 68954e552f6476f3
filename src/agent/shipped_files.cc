#include "agent/shipped_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/project_instructions.h"
#include "config/trust_store.h"

namespace mecha::agent {
namespace fs = std::filesystem;

namespace {

// A definition or config file bigger than this is not one mecha reads.
constexpr uintmax_t kMaxShippedBytes = 4 << 20;

std::optional<std::string> read_shipped(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) > kMaxShippedBytes || ec) {
    return std::nullopt;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void add_shipped(const fs::path& p, const char* kind, const FileStanding& standing,
                 std::vector<ShippedFile>* out) {
  auto text = read_shipped(p);
  if (!text) return;
  const config::FileIdentity id = config::identify(p, *text);
  out->push_back({id.path, id.sha256, kind, standing.of_digest(id.path, id.sha256)});
}

}  // namespace

std::vector<ShippedFile> shipped_files(const ShippedRoots& roots, const FileStanding& standing) {
  std::vector<ShippedFile> out;
  // Instructions as a run reads them, but with no deny or taint applied, so that each is
  // listed with its standing rather than left out.
  Instructions ins = load_instructions({roots.work_tree, roots.home, std::nullopt, nullptr});
  for (const InstructionFile& f : ins.files) {
    if (!standing.in_project(f.path)) continue;
    add_shipped(f.path, "instructions", standing, &out);
  }
  for (const char* dir : {".mecha/agents", ".claude/agents"}) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(roots.work_tree / dir, ec)) {
      if (e.path().extension() == ".md") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) add_shipped(f, "agent", standing, &out);
  }
  for (const char* file : {".mecha/config.toml", ".claude/settings.json", ".mcp.json"}) {
    add_shipped(roots.work_tree / file, "config", standing, &out);
  }
  return out;
}

}  // namespace mecha::agent
