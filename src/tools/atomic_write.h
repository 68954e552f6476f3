// Replacing or creating a file so that a reader sees either the old content or the new,
// never a mix, and a crash leaves one of the two on disk.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::tools {

// Writes `data` to a temporary file in the directory `dir_fd`, fsyncs it, gives it `mode`
// (Default: nullopt, 0666 less the umask, as for a new file), renames it over `name` in
// that same directory and fsyncs the directory. All names are relative to `dir_fd`, so the
// directory that was checked is the one written. `shown` names the file in messages. On
// failure the temporary file is removed and `name` is untouched.
Status write_atomically(int dir_fd, const std::string& name, std::string_view data,
                        std::optional<mode_t> mode, const std::string& shown);

}  // namespace mecha::tools
