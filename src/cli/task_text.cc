#include "cli/task_text.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace mecha::cli {
namespace {

constexpr const char* kHowTo = "mecha run WHAT TO DO, or mecha run - to read it from stdin";

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

Result<std::string> task_text(const std::vector<std::string>& words, std::FILE* in,
                              size_t max_bytes) {
  if (words.empty()) return Status::usage(fmt::format("no task given: {}", kHowTo));
  const bool from_stdin = words.size() == 1 && words[0] == "-";
  if (!from_stdin) {
    for (const auto& w : words) {
      if (w == "-") {
        return Status::usage(
            "'-' reads the task from stdin and takes no other words: give the words or '-'");
      }
    }
    std::string task = fmt::format("{}", fmt::join(words, " "));
    if (blank(task)) return Status::usage(fmt::format("the task is empty: {}", kHowTo));
    return task;
  }
  std::string task;
  char buf[65536];
  while (true) {
    size_t n = std::fread(buf, 1, sizeof(buf), in);
    task.append(buf, n);
    if (task.size() > max_bytes) {
      return Status::usage(
          fmt::format("the task on stdin is longer than {} bytes: shorten it, or put the text in "
                      "a file and ask the agent to read it",
                      max_bytes));
    }
    if (n < sizeof(buf)) break;
  }
  if (std::ferror(in)) {
    return Status::error(fmt::format("cannot read the task from stdin: {}", std::strerror(errno)));
  }
  while (!task.empty() && std::strchr(" \t\r\n", task.back()) != nullptr) task.pop_back();
  if (blank(task)) return Status::usage("the task on stdin is empty");
  return task;
}

}  // namespace mecha::cli
