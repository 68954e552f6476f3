#include "agent/project_instructions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <system_error>

namespace mecha::agent {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kProjectFileNames[] = {"AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"};

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// `path` is `root` or beneath it (both canonical).
bool is_within(const fs::path& path, const fs::path& root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

std::optional<fs::path> canonical_or_none(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (ec) return std::nullopt;
  return c;
}

// Backs `n` off to the start of a UTF-8 sequence, so a cut never splits a character.
size_t utf8_boundary(const std::string& s, size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

// Whether a line opens or closes a fenced code block (``` or ~~~ after up to 3 spaces).
bool is_fence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  line.remove_prefix(i);
  return line.starts_with("```") || line.starts_with("~~~");
}

// Beyond this a file is not hashed for trust (instructions are cut at kilobytes anyway).
constexpr size_t kMaxHashedBytes = 4 << 20;

class Loader {
 public:
  Loader(const InstructionRoots& roots, const InstructionLimits& limits)
      : roots_(roots), limits_(limits), left_(limits.max_total_bytes) {
    const fs::path tree = canonical_or_none(roots.work_tree).value_or(roots.work_tree);
    project_root_ = repository_root(tree).value_or(tree);
    if (roots.home) {
      if (auto c = canonical_or_none(*roots.home / ".claude")) user_roots_.push_back(*c);
    }
    if (roots.config_home) {
      if (auto c = canonical_or_none(*roots.config_home / "mecha")) user_roots_.push_back(*c);
    }
    // Directories from the project root down to the work tree.
    for (fs::path d = tree;; d = d.parent_path()) {
      project_dirs_.insert(project_dirs_.begin(), d);
      if (d == project_root_ || d == d.parent_path()) break;
    }
  }

  Instructions run() {
    if (roots_.home) load(*roots_.home / ".claude" / "CLAUDE.md", false, 0, std::nullopt);
    if (roots_.config_home)
      load(*roots_.config_home / "mecha" / "AGENTS.md", false, 0, std::nullopt);
    for (const auto& dir : project_dirs_) {
      for (auto name : kProjectFileNames) load(dir / name, true, 0, std::nullopt);
    }
    return std::move(out_);
  }

 private:
  // `project_origin`: the chain of files leading here began with a project file, so only the
  // project root may be read; else the user's config directories may be read too.
  void load(const fs::path& path, bool project_origin, int depth,
            const std::optional<fs::path>& importer) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) return;
    auto real = canonical_or_none(path);
    if (!real) return;
    bool in_project = is_within(*real, project_root_);
    // The user's own file may be a link into their dotfiles: it is read wherever it leads,
    // and what it imports may come from there too.
    if (!project_origin && !importer) user_roots_.push_back(real->parent_path());
    bool in_user = std::any_of(user_roots_.begin(), user_roots_.end(),
                               [&](const fs::path& r) { return is_within(*real, r); });
    if (!(in_project || (!project_origin && in_user))) {
      if (!importer) {
        out_.notes.push_back(fmt::format("{} was not read: it leads outside {}", path.string(),
                                         project_origin ? "the repository" : "your config"));
      }
      return;
    }
    if (!fs::is_regular_file(*real, ec)) return;
    if (!seen_.insert(*real).second) return;
    if (left_ == 0) {
      if (!total_noted_) {
        out_.notes.push_back(
            fmt::format("further instruction files were not read: together they reached {} bytes",
                        limits_.max_total_bytes));
        total_noted_ = true;
      }
      return;
    }

    if (roots_.standing != nullptr && roots_.standing->hidden(*real)) {
      out_.notes.push_back(fmt::format("{} was not read: it {}", path.string(),
                                       FileStanding::why(Standing::kDenied, *real)));
      return;
    }
    InstructionFile f;
    f.path = *real;
    f.project = project_origin;
    f.imported_by = importer;
    f.full_size = static_cast<size_t>(fs::file_size(*real, ec));
    if (ec) return;
    const size_t want = std::min(limits_.max_file_bytes, left_);
    // Trust is for the whole content, so the whole is read to be hashed when it is of a
    // sane size; a bigger file is read only as far as it is quoted, and is not trusted.
    const bool hashable = f.full_size <= kMaxHashedBytes;
    std::ifstream in(*real, std::ios::binary);
    if (!in) return;
    const size_t read_size = hashable ? std::max(f.full_size, want) + 1 : want + 1;
    f.text.resize(read_size);
    in.read(f.text.data(), static_cast<std::streamsize>(read_size));
    f.text.resize(static_cast<size_t>(in.gcount()));
    if (roots_.standing == nullptr) {
      f.standing =
          project_origin || importer_in_project(*real) ? Standing::kUntrusted : Standing::kOwn;
    } else {
      f.standing = roots_.standing->of(*real, f.text);
      if (!hashable && f.standing == Standing::kTrusted) f.standing = Standing::kUntrusted;
    }
    if (!readable(f.standing)) {
      out_.notes.push_back(fmt::format("{} was not read: it {}", path.string(),
                                       FileStanding::why(f.standing, *real)));
      return;
    }
    if (f.text.size() > want) {
      f.text.resize(utf8_boundary(f.text, want));
      f.cut = true;
    }
    left_ -= std::min(left_, f.text.size());
    if (f.cut && want < limits_.max_file_bytes) left_ = 0;  // the total is what cut it

    std::vector<std::string> imports =
        depth < limits_.max_import_depth ? find_imports(f.text) : std::vector<std::string>{};
    const fs::path dir = real->parent_path();
    out_.files.push_back(std::move(f));
    for (const auto& spec : imports) {
      fs::path target;
      if (spec.starts_with("~/")) {
        if (!roots_.home) continue;
        target = *roots_.home / spec.substr(2);
      } else {
        target = fs::path(spec).is_absolute() ? fs::path(spec) : dir / spec;
      }
      load(target, project_origin, depth + 1, *real);
    }
  }

  bool importer_in_project(const fs::path& real) const { return is_within(real, project_root_); }

  const InstructionRoots& roots_;
  const InstructionLimits& limits_;
  fs::path project_root_;
  std::vector<fs::path> project_dirs_;
  std::vector<fs::path> user_roots_;
  std::set<fs::path> seen_;
  size_t left_;
  bool total_noted_ = false;
  Instructions out_;
};

}  // namespace

std::optional<fs::path> repository_root(const fs::path& dir) {
  std::error_code ec;
  for (fs::path d = dir;; d = d.parent_path()) {
    if (fs::exists(fs::symlink_status(d / ".git", ec))) return d;
    if (d == d.parent_path()) return std::nullopt;
  }
}

std::vector<std::string> find_imports(const std::string& text) {
  std::vector<std::string> out;
  bool in_fence = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (is_fence(line)) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence) continue;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '`') {
        // A code span: a run of n backticks up to the next run of exactly n.
        size_t n = 0;
        while (i + n < line.size() && line[i + n] == '`') ++n;
        size_t j = i + n;
        size_t close = std::string_view::npos;
        while (j < line.size()) {
          if (line[j] != '`') {
            ++j;
            continue;
          }
          size_t m = 0;
          while (j + m < line.size() && line[j + m] == '`') ++m;
          if (m == n) {
            close = j;
            break;
          }
          j += m;
        }
        i = close == std::string_view::npos ? i + n - 1 : close + n - 1;
        continue;
      }
      if (line[i] != '@' || (i > 0 && !is_space(line[i - 1]))) continue;
      std::string path;
      size_t j = i + 1;
      while (j < line.size() && !is_space(line[j])) {
        if (line[j] == '\\' && j + 1 < line.size() && line[j + 1] == ' ') {
          path += ' ';
          j += 2;
          continue;
        }
        path += line[j++];
      }
      if (!path.empty()) out.push_back(std::move(path));
      i = j;
    }
  }
  return out;
}

bool Instructions::untrusted() const {
  return std::any_of(files.begin(), files.end(),
                     [](const InstructionFile& f) { return f.standing == Standing::kUntrusted; });
}

Instructions load_instructions(const InstructionRoots& roots, const InstructionLimits& limits) {
  return Loader(roots, limits).run();
}

}  // namespace mecha::agent
