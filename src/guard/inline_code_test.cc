#include "guard/inline_code.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

TEST(InlineCode, LanguageOfTheInterpreterName) {
  EXPECT_EQ(language_of("python3.11"), Language::kPython);
  EXPECT_EQ(language_of("perl5.36"), Language::kPerl);
  EXPECT_EQ(language_of("node"), Language::kNode);
  EXPECT_EQ(language_of("php8.2"), Language::kPhp);
  EXPECT_EQ(language_of("pythonista"), Language::kNone);
  EXPECT_EQ(language_of("ls"), Language::kNone);
}

TEST(InlineCode, FindsTheCodeWords) {
  auto code = [](std::vector<std::string> words) {
    std::vector<ShellWord> argv;
    for (auto& w : words) argv.push_back(literal_word(w));
    V out;
    for (auto& w : inline_code_of(language_of(words[0]), argv)) out.push_back(w.text);
    return out;
  };
  EXPECT_EQ(code({"python3", "-u", "-c", "print(1)", "arg"}), V{"print(1)"});
  EXPECT_EQ(code({"python3", "-m", "http.server"}), V{});
  EXPECT_EQ(code({"python3", "script.py", "-c", "x"}), V{});
  EXPECT_EQ(code({"perl", "-ne", "print", "f"}), V{"print"});
  EXPECT_EQ(code({"perl", "-MFile::Path", "-e", "a", "-e", "b"}), (V{"a", "b"}));
  EXPECT_EQ(code({"node", "--eval=x()"}), V{"x()"});
  EXPECT_EQ(code({"php", "-r", "echo 1;"}), V{"echo 1;"});
}

TEST(InlineCode, ShellCommandsInLiteralCode) {
  struct Case {
    Language language;
    std::string code;
    V scripts;
    bool unknown = false;
  } cases[] = {
      {Language::kPython, "import os; os.system(\"rm -rf ~\")", {"rm -rf ~"}},
      {Language::kPython,
       "import subprocess; subprocess.run(['rm', '-rf', '/x'])",
       {"'rm' '-rf' '/x'"}},
      {Language::kPython, "import os; os.system(cmd)", {}, true},
      {Language::kPython, "print('os.system(\"x\")')", {}},  // text, not a call
      {Language::kPython, "x.run(1)", {}},                   // not subprocess
      {Language::kPerl, "`id`; system \"ls\"", {"ls", "id"}},
      {Language::kPerl, "open(F, \"| sh\")", {" sh"}},
      {Language::kPerl, "exec \"/bin/sh\"", {"/bin/sh"}},
      {Language::kRuby, "system('rm -rf ~')", {"rm -rf ~"}},
      {Language::kRuby, "%x(id)", {"id"}},
      {Language::kNode, "require('child_process').execSync('rm -rf ~')", {"rm -rf ~"}},
      {Language::kNode, "console.log(`template ${x}`)", {}},
      {Language::kLua, "os.execute('id')", {"id"}},
  };
  for (const auto& c : cases) {
    CodeEffects e = scan_code(c.language, c.code);
    EXPECT_EQ(e.scripts, c.scripts) << c.code;
    EXPECT_EQ(e.unknown_shell, c.unknown) << c.code;
  }
}

TEST(InlineCode, PathsWritesForksAndSockets) {
  CodeEffects w = scan_code(Language::kPython, "import shutil; shutil.rmtree('/home/user')");
  EXPECT_TRUE(w.writes_files);
  EXPECT_EQ(w.paths, V{"/home/user"});
  CodeEffects r = scan_code(Language::kPython, "print(open('/etc/hosts').read())");
  EXPECT_FALSE(r.writes_files);
  EXPECT_EQ(r.paths, V{"/etc/hosts"});
  EXPECT_TRUE(scan_code(Language::kPython, "open('x.txt', 'w').write('a')").writes_files);
  EXPECT_TRUE(scan_code(Language::kPerl, "open(F, \">/etc/x\")").writes_files);
  EXPECT_EQ(scan_code(Language::kPerl, "open(F, \">/etc/x\")").paths, V{"/etc/x"});
  EXPECT_TRUE(scan_code(Language::kPerl, "fork while fork").fork_loop);
  EXPECT_FALSE(scan_code(Language::kPython, "import os; os.fork()").fork_loop);
  EXPECT_TRUE(scan_code(Language::kPython,
                        "import socket,os;s=socket.socket();s.connect(('h',1));"
                        "os.dup2(s.fileno(),0)")
                  .network_shell);
  EXPECT_FALSE(scan_code(Language::kPython, "import socket; socket.gethostname()").network_shell);
}

}  // namespace
}  // namespace mecha::guard
