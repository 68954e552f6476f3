#include "guard/printed_text.h"

#include <cctype>

namespace mecha::guard {
namespace {

// Backslash escapes as echo -e and printf read them; `stop` is set by \c.
std::string unescape(const std::string& s, bool& stop) {
  std::string out;
  for (size_t i = 0; i < s.size() && !stop; ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'e':
        out += '\x1b';
        break;
      case '\\':
        out += '\\';
        break;
      case 'c':
        stop = true;
        break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1]))) {
          char h = s[++i];
          v = v * 16 +
              (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
          ++n;
        }
        out += n == 0 ? std::string("\\x") : std::string(1, static_cast<char>(v));
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        int v = e - '0', n = 1;
        while (n < 4 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7') {
          v = v * 8 + (s[++i] - '0');
          ++n;
        }
        out += static_cast<char>(v & 0xFF);
        break;
      }
      default:
        out += '\\';
        out += e;
    }
  }
  return out;
}

std::optional<std::string> echo(const std::vector<ShellWord>& argv) {
  bool newline = true, escapes = false;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i].text;
    if (a.size() < 2 || a[0] != '-' || a.find_first_not_of("neE", 1) != std::string::npos) break;
    for (char c : a.substr(1)) {
      if (c == 'n') newline = false;
      if (c == 'e') escapes = true;
      if (c == 'E') escapes = false;
    }
  }
  std::string out;
  bool stop = false;
  for (size_t j = i; j < argv.size() && !stop; ++j) {
    if (argv[j].dynamic) return std::nullopt;
    if (j > i) out += ' ';
    out += escapes ? unescape(argv[j].text, stop) : argv[j].text;
  }
  if (newline && !stop) out += '\n';
  return out;
}

std::optional<std::string> printf_text(const std::vector<ShellWord>& argv) {
  size_t i = 1;
  if (i < argv.size() && argv[i].text == "--") ++i;
  if (i >= argv.size() || argv[i].text == "-v" || argv[i].dynamic) return std::nullopt;
  const std::string& format = argv[i].text;
  std::vector<const ShellWord*> args;
  for (size_t j = i + 1; j < argv.size(); ++j) {
    if (argv[j].dynamic) return std::nullopt;
    args.push_back(&argv[j]);
  }
  std::string out;
  size_t next = 0;
  bool stop = false;
  for (int round = 0; round < 64 && !stop; ++round) {
    bool used = false;
    for (size_t k = 0; k < format.size() && !stop; ++k) {
      char c = format[k];
      if (c == '\\') {
        // One escape at a time: the unescaper reads as far as the escape goes.
        std::string piece = format.substr(k, 2);
        if (k + 1 < format.size() &&
            (format[k + 1] == 'x' || (format[k + 1] >= '0' && format[k + 1] <= '7'))) {
          size_t len = 2;
          while (k + len < format.size() && len < 5 &&
                 std::isxdigit(static_cast<unsigned char>(format[k + len])))
            ++len;
          piece = format.substr(k, len);
        }
        out += unescape(piece, stop);
        k += piece.size() - 1;
        continue;
      }
      if (c != '%' || k + 1 >= format.size()) {
        out += c;
        continue;
      }
      size_t spec = k + 1;
      while (spec < format.size() &&
             std::string("-+ #0123456789.").find(format[spec]) != std::string::npos)
        ++spec;
      if (spec >= format.size()) break;
      char conv = format[spec];
      k = spec;
      if (conv == '%') {
        out += '%';
        continue;
      }
      std::string arg = next < args.size() ? args[next]->text : "";
      if (next < args.size()) ++next;
      used = true;
      if (conv == 'b')
        out += unescape(arg, stop);
      else if (conv == 'c')
        out += arg.substr(0, 1);
      else if (conv == 'd' || conv == 'i' || conv == 'u' || conv == 'x' || conv == 'o')
        out += arg.empty() ? "0" : arg;
      else
        out += arg;  // s, q and the rest: the argument itself is what matters
    }
    if (!used || next >= args.size()) break;
  }
  return out;
}

}  // namespace

std::optional<std::string> printed_text(const std::string& name,
                                        const std::vector<ShellWord>& argv) {
  if (name == "echo") return echo(argv);
  if (name == "printf") return printf_text(argv);
  return std::nullopt;
}

}  // namespace mecha::guard
