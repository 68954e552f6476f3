// The user's state directory: where mecha keeps what the model must never reach (the
// session store, trust records, file taint). $XDG_STATE_HOME/mecha, else
// ~/.local/state/mecha (XDG Base Directory). Never inside a work tree; the sandbox masks it.
//
// Promises: the directory make_private_dir() returns is a real directory (not a symlink)
// owned by this user with mode 0700; missing parents are created 0700 too, as the XDG
// specification asks. A looser existing directory is tightened to 0700: it holds what
// decides what mecha trusts, so nobody else may write or read it.
#pragma once

#include <filesystem>
#include <string_view>

#include "base/result.h"

namespace mecha {

// $XDG_STATE_HOME/mecha when XDG_STATE_HOME is set and absolute (the specification says a
// relative one is ignored), else $HOME/.local/state/mecha. An error when neither gives an
// absolute path. Reads the environment; creates nothing.
Result<std::filesystem::path> user_state_dir();
// The same from given values (empty for unset), for tests.
Result<std::filesystem::path> state_dir_for(std::string_view xdg_state_home, std::string_view home);

// Creates `dir` (and missing parents) with mode 0700, or tightens an existing one of ours to
// 0700. Refused when `dir` is a symlink, not a directory, or owned by another user.
Status make_private_dir(const std::filesystem::path& dir);

// user_state_dir(), made private. What code that writes state should call.
Result<std::filesystem::path> private_state_dir();

}  // namespace mecha
