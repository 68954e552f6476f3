// Resolving the entry points of a library opened with dlopen, typed as its header declares
// them. mecha opens libcurl and libpq this way so that starting the binary loads neither
// (and none of the thirty libraries each brings) unless a run needs it.
#pragma once

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "base/result.h"

namespace mecha {

// Resolves `name` in `handle` into `slot`. A missing symbol is an error naming the file and
// the symbol, and saying the file is not a usable `what` ("libcurl", "libpq").
template <class Fn>
Status resolve_symbol(void* handle, const char* file, const char* name, const char* what,
                      Fn& slot) {
  void* sym = dlsym(handle, name);
  if (sym == nullptr) {
    return Status::error(fmt::format("{} has no {}: it is not a usable {}", file, name, what));
  }
  slot = reinterpret_cast<Fn>(sym);
  return ok_status();
}

}  // namespace mecha
