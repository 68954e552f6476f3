#include "guard/inline_code.h"

#include <cctype>
#include <cstring>
#include <optional>

namespace mecha::guard {
namespace {

struct Literal {
  size_t start = 0;  // the opening quote
  size_t end = 0;    // past the closing quote
  char quote = '"';
  std::string text;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The string literals of the code, and the code with their contents blanked (so that a word
// inside a string is never taken for a call).
std::vector<Literal> literals(const std::string& code, bool backticks, std::string& blanked) {
  std::vector<Literal> out;
  blanked = code;
  size_t i = 0, n = code.size();
  while (i < n && out.size() < 4096) {
    char c = code[i];
    if (c != '"' && c != '\'' && !(backticks && c == '`')) {
      ++i;
      continue;
    }
    bool triple = i + 2 < n && code[i + 1] == c && code[i + 2] == c;
    Literal lit;
    lit.start = i;
    lit.quote = c;
    size_t j = i + (triple ? 3 : 1);
    while (j < n) {
      if (code[j] == '\\' && j + 1 < n) {
        char e = code[j + 1];
        lit.text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        j += 2;
        continue;
      }
      if (code[j] == c && (!triple || (j + 2 < n && code[j + 1] == c && code[j + 2] == c))) break;
      lit.text += code[j++];
    }
    lit.end = std::min(n, j + (triple ? 3 : 1));
    for (size_t k = lit.start + 1; k + 1 < lit.end; ++k) blanked[k] = ' ';
    i = lit.end;
    out.push_back(std::move(lit));
  }
  return out;
}

// Positions just past each call of `name` in the blanked code: a whole word, then spaces
// and an optional `(`.
std::vector<size_t> calls(const std::string& blanked, const char* name) {
  std::vector<size_t> out;
  size_t len = std::strlen(name);
  for (size_t at = blanked.find(name); at != std::string::npos; at = blanked.find(name, at + 1)) {
    if (at > 0 && (word_char(blanked[at - 1]) && name[0] != '.')) continue;
    size_t after = at + len;
    if (after < blanked.size() && word_char(blanked[after]) && word_char(name[len - 1])) continue;
    out.push_back(after);
  }
  return out;
}

const Literal* literal_at(const std::vector<Literal>& lits, size_t pos) {
  for (const Literal& l : lits)
    if (l.start == pos) return &l;
  return nullptr;
}

bool looks_like_path(const std::string& s) {
  if (s.empty() || s.size() > 4096 || s.find('\n') != std::string::npos) return false;
  return s[0] == '/' || s[0] == '~' || s.rfind("./", 0) == 0 || s.rfind("../", 0) == 0;
}

struct Markers {
  std::vector<const char*> shell;   // calls whose first argument is a shell command (or argv)
  std::vector<const char*> writes;  // calls that delete, write or move files
};

const Markers& markers(Language l) {
  static const Markers python{
      {"system",  "popen",  "Popen",   "check_output", "check_call", "getoutput", "getstatusoutput",
       "execl",   "execlp", "execv",   "execvp",       "execve",     "execvpe",   "spawnl",
       "spawnlp", "spawnv", "spawnvp", "pty.spawn",    "run",        "call"},
      {"rmtree",   "remove",     "unlink",      "rmdir",    "removedirs", "rename",
       "renames",  "write_text", "write_bytes", "copyfile", "copy",       "copy2",
       "copytree", "move",       "makedirs",    "mkdir",    "chmod",      "chown",
       "symlink",  "truncate",   "touch",       "write"}};
  static const Markers perl{{"system", "exec", "qx", "open"},
                            {"unlink", "rmtree", "remove_tree", "rename", "mkdir", "chmod", "chown",
                             "symlink", "copy", "move", "print", "truncate", "rmdir"}};
  static const Markers ruby{
      {"system", "exec", "spawn", "popen", "capture2", "capture2e", "capture3", "popen3", "popen2"},
      {"write", "delete", "unlink", "rm_rf", "rm_r", "rm", "rmdir", "rename", "mv", "cp", "chmod",
       "chown", "mkdir", "mkdir_p", "symlink", "touch", "truncate", "binwrite"}};
  static const Markers node{
      {"execSync", "exec", "spawn", "spawnSync", "execFile", "execFileSync"},
      {"writeFileSync", "writeFile", "appendFileSync", "appendFile", "rmSync", "rm", "unlinkSync",
       "unlink", "rmdirSync", "rmdir", "renameSync", "rename", "mkdirSync", "copyFileSync",
       "cpSync", "createWriteStream", "chmodSync", "symlinkSync", "truncateSync"}};
  static const Markers php{{"system", "exec", "shell_exec", "passthru", "popen", "proc_open"},
                           {"file_put_contents", "unlink", "rmdir", "rename", "fopen", "copy",
                            "mkdir", "chmod", "symlink", "touch"}};
  static const Markers lua{{"os.execute", "io.popen"}, {"os.remove", "os.rename", "io.open"}};
  static const Markers none;
  switch (l) {
    case Language::kPython:
      return python;
    case Language::kPerl:
      return perl;
    case Language::kRuby:
      return ruby;
    case Language::kNode:
      return node;
    case Language::kPhp:
      return php;
    case Language::kLua:
      return lua;
    case Language::kNone:
      break;
  }
  return none;
}

// A shell call's argument at `pos`: a literal (its text), a list of literals (joined with
// spaces, as argv), or something else (nullopt).
std::optional<std::string> call_argument(const std::string& blanked,
                                         const std::vector<Literal>& lits, size_t pos) {
  while (pos < blanked.size() &&
         (blanked[pos] == ' ' || blanked[pos] == '(' || blanked[pos] == '\t'))
    ++pos;
  if (pos >= blanked.size()) return std::nullopt;
  if (const Literal* l = literal_at(lits, pos)) {
    if (l->quote == '`' && l->text.find("${") != std::string::npos) return std::nullopt;
    return l->text;
  }
  if (blanked[pos] != '[') return std::nullopt;
  size_t close = blanked.find(']', pos);
  if (close == std::string::npos) return std::nullopt;
  std::string joined;
  for (size_t k = pos + 1; k < close; ++k) {
    char c = blanked[k];
    if (c == ' ' || c == ',' || c == '\t') continue;
    const Literal* l = literal_at(lits, k);
    if (l == nullptr) return std::nullopt;  // a variable among the arguments
    std::string quoted = "'";
    for (char ch : l->text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    joined += (joined.empty() ? "" : " ") + quoted + "'";
    k = l->end - 1;
  }
  return joined;
}

}  // namespace

Language language_of(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  auto versioned = [&](const char* p) {
    size_t len = std::strlen(p);
    return starts(p) && name.find_first_not_of("0123456789.", len) == std::string::npos;
  };
  if (versioned("python") || versioned("pypy")) return Language::kPython;
  if (versioned("perl")) return Language::kPerl;
  if (versioned("ruby")) return Language::kRuby;
  if (name == "node" || name == "nodejs" || name == "bun" || name == "deno") return Language::kNode;
  if (versioned("php")) return Language::kPhp;
  if (versioned("lua") || name == "luajit") return Language::kLua;
  return Language::kNone;
}

std::vector<ShellWord> inline_code_of(Language language, const std::vector<ShellWord>& argv) {
  std::vector<ShellWord> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-') {
      // The first operand is the script file: the rest are its arguments.
      if (language == Language::kNode && (a == "eval" || a == "e")) continue;  // deno eval
      break;
    }
    auto take = [&](size_t at) {  // the value attached at `at`, or the next word
      if (at < a.size()) {
        ShellWord w = argv[i];
        w.text = a.substr(at);
        out.push_back(w);
      } else if (i + 1 < argv.size()) {
        out.push_back(argv[++i]);
      }
    };
    if (a[1] == '-') {
      if (language == Language::kNode && (a == "--eval" || a == "--print")) take(a.size());
      if (language == Language::kNode && (a.rfind("--eval=", 0) == 0)) take(7);
      continue;
    }
    // A bundle of short options: the code letter takes the rest or the next word.
    const char* code_letters = language == Language::kPython ? "c"
                               : language == Language::kPhp  ? "r"
                               : language == Language::kNode ? "ep"
                                                             : "eE";
    bool took = false;
    for (size_t k = 1; k < a.size() && !took; ++k) {
      if (std::strchr(code_letters, a[k]) != nullptr) {
        take(k + 1);
        took = true;
      } else if (language == Language::kPython && std::strchr("mWXQ", a[k]) != nullptr) {
        return out;  // -m module, -W/-X value: not inline code
      } else if (language == Language::kPerl && std::strchr("IMmx", a[k]) != nullptr) {
        break;  // -Ilib, -MModule: the rest of the bundle is a value
      }
    }
    if (took && language == Language::kPython) break;  // the rest are sys.argv
  }
  return out;
}

CodeEffects scan_code(Language language, const std::string& code) {
  CodeEffects e;
  if (language == Language::kNone) return e;
  bool backticks = language == Language::kPerl || language == Language::kRuby ||
                   language == Language::kPhp || language == Language::kNode;
  std::string blanked;
  std::vector<Literal> lits = literals(code, backticks, blanked);
  const Markers& m = markers(language);
  bool python_subprocess = code.find("subprocess") != std::string::npos;
  bool shell_call = false;
  for (const char* name : m.shell) {
    bool generic = std::strcmp(name, "run") == 0 || std::strcmp(name, "call") == 0;
    if (generic && !python_subprocess) continue;
    for (size_t pos : calls(blanked, name)) {
      if (generic && pos > 3 && blanked[pos - std::strlen(name) - 1] == '.') {
        // x.run(...) of something other than subprocess: only `subprocess.run` counts.
        size_t dot = pos - std::strlen(name) - 1;
        size_t start = dot;
        while (start > 0 && word_char(blanked[start - 1])) --start;
        std::string owner = blanked.substr(start, dot - start);
        if (owner != "subprocess" && owner != "sp") continue;
      }
      size_t p = pos;
      while (p < blanked.size() && (blanked[p] == ' ' || blanked[p] == '\t')) ++p;
      if (p >= blanked.size() ||
          (blanked[p] != '(' && blanked[p] != '"' && blanked[p] != '\'' && blanked[p] != '['))
        continue;  // a name, not a call (`import system`, `exec` as a word)
      shell_call = true;
      if (language == Language::kPerl && std::strcmp(name, "open") == 0) {
        // open(F, "| cmd"), open(F, "cmd |"), open(F, "-|", "cmd"): only pipes run commands.
        std::vector<const Literal*> args;
        for (const Literal& l : lits)
          if (l.start >= p && args.size() < 3) args.push_back(&l);
        shell_call = false;
        for (size_t k = 0; k < args.size(); ++k) {
          std::string t = args[k]->text;
          if (t == "-|" || t == "|-") {
            shell_call = true;
            if (k + 1 < args.size())
              e.scripts.push_back(args[k + 1]->text);
            else
              e.unknown_shell = true;
            break;
          }
          size_t a = t.find_first_not_of(" "), b = t.find_last_not_of(" ");
          if (a != std::string::npos && (t[a] == '|' || t[b] == '|')) {
            shell_call = true;
            e.scripts.push_back(
                t.substr(t[a] == '|' ? a + 1 : a, t[b] == '|' ? b - a : std::string::npos));
            break;
          }
          if (a != std::string::npos && (t[a] == '>' || t[a] == '+')) e.writes_files = true;
        }
        continue;
      }
      auto arg = call_argument(blanked, lits, p);
      if (arg) {
        e.scripts.push_back(*arg);
      } else {
        e.unknown_shell = true;
      }
    }
  }
  // Backticks and qx{} run their text (perl, ruby, php); in node they are template strings.
  for (const Literal& l : lits) {
    if (l.quote != '`' || language == Language::kNode) continue;
    shell_call = true;
    if (l.text.find_first_of("$@") != std::string::npos && language != Language::kPhp)
      e.unknown_shell = true;
    else
      e.scripts.push_back(l.text);
  }
  if (language == Language::kPerl) {
    for (size_t pos : calls(blanked, "qx")) {
      if (pos < code.size() && std::strchr("{([/|!", code[pos]) != nullptr) {
        char open = code[pos];
        char close = open == '{' ? '}' : open == '(' ? ')' : open == '[' ? ']' : open;
        size_t end = code.find(close, pos + 1);
        if (end == std::string::npos) continue;
        shell_call = true;
        e.scripts.push_back(code.substr(pos + 1, end - pos - 1));
      }
    }
  }
  if (language == Language::kRuby) {
    for (size_t at = code.find("%x"); at != std::string::npos; at = code.find("%x", at + 1)) {
      if (at + 2 >= code.size()) break;
      char open = code[at + 2];
      char close = open == '{' ? '}' : open == '(' ? ')' : open == '[' ? ']' : open;
      size_t end = code.find(close, at + 3);
      if (end == std::string::npos) continue;
      shell_call = true;
      e.scripts.push_back(code.substr(at + 3, end - at - 3));
    }
  }
  for (const char* name : m.writes) {
    for (size_t pos : calls(blanked, name)) {
      size_t p = pos;
      while (p < blanked.size() && blanked[p] == ' ') ++p;
      if (p < blanked.size() && (blanked[p] == '(' || language == Language::kPerl)) {
        if (std::strcmp(name, "print") == 0) continue;  // printing is not writing
        e.writes_files = true;
      }
    }
  }
  // open(path, 'w') in python, File.open(p, "w") in ruby, io.open(p, "w") in lua.
  for (const Literal& l : lits)
    if (l.text == "w" || l.text == "wb" || l.text == "a" || l.text == "ab" || l.text == "w+" ||
        l.text == "a+" || l.text == "x" || l.text == "r+")
      e.writes_files = true;
  for (const Literal& l : lits) {
    std::string t = l.text;
    size_t a = t.find_first_not_of(" <>+|");
    if (a != std::string::npos && a > 0 && language == Language::kPerl) t = t.substr(a);
    if (looks_like_path(t)) e.paths.push_back(t);
  }
  bool forks = !calls(blanked, "fork").empty();
  bool loops = !calls(blanked, "while").empty() || !calls(blanked, "for").empty() ||
               !calls(blanked, "loop").empty() || !calls(blanked, "until").empty() ||
               !calls(blanked, "times").empty() || !calls(blanked, "setInterval").empty();
  e.fork_loop = forks && loops;
  bool socket = blanked.find("sock") != std::string::npos ||
                blanked.find("Sock") != std::string::npos ||
                blanked.find("createConnection") != std::string::npos ||
                blanked.find("net.connect") != std::string::npos ||
                code.find("/dev/tcp/") != std::string::npos;
  bool shell_io = shell_call || blanked.find("dup2") != std::string::npos ||
                  blanked.find("pty") != std::string::npos ||
                  code.find("/bin/sh") != std::string::npos ||
                  code.find("/bin/bash") != std::string::npos;
  e.network_shell = socket && shell_io;
  return e;
}

}  // namespace mecha::guard
