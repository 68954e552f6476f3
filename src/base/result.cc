#include "base/result.h"

#include <cerrno>
#include <cstring>

namespace mecha {

Status errno_status(const std::string& what) {
  return Status::error(what + ": " + std::strerror(errno));
}

}  // namespace mecha
