#include "config/claude_settings.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/trust_store.h"

namespace mecha::config {
namespace {

// Settings files are a few kilobytes; a larger one is not a settings file.
constexpr std::uintmax_t kMaxSettingsBytes = 4 << 20;

Result<std::string> read_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::error(fmt::format("{}: Claude Code settings must be a file", path.string()));
  }
  if (std::filesystem::file_size(path, ec) > kMaxSettingsBytes) {
    return Status::error(fmt::format("{}: larger than {} bytes, too large for a settings file",
                                     path.string(), kMaxSettingsBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<std::vector<ClaudeSettingsFile>> read_claude_settings(const ClaudeSettingsPaths& paths) {
  std::vector<ClaudeSettingsFile> files;
  std::optional<TrustStore> trust;
  const std::optional<std::filesystem::path>* in_order[] = {&paths.user, &paths.project,
                                                            &paths.project_local};
  for (const auto* p : in_order) {
    std::error_code ec;
    if (!p->has_value() || !std::filesystem::exists(**p, ec)) continue;
    auto text = read_bytes(**p);
    if (!text) return text.status();
    ClaudeSettingsFile f;
    f.path = (*p)->string();
    auto doc = parse_json(*text, f.path);
    if (!doc) return doc.status();
    if (!doc->is_object()) {
      return Status::error(fmt::format("{}: Claude Code settings must be a JSON object, not {}",
                                       f.path, json_type_name(*doc)));
    }
    f.project = p != &paths.user;
    if (f.project) {
      f.trusted = false;
      if (paths.trust_file) {
        if (!trust) {
          auto loaded = TrustStore::load(*paths.trust_file);
          if (!loaded) return loaded.status();
          trust = std::move(*loaded);
        }
        // The digest of the very bytes parsed: a file changed since is not trusted.
        FileIdentity id = identify(**p, *text);
        f.trusted = trust->check(id.path, id.sha256) == TrustVerdict::kTrusted;
      }
    }
    f.text = std::move(*text);
    f.doc = std::move(*doc);
    files.push_back(std::move(f));
  }
  return files;
}

int line_of(std::string_view text, std::string_view needle, int from_line) {
  int line = 1;
  size_t start = 0;
  while (line < from_line) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return 0;
    start = nl + 1;
    ++line;
  }
  size_t at = text.find(needle, start);
  if (needle.empty() || at == std::string_view::npos) return 0;
  for (size_t i = start; i < at; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace mecha::config
