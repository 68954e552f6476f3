#include "cli/line_editor.h"

#include <fcntl.h>
#include <histedit.h>
#include <langinfo.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace mecha::cli {

struct LineEditor::Editor {
  EditLine* el = nullptr;
  History* history = nullptr;
  std::string prompt;
  bool interrupted = false;

  ~Editor() {
    if (el) el_end(el);
    if (history) history_end(history);
  }
};

namespace {

char* prompt_of(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return static_cast<LineEditor::Editor*>(data)->prompt.data();
}

// Ctrl-C at the prompt: end the line as if Enter were pressed, marked as dropped.
unsigned char on_interrupt(EditLine* el, int) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  static_cast<LineEditor::Editor*>(data)->interrupted = true;
  return CC_NEWLINE;
}

}  // namespace

LineEditor::LineEditor(std::filesystem::path history_file)
    : history_path_(std::move(history_file)) {
  if (isatty(STDIN_FILENO) != 1) return;
  // libedit decodes keys and prompts by the locale: without a UTF-8 one, "…" and typed
  // accents are not characters to it. C.UTF-8 is in every glibc.
  if (std::setlocale(LC_CTYPE, "") == nullptr ||
      std::string_view(nl_langinfo(CODESET)) != "UTF-8") {
    std::setlocale(LC_CTYPE, "C.UTF-8");
  }
  editor_ = std::make_unique<Editor>();
  Editor& e = *editor_;
  e.history = history_init();
  HistEvent ev;
  history(e.history, &ev, H_SETSIZE, kHistoryLines);
  history(e.history, &ev, H_SETUNIQUE, 1);
  struct stat st {};
  // A symlink is not followed: chat never reads or writes through a planted link.
  if (!history_path_.empty() && ::lstat(history_path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    history(e.history, &ev, H_LOAD, history_path_.c_str());
  }
  e.el = el_init("mecha", stdin, stderr, stderr);
  el_set(e.el, EL_CLIENTDATA, &e);
  el_set(e.el, EL_EDITOR, "emacs");
  el_set(e.el, EL_PROMPT, prompt_of);
  el_set(e.el, EL_HIST, history, e.history);
  // While editing, Ctrl-C is a key (not SIGINT) that drops the line.
  el_set(e.el, EL_SETTY, "-d", "-isig", nullptr);
  // The wide form: el_set's narrow one copies the name and help and never frees them.
  el_wset(e.el, EL_ADDFN, L"mecha-interrupt", L"Drop the line", on_interrupt);
  el_set(e.el, EL_BIND, "^C", "mecha-interrupt", nullptr);
}

LineEditor::~LineEditor() = default;

LineEditor::Read LineEditor::read(const std::string& prompt, bool remember) {
  Read r;
  if (!editor_) {
    std::fputs(prompt.c_str(), stderr);
    std::fflush(stderr);
    if (!std::getline(std::cin, r.line)) return r;
    r.got = Got::kLine;
    return r;
  }
  Editor& e = *editor_;
  e.prompt = prompt;
  e.interrupted = false;
  int count = 0;
  const char* line = el_gets(e.el, &count);
  if (e.interrupted) {
    std::fputs("^C\n", stderr);
    r.got = Got::kInterrupted;
    return r;
  }
  if (line == nullptr || count <= 0) {
    std::fputc('\n', stderr);  // Ctrl-D leaves the cursor after the prompt
    return r;
  }
  r.got = Got::kLine;
  r.line.assign(line, count);
  if (!r.line.empty() && r.line.back() == '\n') r.line.pop_back();
  if (remember && !r.line.empty()) {
    HistEvent ev;
    history(e.history, &ev, H_ENTER, r.line.c_str());
    save_history();
  }
  return r;
}

LineEditor::Read LineEditor::read_message(const std::string& prompt) {
  Read whole = read(prompt, true);
  while (whole.got == Got::kLine && whole.line.ends_with('\\')) {
    whole.line.pop_back();
    Read more = read("… ", true);
    if (more.got != Got::kLine) return more;
    whole.line += "\n" + more.line;
  }
  return whole;
}

void LineEditor::save_history() {
  if (history_path_.empty() || !history_error_.empty()) return;
  int fd =
      ::open(history_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || ::fchmod(fd, 0600) != 0) {
    history_error_ = fmt::format("cannot save the chat history to {}: {}", history_path_.string(),
                                 std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return;
  }
  std::FILE* f = ::fdopen(fd, "w");
  HistEvent ev;
  history(editor_->history, &ev, H_SAVE_FP, f);
  std::fclose(f);
}

}  // namespace mecha::cli
