#include "tools/read_tool.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "tools/file_tool_support.h"
#include "tools/taint_marks.h"

namespace mecha::tools {
namespace {

constexpr size_t kSniffBytes = 8192;
// After the output stops, the lines left are counted only within this much more data.
constexpr uint64_t kCountRestLimit = 16 << 20;

// Reads a file front to back; a hole of a sparse file comes back as its length, unread.
class ChunkReader {
 public:
  ChunkReader(int fd, off_t size, off_t from = 0)
      : fd_(fd), size_(size), pos_(from), data_end_(from) {}

  // The next piece: data in *data (and *hole == 0), or a run of *hole zero bytes. False
  // at the end of the file or on a read error (error() says which).
  bool next(std::string_view* data, uint64_t* hole) {
    *data = {};
    *hole = 0;
    if (pos_ >= size_) return false;
    if (pos_ >= data_end_) {
      off_t d = ::lseek(fd_, pos_, SEEK_DATA);
      if (d < 0 && errno == ENXIO) d = size_;  // a hole up to the end
      if (d < 0) {
        data_end_ = size_;  // no SEEK_DATA here: everything is data
      } else if (d > pos_) {
        *hole = static_cast<uint64_t>(std::min(d, size_) - pos_);
        pos_ = std::min(d, size_);
        return true;
      } else {
        off_t h = ::lseek(fd_, pos_, SEEK_HOLE);
        data_end_ = h <= pos_ ? size_ : std::min(h, size_);
      }
    }
    const size_t want = static_cast<size_t>(std::min<off_t>(sizeof buf_, data_end_ - pos_));
    ssize_t n;
    do {
      n = ::pread(fd_, buf_, want, pos_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) error_ = errno;
    if (n <= 0) return false;
    pos_ += n;
    *data = std::string_view(buf_, static_cast<size_t>(n));
    return true;
  }
  off_t pos() const { return pos_; }
  int error() const { return error_; }

 private:
  const int fd_;
  const off_t size_;
  off_t pos_;
  off_t data_end_;
  int error_ = 0;
  char buf_[65536];
};

std::string human_bytes(uint64_t n) {
  if (n < 1024) return plural(n, "byte", "bytes");
  if (n < 1024 * 1024) return fmt::format("{:.1f} KB", n / 1024.0);
  if (n < 1024ull * 1024 * 1024) return fmt::format("{:.1f} MB", n / (1024.0 * 1024));
  return fmt::format("{:.2f} GB", n / (1024.0 * 1024 * 1024));
}

std::string hex_prefix(std::string_view head) {
  std::string out;
  for (size_t i = 0; i < head.size() && i < 8; ++i) {
    if (i) out += ' ';
    out += fmt::format("{:02x}", static_cast<unsigned char>(head[i]));
  }
  return out;
}

}  // namespace

std::string binary_kind(std::string_view head) {
  struct Magic {
    std::string_view bytes;
    std::string_view kind;
  };
  static constexpr Magic kMagic[] = {
      {"\x89PNG\r\n\x1a\n", "a PNG image"},
      {"\xff\xd8\xff", "a JPEG image"},
      {"GIF87a", "a GIF image"},
      {"GIF89a", "a GIF image"},
      {"%PDF-", "a PDF document"},
      {"\x7f"
       "ELF",
       "an ELF executable or library"},
      {"PK\x03\x04", "a zip archive (or a jar, docx, xlsx...)"},
      {"\x1f\x8b", "gzip-compressed data"},
      {"\xfd"
       "7zXZ\x00",
       "xz-compressed data"},
      {"BZh", "bzip2-compressed data"},
      {"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"},
      {"\x28\xb5\x2f\xfd", "zstd-compressed data"},
      {"SQLite format 3", "an SQLite database"},
      {std::string_view("\0asm", 4), "a WebAssembly module"},
      {"\xca\xfe\xba\xbe", "a Java class file or Mach-O binary"},
      {"\xff\xfe", "UTF-16 text (little-endian), which Read does not decode"},
      {"\xfe\xff", "UTF-16 text (big-endian), which Read does not decode"},
  };
  for (const auto& m : kMagic) {
    if (head.substr(0, m.bytes.size()) == m.bytes) return std::string(m.kind);
  }
  if (head.substr(0, 4) == "RIFF" && head.substr(8, 4) == "WEBP") return "a WebP image";
  if (head.find('\0') != std::string_view::npos) return "binary data (it contains NUL bytes)";
  return "";
}

std::string ReadTool::description() const {
  return fmt::format(
      "Reads a text file of the work tree and returns it with numbered lines (cat -n style: "
      "the line number, a tab, the line). file_path is absolute or relative to the work "
      "tree. By default up to {} lines from the start are returned; for a longer file give "
      "offset (the 1-based line to start at) and limit (how many lines). Output is capped at "
      "{} KB, and lines longer than {} bytes are cut; a last line in brackets says what was "
      "left out and which offset to ask for next. Binary files are refused. Read a file "
      "before replacing it with Write.",
      kMaxLines, kMaxBytes / 1024, kMaxLineBytes);
}

Json ReadTool::input_schema() const {
  return Json::parse(R"json({
    "type": "object",
    "properties": {
      "file_path": {"type": "string", "description": "The file to read: absolute, or relative to the work tree"},
      "offset": {"type": "integer", "minimum": 0, "description": "The line number to start reading from (1-based). Only give it for files too large to read at once"},
      "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read. Only give it for files too large to read at once"}
    },
    "required": ["file_path"],
    "additionalProperties": false
  })json");
}

ToolOutput ReadTool::call(const Json& input, ToolContext& ctx) {
  const std::string path = input.at("file_path").get<std::string>();
  const int64_t start = std::max<int64_t>(1, input.value("offset", int64_t{1}));
  const bool limited = input.contains("limit");
  const int64_t max_lines = limited ? input.at("limit").get<int64_t>() : kMaxLines;

  auto resolved = resolve_in_work_tree(ctx, path, Access::kRead);
  if (!resolved.ok()) return path_problem_output(resolved.problem);
  const ConfinedPath& p = *resolved.value;
  if (!p.exists) return ToolOutput::error(fmt::format("{} does not exist", p.resolved.string()));
  // Whatever comes back from here on may quote the file (its lines, its first bytes).
  ToolOutput out = read_resolved(p, start, limited, max_lines, ctx);
  out.tainted_source = tainted_to_read(ctx, p.relative);
  return out;
}

ToolOutput ReadTool::read_resolved(const ConfinedPath& p, int64_t start, bool limited,
                                   int64_t max_lines, ToolContext& ctx) {
  const std::string shown = WorkTree::display(p);
  if (S_ISDIR(p.st.st_mode)) {
    return ToolOutput::error(
        fmt::format("{} is a directory; Read reads files (use Glob to list what is in it)",
                    p.resolved.string()));
  }
  auto fd = open_checked(p);
  if (!fd.ok()) return ToolOutput::error(fd.message());
  struct stat st;
  ::fstat(fd->get(), &st);
  const off_t size = st.st_size;
  if (size == 0) {
    ctx.files_read.insert(p.resolved.string());
    return ToolOutput::ok(fmt::format("({} is empty: 0 bytes)", shown));
  }
  std::string head(std::min<off_t>(size, kSniffBytes), '\0');
  ssize_t got = ::pread(fd->get(), head.data(), head.size(), 0);
  head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  if (std::string kind = binary_kind(head); !kind.empty()) {
    return ToolOutput::error(fmt::format(
        "{} is not a text file: it looks like {} ({}; first bytes {}). Read shows text files "
        "only.",
        shown, kind, human_bytes(static_cast<uint64_t>(size)), hex_prefix(head)));
  }

  ctx.files_read.insert(p.resolved.string());
  ChunkReader reader(fd->get(), size);
  std::string out;
  int64_t line_no = 1;    // the line being read
  std::string line;       // its first bytes (bounded)
  uint64_t line_len = 0;  // its length so far
  off_t line_start = 0;   // file offset where it starts
  int64_t shown_lines = 0;
  bool stopped = false;  // stopped by a cap, with more of the file after
  const char* stop_reason = "";
  const size_t keep = kMaxLineBytes + 8;

  auto emit = [&]() -> bool {  // false: the byte cap stops the output before this line
    std::string_view content(line);
    if (line_len == content.size() && !content.empty() && content.back() == '\r') {
      content.remove_suffix(1);
      --line_len;
    }
    size_t cut = utf8_prefix(content, kMaxLineBytes);
    std::string text = valid_utf8(content.substr(0, cut));
    if (line_len > cut) text += fmt::format(" [... line cut: {} more bytes]", line_len - cut);
    std::string formatted = fmt::format("{:>6}\t{}\n", line_no, text);
    if (shown_lines > 0 && out.size() + formatted.size() > kMaxBytes) return false;
    out += formatted;
    ++shown_lines;
    return true;
  };

  std::string_view data;
  uint64_t hole = 0;
  while (!stopped && reader.next(&data, &hole)) {
    if (hole > 0) {
      if (line_no >= start) {
        line.append(std::min<uint64_t>(hole, keep - std::min(keep, line.size())), '\0');
        line_len += hole;
      }
      continue;
    }
    off_t base = reader.pos() - static_cast<off_t>(data.size());
    while (!data.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(data.data(), '\n', data.size()));
      size_t piece = nl ? static_cast<size_t>(nl - data.data()) : data.size();
      if (line_no >= start) {
        line.append(data.substr(0, std::min(piece, keep - std::min(keep, line.size()))));
        line_len += piece;
      }
      if (!nl) break;
      if (line_no >= start) {
        if (!emit()) {
          stopped = true;
          stop_reason = "the output reached its 256 KB cap";
          break;
        }
      }
      ++line_no;
      line.clear();
      line_len = 0;
      data.remove_prefix(piece + 1);
      base += static_cast<off_t>(piece + 1);
      line_start = base;
      if (line_no >= start && shown_lines >= max_lines) {
        stopped = line_start < size;
        break;
      }
    }
  }
  if (reader.error() != 0) {
    return ToolOutput::error(fmt::format("reading {}: {}", shown, std::strerror(reader.error())));
  }
  // A last line without a newline.
  if (!stopped && line_len > 0 && line_no >= start && shown_lines < max_lines) {
    if (!emit()) {
      stopped = true;
      stop_reason = "the output reached its 256 KB cap";
    }
  }
  const int64_t last_shown = start + shown_lines - 1;
  if (!stopped) {
    char last = '\n';
    const bool partial_last = ::pread(fd->get(), &last, 1, size - 1) == 1 && last != '\n';
    const int64_t total = partial_last ? line_no : line_no - 1;
    if (shown_lines == 0) {
      return ToolOutput::error(fmt::format("{} has {}; offset {} is past the end", shown,
                                           plural(static_cast<uint64_t>(total), "line", "lines"),
                                           start));
    }
    return ToolOutput::ok(std::move(out));
  }

  // Say what was left out; count the lines left when that is cheap.
  const uint64_t rest_bytes = static_cast<uint64_t>(size - line_start);
  ChunkReader counter(fd->get(), size, line_start);
  uint64_t rest_lines = 0;
  bool counted = true;
  uint64_t scanned = 0;
  std::string_view d;
  uint64_t h;
  while (counter.next(&d, &h)) {
    rest_lines += static_cast<uint64_t>(std::count(d.begin(), d.end(), '\n'));
    scanned += d.size();
    if (scanned > kCountRestLimit) {
      counted = false;
      break;
    }
  }
  // The last line may have no newline.
  char last = 0;
  if (counted && ::pread(fd->get(), &last, 1, size - 1) == 1 && last != '\n') ++rest_lines;
  std::string why = *stop_reason ? fmt::format(" ({})", stop_reason) : "";
  if (counted) {
    out += fmt::format(
        "[Lines {}-{} of {} shown{}; {} ({}) not shown. To read more, call Read with "
        "offset={}{}.]\n",
        start, last_shown, last_shown + static_cast<int64_t>(rest_lines), why,
        plural(rest_lines, "more line", "more lines"), human_bytes(rest_bytes), last_shown + 1,
        limited ? fmt::format(" and limit={}", max_lines) : "");
  } else {
    out += fmt::format(
        "[Lines {}-{} shown{}; {} more of the file's {} not shown. To read more, call Read "
        "with offset={}{}.]\n",
        start, last_shown, why, human_bytes(rest_bytes), human_bytes(static_cast<uint64_t>(size)),
        last_shown + 1, limited ? fmt::format(" and limit={}", max_lines) : "");
  }
  return ToolOutput::ok(std::move(out));
}

}  // namespace mecha::tools
