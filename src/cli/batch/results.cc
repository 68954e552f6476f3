#include "cli/batch/results.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace mecha::batch {
namespace {

// Holds a flock(2) on the descriptor for its lifetime.
class FileLock {
 public:
  FileLock(int fd, int op) : fd_(fd) {
    while ((ok_ = ::flock(fd_, op) == 0) == false && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (ok_) ::flock(fd_, LOCK_UN);
  }
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = false;
};

Status write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(what);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return ok_status();
}

}  // namespace

Json result_to_json(const TaskResult& r) {
  Json j{{"id", r.id},
         {"status", r.status},
         {"exit_code", r.exit_code},
         {"turns", r.turns},
         {"tokens", usage_to_json(r.tokens)},
         {"cost_usd", r.cost_usd ? Json(*r.cost_usd) : Json(nullptr)},
         {"untrusted", r.untrusted},
         {"text", r.text},
         {"diff", r.diff},
         {"session", r.session},
         {"duration_ms", r.duration_ms}};
  if (r.diff_truncated) j["diff_truncated"] = true;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

Result<TaskResult> result_from_json(const Json& j, const std::string& where) {
  if (!j.is_object()) return Status::error(where + ": expected an object");
  TaskResult r;
  try {
    r.id = j.at("id").get<std::string>();
    r.status = j.at("status").get<std::string>();
    r.exit_code = j.value("exit_code", -1);
    r.turns = j.value("turns", int64_t{0});
    if (auto it = j.find("tokens"); it != j.end() && it->is_object()) {
      r.tokens.input_tokens = it->value("input_tokens", int64_t{0});
      r.tokens.output_tokens = it->value("output_tokens", int64_t{0});
      r.tokens.cache_read_tokens = it->value("cache_read_tokens", int64_t{0});
      r.tokens.cache_write_tokens = it->value("cache_write_tokens", int64_t{0});
    }
    if (auto it = j.find("cost_usd"); it != j.end() && it->is_number())
      r.cost_usd = it->get<double>();
    r.untrusted = j.value("untrusted", false);
    r.text = j.value("text", "");
    r.diff = j.value("diff", "");
    r.diff_truncated = j.value("diff_truncated", false);
    r.session = j.value("session", "");
    r.duration_ms = j.value("duration_ms", int64_t{0});
    r.error = j.value("error", "");
  } catch (const Json::exception& e) {
    return Status::error(fmt::format("{}: {}", where, e.what()));
  }
  return r;
}

Result<ResultsFile> ResultsFile::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status("opening " + path.string());
  return ResultsFile(path, UniqueFd(fd));
}

Result<std::string> ResultsFile::read_from(off_t from) const {
  std::string text;
  std::lock_guard in_process(*io_mu_);
  FileLock lock(fd_.get(), LOCK_SH);
  if (!lock.ok()) return errno_status("locking " + path_.string());
  char buf[1 << 16];
  for (off_t at = from;;) {
    ssize_t n = ::pread(fd_.get(), buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status("reading " + path_.string());
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return text;
}

namespace {

// Calls `each` with every whole line of `text` and its 1-based number after `first_line`;
// returns the bytes up to the end of the last whole line.
template <class F>
size_t for_each_line(const std::string& text, int64_t first_line, F each) {
  size_t start = 0;
  int64_t line_no = first_line;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // torn by a crash, or still being written
    ++line_no;
    if (end > start) each(std::string_view(text.data() + start, end - start), line_no);
    start = end + 1;
  }
  return start;
}

}  // namespace

Result<std::vector<TaskResult>> ResultsFile::read(int64_t* skipped) const {
  auto text = read_from(0);
  if (!text) return text.status();
  std::vector<TaskResult> out;
  int64_t bad = 0;
  size_t whole = for_each_line(*text, 0, [&](std::string_view line, int64_t line_no) {
    std::string where = fmt::format("{}: line {}", path_.string(), line_no);
    auto json = parse_json(line, where);
    auto r = json ? result_from_json(*json, where) : Result<TaskResult>(json.status());
    if (r)
      out.push_back(std::move(*r));
    else
      ++bad;
  });
  if (whole < text->size()) ++bad;  // a torn last line: its task runs again
  if (skipped) *skipped = bad;
  return out;
}

Result<bool> ResultsFile::has(const std::string& id) {
  std::lock_guard lock(*mu_);
  auto text = read_from(scanned_);
  if (!text) return text.status();
  size_t whole = for_each_line(*text, 0, [&](std::string_view line, int64_t) {
    auto json = parse_json(line, path_.string());
    if (!json || !json->is_object()) return;
    auto it = json->find("id");
    if (it != json->end() && it->is_string()) ids_.insert(it->get<std::string>());
  });
  scanned_ += static_cast<off_t>(whole);
  return ids_.count(id) > 0;
}

Status ResultsFile::append(const TaskResult& r) {
  std::string line = dump_json(result_to_json(r));
  line += '\n';
  std::lock_guard in_process(*io_mu_);
  FileLock lock(fd_.get(), LOCK_EX);
  if (!lock.ok()) return errno_status("locking " + path_.string());
  struct stat st {};
  if (::fstat(fd_.get(), &st) != 0) return errno_status("reading " + path_.string());
  if (st.st_size > 0) {
    char last = 0;
    if (::pread(fd_.get(), &last, 1, st.st_size - 1) != 1)
      return errno_status("reading " + path_.string());
    if (last != '\n') line.insert(line.begin(), '\n');  // close a torn line (invariant 2)
  }
  MECHA_RETURN_IF_ERROR(write_all(fd_.get(), line, "writing " + path_.string()));
  if (::fdatasync(fd_.get()) != 0) return errno_status("syncing " + path_.string());
  return ok_status();
}

}  // namespace mecha::batch
