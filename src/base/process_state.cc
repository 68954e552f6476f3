#include "base/process_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>

#include "base/unique_fd.h"

namespace mecha {
namespace {

// Skips spaces, then reads one decimal number; false when there is none.
bool next_number(std::string_view& s, long& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc()) return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return true;
}

}  // namespace

std::optional<ProcessState> parse_process_state(std::string_view line) {
  const size_t paren = line.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(paren + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return std::nullopt;
  ProcessState s;
  s.state = rest.front();
  rest.remove_prefix(1);
  long parent = 0, group = 0;
  if (!next_number(rest, parent) || !next_number(rest, group)) return std::nullopt;
  s.parent = static_cast<pid_t>(parent);
  s.group = static_cast<pid_t>(group);
  // Fields 6 to 21 (session to itrealvalue), then starttime.
  long skip = 0;
  for (int field = 6; field <= 21; ++field)
    if (!next_number(rest, skip)) return s;
  long long start = 0;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (std::from_chars(rest.data(), rest.data() + rest.size(), start).ec == std::errc())
    s.start_ticks = static_cast<unsigned long long>(start);
  return s;
}

std::optional<ProcessState> process_state(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  // A stat line is well under 1 KiB past its command name (at most 64 bytes in the kernel).
  char buf[2048];
  size_t got = 0;
  while (got < sizeof buf) {
    ssize_t n = ::read(fd.get(), buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return parse_process_state(std::string_view(buf, got));
}

bool process_alive(pid_t pid) {
  auto s = process_state(pid);
  return s && s->alive();
}

}  // namespace mecha
