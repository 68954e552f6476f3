#include "cli/terminal_approver.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "cli/tool_preview.h"

namespace mecha::cli {
namespace {

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// One line from the terminal, polled so that a cancelled run stops waiting; nullopt at end
// of input or on cancel. At most 256 bytes are kept.
std::optional<std::string> read_line(int fd, const CancelToken* cancel) {
  std::string line;
  while (true) {
    if (cancel && cancel->cancelled()) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return std::nullopt;
    if (r == 0) continue;
    char c = 0;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    if (line.size() < 256) line.push_back(c);
  }
}

}  // namespace

std::unique_ptr<TerminalApprover> TerminalApprover::open(const CancelToken* cancel) {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!tty.valid() || !::isatty(tty.get())) return nullptr;
  return std::unique_ptr<TerminalApprover>(new TerminalApprover(std::move(tty), cancel));
}

agent::ApprovalReply TerminalApprover::approve(const agent::ApprovalRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool permission = request.kind == agent::ApprovalKind::kPermission;
  write_all(tty_.get(),
            fmt::format("\nmecha: {} asks to run {}: {}\n  why: {}\nAllow? [y]es, [n]o{}: ",
                        printable(request.agent), printable(request.tool),
                        printable(approval_subject(request.input)), printable(request.reason),
                        permission ? ", [a]lways for this session" : ""));
  std::optional<std::string> line = read_line(tty_.get(), cancel_);
  if (!line) {
    write_all(tty_.get(), "\n");
    return agent::ApprovalReply::kDeny;
  }
  if (*line == "y" || *line == "yes") return agent::ApprovalReply::kAllow;
  if (permission && (*line == "a" || *line == "always")) return agent::ApprovalReply::kAlways;
  return agent::ApprovalReply::kDeny;
}

}  // namespace mecha::cli
