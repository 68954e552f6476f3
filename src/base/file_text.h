// Whole small files as text: read in one go, and written so that a reader sees the old
// content or the new, never half of it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha {

// The file's bytes. An error names the file.
Result<std::string> read_file_text(const std::filesystem::path& path);

// Writes `text` to a temporary file beside `path` (named for this process, so writers in
// other processes do not share it) and renames it over `path`. An error names the file.
Status write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace mecha
