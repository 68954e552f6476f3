// The project config files the user trusts, by exact content: one line per file,
// "<sha256>  <absolute path>", in <state dir>/trusted-configs (the format sha256sum
// prints, so `sha256sum -c` checks it). The file is 0600 in the 0700 state directory,
// which the sandbox cannot see; a file there that others could write is refused.
//
// Trust is for one path and one content: a file moved elsewhere, or changed in any byte,
// is untrusted again (check() says which).
//
// Thread-safety: none; a TrustStore is read once per process and written by `mecha trust`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"

namespace mecha::config {

struct TrustRecord {
  std::string sha256;  // 64 lowercase hex digits
  std::string path;    // absolute, lexically normal (see identify())
  bool operator==(const TrustRecord&) const = default;
};

enum class TrustVerdict {
  kTrusted,    // this path with this content
  kUntrusted,  // this path was never trusted
  kChanged,    // this path was trusted with another content
};

class TrustStore {
 public:
  // <user_state_dir()>/trusted-configs.
  static Result<std::filesystem::path> default_file();
  // Reads `file`; a missing file is an empty store. A malformed line, or a file that is not
  // a regular file of this user closed to others' writes, is an error naming it.
  static Result<TrustStore> load(const std::filesystem::path& file);

  TrustVerdict check(const std::string& canonical_path, const std::string& sha256) const;
  const std::vector<TrustRecord>& records() const { return records_; }

  // Records `canonical_path` with `sha256`, replacing an earlier record of the path, and
  // writes the file (0600, replaced atomically; its directory made private).
  Status trust(const std::string& canonical_path, const std::string& sha256);
  // Drops the record of `canonical_path`; false when there was none.
  Result<bool> revoke(const std::string& canonical_path);

 private:
  explicit TrustStore(std::filesystem::path file) : file_(std::move(file)) {}
  Status save() const;
  std::filesystem::path file_;
  std::vector<TrustRecord> records_;
};

// The digest and path of a config file as trust records them, from the bytes read. The path
// is absolute and lexically normal, with symlinks left as they are: the work tree is
// canonical already (the CLI resolves it), and resolving .mecha/ or config.toml would let a
// tree that links to a file trusted for another tree inherit that trust.
struct FileIdentity {
  std::string path;
  std::string sha256;
};
FileIdentity identify(const std::filesystem::path& file, std::string_view content);

// `path` as one shell word: unchanged when it holds only safe characters, else in single
// quotes. For the exact `mecha trust PATH` command a message tells the user to run.
std::string shell_quoted(const std::string& path);

}  // namespace mecha::config
