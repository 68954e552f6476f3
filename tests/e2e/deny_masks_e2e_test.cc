// Deny rules as sandbox masks (issue 45, item 2), through the binary: a Read deny rule hides
// what it names from every program a command runs, not only from the commands the permission
// rules can read, and an Edit deny rule keeps it as it is. The scripted model runs programs in
// four languages (Python, Perl, Node and C compiled in the sandbox) that the rules cannot see
// into; the test checks the files on the host, as well as what came back. A control runs the
// same programs without the rules, so that each test would fail were the masks gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/testing/cassette_run.h"
#include "tools/bash_sandbox.h"

namespace mecha::cli {
namespace {

namespace fs = std::filesystem;
using testing::BinaryResult;
using testing::result_of;
using testing::text_line;
using testing::tool_line;

constexpr const char* kSecret = "sk-live-SECRET-8842";
constexpr const char* kProd = "replicas: 3\n";

std::string masks_slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A program that copies .env to its output file and prints what it read, and one that
// overwrites conf/prod.yml, in one language: the file it is kept in and how it is run.
struct Program {
  std::string language;
  std::string file;
  std::string source;
  std::string command;
};

// Each reader prints what it read, or why it could not, and copies what it read (nothing,
// when it could not) to out-LANGUAGE.txt.
const std::vector<Program>& readers() {
  static const std::vector<Program> programs = {
      {"python", "read.py",
       "try:\n    s = open('.env').read()\nexcept OSError as e:\n    s = ''\n"
       "    print('python could not read:', e.strerror)\n"
       "open('out-python.txt', 'w').write(s)\nprint('python read', repr(s))\n",
       "python3 read.py"},
      {"perl", "read.pl",
       "my $s = '';\nif (open(my $in, '<', '.env')) { local $/; $s = <$in> // ''; }\n"
       "else { print \"perl could not read: $!\\n\"; }\n"
       "open(my $out, '>', 'out-perl.txt') or die; print $out $s; close $out;\n"
       "print \"perl read [$s]\\n\";\n",
       "perl read.pl"},
      {"node", "read.js",
       "const fs = require('fs');\nlet s = '';\n"
       "try { s = fs.readFileSync('.env', 'utf8'); }\n"
       "catch (e) { console.log('node could not read:', e.code); }\n"
       "fs.writeFileSync('out-node.txt', s);\nconsole.log('node read', JSON.stringify(s));\n",
       "node read.js"},
      // Compiled by an earlier command: the rules refuse to run a program the same line
      // writes, which is not what this is about.
      {"c", "read.c",
       "#include <stdio.h>\n#include <string.h>\n#include <errno.h>\nint main(void) {\n"
       "  char buf[256] = {0};\n  size_t n = 0;\n  FILE* in = fopen(\".env\", \"r\");\n"
       "  if (in) n = fread(buf, 1, sizeof buf - 1, in);\n"
       "  else printf(\"c could not read: %s\\n\", strerror(errno));\n"
       "  FILE* out = fopen(\"out-c.txt\", \"w\");\n  fwrite(buf, 1, n, out);\n  fclose(out);\n"
       "  printf(\"c read %zu [%s]\\n\", n, buf);\n  return 0;\n}\n",
       "./read-c"},
  };
  return programs;
}

const std::vector<Program>& writers() {
  static const std::vector<Program> programs = {
      {"python", "write.py",
       "try:\n    open('conf/prod.yml', 'w').write('replicas: 0 # python\\n')\n"
       "    print('python wrote')\nexcept OSError as e:\n"
       "    print('python could not write:', e.strerror)\n",
       "python3 write.py"},
      {"perl", "write.pl",
       "if (open(my $f, '>', 'conf/prod.yml')) { print $f \"replicas: 0 # perl\\n\"; "
       "print \"perl wrote\\n\"; }\nelse { print \"perl could not write: $!\\n\"; }\n",
       "perl write.pl"},
      {"node", "write.js",
       "try { require('fs').writeFileSync('conf/prod.yml', 'replicas: 0 # node\\n');\n"
       "      console.log('node wrote'); }\n"
       "catch (e) { console.log('node could not write:', e.code); }\n",
       "node write.js"},
      {"c", "write.c",
       "#include <stdio.h>\n#include <string.h>\n#include <errno.h>\nint main(void) {\n"
       "  FILE* f = fopen(\"conf/prod.yml\", \"w\");\n"
       "  if (!f) { printf(\"c could not write: %s\\n\", strerror(errno)); return 0; }\n"
       "  fputs(\"replicas: 0 # c\\n\", f);\n  fclose(f);\n  printf(\"c wrote\\n\");\n"
       "  return 0;\n}\n",
       "./write-c"},
  };
  return programs;
}

class SandboxDenyMasksE2E : public testing::CassetteRunTest {
 protected:
  SandboxDenyMasksE2E() : CassetteRunTest("tidy the project") {}

  void SetUp() override {
    if (Status s = tools::sandbox_available(); !s.ok()) GTEST_SKIP() << s.message();
    dir_.write(".env", std::string("API_KEY=") + kSecret + "\n");
    dir_.write("conf/prod.yml", kProd);
    for (const auto* list : {&readers(), &writers()})
      for (const Program& p : *list) dir_.write(p.file, p.source);
  }

  // The tree's settings deny `rules`, trusted by the user.
  void deny(const std::vector<std::string>& rules) {
    dir_.write(".claude/settings.json", Json{{"permissions", {{"deny", rules}}}}.dump());
    BinaryResult r = mecha({"trust", ".claude/settings.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Compiles the C programs, then runs each of `programs` with Bash, as `prefix`N; the
  // events.
  std::vector<Json> run_programs(const std::vector<Program>& programs, const std::string& prefix) {
    std::string lines = tool_line("main", "cc", "Bash",
                                  {{"command", "gcc -o read-c read.c && gcc -o write-c write.c"}});
    for (size_t i = 0; i < programs.size(); ++i)
      lines += tool_line("main", fmt::format("{}{}", prefix, i), "Bash",
                         {{"command", programs[i].command}});
    std::vector<Json> events = run(lines + text_line("main", "done"));
    EXPECT_EQ(result_of(events, "cc"), "Exit code: 0");
    return events;
  }

  std::string file(const std::string& rel) const { return masks_slurp(dir_.path() / rel); }
};

TEST_F(SandboxDenyMasksE2E, AReadRuleHidesTheFileFromProgramsInEveryLanguage) {
  deny({"Read(./.env)"});
  const std::vector<Json> events = run_programs(readers(), "r");
  for (size_t i = 0; i < readers().size(); ++i) {
    const std::string& language = readers()[i].language;
    // The program ran to its end, and had nothing to copy.
    const std::string result = result_of(events, fmt::format("r{}", i));
    EXPECT_NE(result.find(language + " read"), std::string::npos) << language << ": " << result;
    EXPECT_EQ(result.find(kSecret), std::string::npos) << language << ": " << result;
    ASSERT_TRUE(fs::exists(dir_.path() / ("out-" + language + ".txt"))) << language;
    EXPECT_EQ(file("out-" + language + ".txt"), "") << language;
  }
  for (const Json& e : events) EXPECT_EQ(e.dump().find(kSecret), std::string::npos) << e.dump();
  EXPECT_EQ(file(".env"), std::string("API_KEY=") + kSecret + "\n");
}

TEST_F(SandboxDenyMasksE2E, AnEditRuleKeepsTheFileAsItIsAgainstProgramsInEveryLanguage) {
  deny({"Edit(./conf/prod.yml)"});
  const std::vector<Json> events = run_programs(writers(), "w");
  for (size_t i = 0; i < writers().size(); ++i) {
    const std::string& language = writers()[i].language;
    const std::string result = result_of(events, fmt::format("w{}", i));
    EXPECT_NE(result.find(language + " could not write"), std::string::npos)
        << language << ": " << result;
  }
  EXPECT_EQ(file("conf/prod.yml"), kProd);
}

// Without the rules the same programs read the secret and change the file: the two tests
// above hold because of the masks, not because the programs fail.
TEST_F(SandboxDenyMasksE2E, WithoutTheRulesTheSameProgramsReadAndWrite) {
  std::vector<Program> all = readers();
  all.insert(all.end(), writers().begin(), writers().end());
  const std::vector<Json> events = run_programs(all, "p");
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& language = all[i].language;
    const std::string result = result_of(events, fmt::format("p{}", i));
    if (i < readers().size()) {
      EXPECT_NE(result.find(kSecret), std::string::npos) << language << ": " << result;
      EXPECT_EQ(file("out-" + language + ".txt"), std::string("API_KEY=") + kSecret + "\n")
          << language;
    } else {
      EXPECT_NE(result.find(language + " wrote"), std::string::npos) << language << ": " << result;
    }
  }
  EXPECT_EQ(file("conf/prod.yml"), "replicas: 0 # c\n");
}

// A program may move the folder that holds what a rule names, which no rule reads: the
// folder keeps its mask as it goes (a mount moves with it), but on the host the file is then
// elsewhere, where the rule does not name it, and a new one may stand in its place. The
// folders on the way to what a rule names are held where they are.
TEST_F(SandboxDenyMasksE2E, MovingTheFolderThatHoldsAMaskedFileDoesNotCarryItPastTheRule) {
  deny({"Read(./secrets/**)", "Read(**/.env)", "Edit(./conf/prod.yml)"});
  dir_.write("secrets/api/key.txt", std::string("KEY ") + kSecret + "\n");
  dir_.write("svc/deep/.env", std::string("DEEP ") + kSecret + "\n");
  dir_.write("move.py", R"py(import os, sys
def attempt(what, f):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, "failed:", e.strerror)
attempt("move secrets", lambda: os.rename("secrets", "s2"))
attempt("move secrets/api", lambda: os.rename("secrets/api", "api2"))
attempt("move svc", lambda: os.rename("svc", "svc2"))
attempt("move svc/deep", lambda: os.rename("svc/deep", "deep2"))
def plant():
    os.rename("conf", "conf-old")
    os.mkdir("conf")
    open("conf/prod.yml", "w").write("replicas: 0 # planted\n")
attempt("plant conf", plant)
attempt("replace prod.yml", lambda: (open("new.yml", "w").write("replicas: 0 # new\n"),
                                     os.replace("new.yml", "conf/prod.yml")))
attempt("remove prod.yml", lambda: os.unlink("conf/prod.yml"))
)py");
  // Then, in a new sandbox, whatever the moves left is read by a program.
  dir_.write("look.py", R"py(import os
for top, _, names in os.walk("."):
    for name in names:
        try:
            text = open(os.path.join(top, name), errors="replace").read()
        except OSError:
            continue
        if "SECRET-" + "8842" in text:
            print("found in", os.path.join(top, name), text)
print("looked")
)py");
  const std::vector<Json> events =
      run(tool_line("main", "m1", "Bash", {{"command", "python3 move.py"}}) +
          tool_line("main", "m2", "Bash", {{"command", "python3 look.py"}}) +
          text_line("main", "done"));
  const std::string moved = result_of(events, "m1");
  for (const char* what : {"move secrets", "move secrets/api", "move svc", "move svc/deep",
                           "plant conf", "replace prod.yml", "remove prod.yml"}) {
    EXPECT_NE(moved.find(std::string(what) + " failed"), std::string::npos) << what << ":\n"
                                                                            << moved;
  }
  EXPECT_EQ(result_of(events, "m2").rfind("looked\n", 0), 0u) << result_of(events, "m2");
  for (const Json& e : events) EXPECT_EQ(e.dump().find(kSecret), std::string::npos) << e.dump();
  // On the host everything is where it was.
  EXPECT_EQ(file("conf/prod.yml"), kProd);
  EXPECT_EQ(file("secrets/api/key.txt"), std::string("KEY ") + kSecret + "\n");
  EXPECT_EQ(file("svc/deep/.env"), std::string("DEEP ") + kSecret + "\n");
  for (const char* gone : {"s2", "api2", "svc2", "deep2", "conf-old"})
    EXPECT_FALSE(fs::exists(dir_.path() / gone)) << gone;
}

}  // namespace
}  // namespace mecha::cli
