#include "guard/path_model.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

namespace mecha::guard {

std::string expand_home(const std::string& pattern, const std::string& home) {
  if (pattern == "~") return home;
  if (pattern.rfind("~/", 0) == 0) return home + pattern.substr(1);
  return pattern;
}

size_t first_glob(std::string_view text) { return text.find_first_of("*?["); }

std::string normalise(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (std::string_view p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

bool within(std::string_view path, std::string_view base) {
  if (base == "/") return true;
  if (path.size() < base.size() || path.compare(0, base.size(), base) != 0) return false;
  return path.size() == base.size() || path[base.size()] == '/';
}

namespace {

// A plain loop: called for every secret location on every path, where find_first_of's
// memchr per character costs more than the comparison.
bool has_glob(std::string_view s) {
  for (char c : s)
    if (c == '*' || c == '?' || c == '[') return true;
  return false;
}

// A pattern matches a path when it matches the path or one of its ancestors.
bool matches_location(const std::string& pattern, const std::string& path) {
  if (!has_glob(pattern)) return within(path, pattern);
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (fnmatch(pattern.c_str(), prefix.c_str(), FNM_PATHNAME) == 0) return true;
    }
  }
  return false;
}

// `~user/x`: the home of another user, as the shell expands it.
std::string user_home(std::string_view user) {
  return user == "root" ? std::string("/root") : "/home/" + std::string(user);
}

// A text that starts with `~` the shell did not expand where the word was cooked (after a
// brace expansion, in an option's value, in a program's literal code) is still read as the
// home, or as `~user`'s home: refusing a file literally named `~` is the cheaper mistake.
std::string expand_tilde(const std::string& t, const std::string& home) {
  if (t.empty() || (t[0] != '~' && t[0] != kHome)) return t;
  size_t slash = t.find('/');
  std::string_view user =
      std::string_view(t).substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  std::string rest = slash == std::string::npos ? std::string() : t.substr(slash);
  if (user.empty()) return home + rest;
  for (char c : user)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return t;
  return user_home(user) + rest;
}

// /proc/self/root/etc and /proc/1/root/etc are /etc.
std::string through_proc_root(const std::string& path) {
  if (path.rfind("/proc/", 0) != 0) return path;
  size_t pid_end = path.find('/', 6);
  if (pid_end == std::string::npos) return path;
  if (path.compare(pid_end, 5, "/root") != 0) return path;
  if (path.size() != pid_end + 5 && path[pid_end + 5] != '/') return path;
  std::string rest = path.substr(pid_end + 5);
  return rest.empty() ? "/" : rest;
}

// How much of a word is known.
enum class Known { kExact, kChild, kDynamic };

// The absolute text of the part of a word known in advance, or "" when it cannot be placed.
// For a glob, the directory of its first glob component (kChild: something in it; `*` alone
// stands for everything in it, which for deletion is the directory itself; `.*` also
// matches `..` in older shells). For an unknown part, the directory before it (kDynamic).
std::string absolute_text(const ShellWord& word, const std::string& cwd, const Places& places,
                          Known& known) {
  std::string t = word.text;
  known = Known::kExact;
  size_t unknown = t.find(kUnknown);
  if (unknown != std::string::npos) {
    known = Known::kDynamic;
    t = t.substr(0, unknown);
    size_t slash = t.rfind('/');
    if (slash == std::string::npos) {
      if (t.empty() || t == std::string(1, kHome)) return "";  // `$x`, `~$x`: anything at all
      t = ".";
    } else {
      t = t.substr(0, slash + 1);
    }
  } else if (word.glob) {
    size_t g = first_glob(t);
    if (g != std::string::npos) {
      size_t start = t.rfind('/', g);
      start = start == std::string::npos ? 0 : start + 1;
      size_t end = t.find('/', g);
      std::string comp =
          t.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (comp.find_first_not_of('*') == std::string::npos) {
        t = t.substr(0, start) + ".";
      } else if (comp[0] == '.' && comp.find_first_not_of("*?", 1) == std::string::npos) {
        t = t.substr(0, start) + "..";
      } else {
        t = t.substr(0, start) + ".";
        known = Known::kChild;
      }
    }
  }
  t = expand_tilde(t, places.home);
  if (t.empty()) return cwd;
  if (t[0] == '/') return t;
  if (cwd.empty()) return "";
  return cwd + "/" + t;
}

// `~/.ss*/id_rsa`: could the glob expand to a secret location or something under it?
bool glob_reaches_secret(const ShellWord& word, const std::string& cwd, const Places& places) {
  std::string t = expand_tilde(word.text, places.home);
  if (t.empty()) return false;
  if (t[0] != '/') {
    if (cwd.empty()) return false;
    t = cwd + "/" + t;
  }
  std::string pattern = normalise(t);
  for (const std::string& s : places.secrets) {
    std::string secret = expand_home(s, places.home);
    if (within(places.home, secret)) continue;
    size_t comps = static_cast<size_t>(std::count(secret.begin(), secret.end(), '/'));
    // The pattern's first `comps` components against the secret location.
    size_t cut = 0, seen = 0;
    while (cut < pattern.size() && seen <= comps) {
      if (pattern[cut] == '/' && ++seen > comps) break;
      ++cut;
    }
    std::string head = pattern.substr(0, cut);
    if (fnmatch(head.c_str(), secret.c_str(), FNM_PATHNAME) == 0) return true;
    if (fnmatch(secret.c_str(), head.c_str(), FNM_PATHNAME) == 0) return true;
  }
  return false;
}

// The folder a secret location stands for: the location itself, or for a pattern the folder
// before its first pattern character ("/proc/*/environ" -> "/proc/"). `*globbed` says which.
std::string location_base(const std::string& location, bool* globbed) {
  size_t glob = 0;
  while (glob < location.size() && location[glob] != '*' && location[glob] != '?' &&
         location[glob] != '[')
    ++glob;
  *globbed = glob < location.size();
  std::string base = location.substr(0, glob);
  return *globbed ? base.substr(0, base.rfind('/') + 1) : base;
}

// The components of a normalised absolute path ("/" has none).
std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 1;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// What a pattern (components) may name, held against one path: the path or something under
// it, or a directory strictly above it that is deeper than `floor` components. A component
// `**` stands for any number of names (bash's globstar; leading dots only with dotglob), and
// an empty one for any number of any names (the unknown rest of a word).
struct Reach {
  bool at_or_under = false;
  bool above = false;
};

Reach pattern_reach(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
                    size_t floor, bool dotglob) {
  const int flags = FNM_EXTMATCH | (dotglob ? 0 : FNM_PERIOD);
  const size_t n = pattern.size(), m = path.size();
  // matched[i * (m + 1) + j]: the first i pattern components can name the first j of the path.
  std::vector<char> matched((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> char& { return matched[i * (m + 1) + j]; };
  at(0, 0) = 1;
  Reach r;
  for (size_t i = 0; i <= n; ++i) {
    for (size_t j = 0; j <= m; ++j) {
      if (!at(i, j)) continue;
      if (j == m) r.at_or_under = true;
      if (i == n) {
        if (j < m && j > floor) r.above = true;
        continue;
      }
      const std::string& p = pattern[i];
      if (p.empty() || p == "**") {
        at(i + 1, j) = 1;
        if (j < m && (p.empty() || dotglob || path[j][0] != '.')) at(i, j + 1) = 1;
      } else if (j < m && fnmatch(p.c_str(), path[j].c_str(), flags) == 0) {
        at(i + 1, j + 1) = 1;
      }
    }
  }
  return r;
}

// `*`, `?` and `[` taken literally, for the known part of a word with no unquoted glob.
std::string escape_glob(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Marks what a path of the tree is to its protected parts. An exact path is compared as it
// is; a glob, and a word with an unknown part, are matched as patterns against each part, so
// that what they may name counts as much as what they name.
void mark_protected(const ShellWord& word, Known known, const std::string& cwd,
                    const Places& places, bool dotglob, Resolved& r) {
  const std::string& tree = places.work_tree;
  if (!word.glob && known != Known::kDynamic) {
    for (const std::string& p : places.protected_) {
      std::string part = normalise(tree + "/" + p);
      if (within(r.path, part)) {
        r.protected_ = true;
        r.protected_part = p;
        return;
      }
      if (r.path != tree && within(part, r.path) && !r.holds_protected) {
        r.holds_protected = true;
        r.protected_part = p;
      }
    }
    return;
  }
  std::string text = expand_tilde(word.text, places.home);
  const bool open_ended = known == Known::kDynamic;
  if (open_ended) {
    text = text.substr(0, text.find(kUnknown));
    if (!word.glob) text = escape_glob(text);
  }
  if (text.empty() || (text[0] != '/' && cwd.empty())) return;
  std::string absolute = text[0] == '/' ? text : cwd + "/" + text;
  std::vector<std::string> pattern;
  if (!open_ended) {
    pattern = components(normalise(absolute));
  } else {
    // What follows the known part is anything, slashes included: the known start of a name
    // (`.cl` in `.cl$x`) or a directory holding a protected part (`.git/` in `.git/$x`) may
    // lead into one. A name all unknown at the top of the tree (`./$x`) is left to the
    // sandbox, as any unknown path is; so is `..$x`, which may climb anywhere.
    size_t slash = absolute.rfind('/');
    std::string name = absolute.substr(slash + 1);
    std::string dir = normalise(absolute.substr(0, slash));
    if (name == ".." || (name.empty() && dir == tree)) return;
    pattern = components(dir);
    if (!name.empty()) pattern.push_back(name + "*");
    pattern.emplace_back();
  }
  const size_t floor = static_cast<size_t>(std::count(tree.begin(), tree.end(), '/'));
  for (const std::string& p : places.protected_) {
    Reach reach = pattern_reach(pattern, components(normalise(tree + "/" + p)), floor, dotglob);
    if (reach.at_or_under) {
      r.protected_ = true;
      r.protected_part = p;
      return;
    }
    if (reach.above && !r.holds_protected) {
      r.holds_protected = true;
      r.protected_part = p;
    }
  }
}

}  // namespace

bool tree_holds_no_secret(const Places& places) {
  const std::string& tree = places.work_tree;
  for (const std::string& s : places.secrets) {
    bool globbed = false;
    std::string base = location_base(expand_home(s, places.home), &globbed);
    if (base.empty() || within(base, tree) || within(tree, normalise(base))) return false;
  }
  return !tree.empty() && tree.rfind("/home/", 0) != 0;
}

std::string secret_under(const std::string& path, const Places& places) {
  if (path.empty()) return "";
  for (const std::string& s : places.secrets) {
    bool globbed = false;
    std::string base = normalise(location_base(expand_home(s, places.home), &globbed));
    // The location itself is a plain read of a secret, named by resolve_path; the folder a
    // glob stands in (/proc for /proc/*/environ) holds its matches.
    if (base.empty() || (base == path && !globbed)) continue;
    // /root is a secret for other users; for root, it is home, and only its secrets are.
    if (!within(s, "~") && within(places.home, base)) continue;
    if (within(base, path)) return s;
  }
  // Other users' homes: /home holds them (ours, and a tree in it, aside).
  if (within("/home", path) && places.home != "/home") return "/home/* (other users' homes)";
  return "";
}

Resolved resolve_path(const ShellWord& word, const std::string& cwd, const Places& places,
                      bool tree_holds_no_secret, bool dotglob) {
  Resolved r;
  Known known = Known::kExact;
  std::string abs = absolute_text(word, cwd, places, known);
  if (abs.empty()) return r;  // kUnknown
  r.path = through_proc_root(normalise(abs));
  const std::string& tree = places.work_tree;
  // Inside a tree that holds no secret, only a glob that climbs out (`*/../..`) could reach one.
  bool skip_secrets = tree_holds_no_secret && within(r.path, tree) &&
                      (!word.glob || word.text.find("..") == std::string::npos);
  for (const std::string& s : places.secrets) {
    if (r.secret || skip_secrets) break;
    bool in_home = s.size() > 1 && s[0] == '~' && s[1] == '/';
    if (!has_glob(s)) {
      // The common case, without building a string: `~/x` is under home, `/x` as written.
      if (in_home) {
        if (within(r.path, places.home) && r.path.size() > places.home.size() &&
            within(std::string_view(r.path).substr(places.home.size()),
                   std::string_view(s).substr(1)))
          r.secret = true;
        continue;
      }
      // /root is a secret for other users; for root, it is home, and only its secrets are.
      if (within(places.home, s)) continue;
      if (within(r.path, s)) r.secret = true;
      continue;
    }
    std::string location = expand_home(s, places.home);
    if (within(places.home, location)) continue;
    if (matches_location(location, r.path)) r.secret = true;
  }
  if (word.glob && !r.secret && !skip_secrets && known != Known::kDynamic)
    r.secret = glob_reaches_secret(word, cwd, places);
  // Another user's home: /home/NAME and anything under it, unless it holds ours or the tree.
  if (!r.secret && r.path.rfind("/home/", 0) == 0 && r.path.size() > 6 &&
      !within(r.path, places.home) && !within(places.home, r.path) &&
      !within(r.path, places.work_tree) && !within(places.work_tree, r.path))
    r.secret = true;
  bool outside = false;
  if (r.path == tree) {
    r.place = known == Known::kExact ? Place::kTree : Place::kInside;
  } else if (within(tree, r.path)) {
    // A glob in a directory above the tree (`/e?c/hosts`, `/*`) matches its siblings too.
    r.place = known == Known::kDynamic ? Place::kUnknown
              : known == Known::kChild ? Place::kOutside
                                       : Place::kAncestor;
  } else if (within(r.path, tree)) {
    r.place = Place::kInside;
  } else {
    outside = true;
    r.place = Place::kOutside;
    for (const std::string& w : places.writable)
      if (within(r.path, w)) r.place = Place::kWritable;
  }
  if (within(r.path, tree)) mark_protected(word, known, cwd, places, dotglob, r);
  // An unknown part may climb out with `..`: only a place outside stays known.
  if (known == Known::kDynamic && r.place != Place::kOutside) r.place = Place::kUnknown;
  if (outside && known == Known::kExact) {
    // A .env file outside the tree is someone else's secrets; inside, it is the project's.
    std::string_view base = std::string_view(r.path).substr(r.path.rfind('/') + 1);
    if (base == ".env" || base.rfind(".env.", 0) == 0) r.secret = true;
  }
  return r;
}

std::string resolve_directory(const ShellWord& word, const std::string& cwd, const Places& places) {
  if (word.dynamic || word.glob) return "";
  std::string t = expand_tilde(word.text, places.home);
  if (t.empty()) return "";
  if (t[0] != '/') {
    if (cwd.empty()) return "";
    t = cwd + "/" + t;
  }
  return through_proc_root(normalise(t));
}

}  // namespace mecha::guard
