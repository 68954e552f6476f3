// `mecha run` recording into sessions, `--resume`, limits, and `mecha sessions`, through the
// built binary.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "base/strict_json.h"
#include "store/session_store.h"
#include "store/testing/temp_dir.h"

namespace mecha::cli {
namespace {

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SessionsCli : public ::testing::Test {
 protected:
  // Runs the binary in the work tree; `args` is shell text (the tests quote it). The child
  // gets its own HOME and XDG_STATE_HOME in the temp dir (`env` may override them, as
  // "NAME=value ..." shell text); this process's environment is never changed.
  Ran mecha(const std::string& args, const std::string& env = "", std::string cwd = "") {
    if (cwd.empty()) cwd = tree();
    std::string cmd = fmt::format(
        "cd '{cwd}' && HOME='{dir}/home' XDG_CONFIG_HOME='{dir}/home/.config' "
        "XDG_STATE_HOME='{dir}/state' {env} '{bin}/mecha' {args} >'{dir}/out' 2>'{dir}/err' "
        "</dev/null",
        fmt::arg("cwd", cwd), fmt::arg("dir", dir_.path().string()), fmt::arg("env", env),
        fmt::arg("bin", MECHA_BINARY_DIR), fmt::arg("args", args));
    int status = std::system(cmd.c_str());
    Ran r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_.path() / "out");
    r.err = slurp(dir_.path() / "err");
    return r;
  }
  std::string tree() const { return (dir_.path() / "tree").string(); }
  // The store a run makes by default: $XDG_STATE_HOME/mecha/sessions.db.
  std::string store() const { return (dir_.path() / "state" / "mecha" / "sessions.db").string(); }
  void write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories(dir_.path() / "tree");
    std::ofstream(dir_.path() / "tree" / name) << text;
  }
  void SetUp() override { std::filesystem::create_directories(dir_.path() / "tree"); }

  // The last line of --json output: the done event.
  static Json done_of(const Ran& r) {
    std::string s = r.out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    auto j = parse_json(s.substr(s.rfind('\n') + 1), "done");
    EXPECT_TRUE(j.ok()) << r.out << r.err;
    return j.ok() ? *j : Json();
  }

  store::testing::TempDir dir_;
};

constexpr const char* kTwoTurns = R"({"mecha_cassette": 1}
{"response": {"content": [{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t1", "name": "Grope", "input": {"pattern": "ERROR"}}], "usage": {"input_tokens": 1000000, "output_tokens": 0}}}
{"response": {"content": [{"type": "text", "text": "found 2 errors"}], "usage": {"input_tokens": 1000000, "output_tokens": 0}}}
)";

// Checks that the resumed request holds the first run's tool result.
constexpr const char* kFollowUp = R"({"mecha_cassette": 1}
{"expect": {"last_tool_result_contains": "unknown tool 'Grope'"}, "response": {"content": [{"type": "text", "text": "still 2"}], "usage": {"input_tokens": 10, "output_tokens": 1}}}
)";

constexpr const char* kPricing = R"([pricing."cassette"]
input_per_mtok = 1.0
output_per_mtok = 1.0
)";

TEST_F(SessionsCli, RunRecordsASessionAndResumeContinuesIt) {
  write("two.jsonl", kTwoTurns);
  write("follow.jsonl", kFollowUp);
  Ran first = mecha("run --json --model cassette:two.jsonl 'find errors in log.txt'");
  ASSERT_EQ(first.code, 0) << first.err;
  Json done = done_of(first);
  std::string id = done["session"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_TRUE(std::filesystem::exists(store()));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(tree()) / ".mecha"));

  Ran second = mecha("run --json --model cassette:follow.jsonl --resume last 'and now?'");
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  EXPECT_EQ(done_of(second)["session"], id);
  EXPECT_EQ(done_of(second)["text"], "still 2");

  Ran list = mecha("sessions list --json");
  ASSERT_EQ(list.code, 0) << list.err;
  auto arr = parse_json(list.out, "list");
  ASSERT_TRUE(arr.ok());
  ASSERT_EQ(arr->size(), 1u);
  Json s = (*arr)[0];
  EXPECT_EQ(s["id"], id);
  EXPECT_EQ(s["title"], "find errors in log.txt");
  EXPECT_EQ(s["turns"], 3);
  EXPECT_TRUE(s["cost_usd"].is_null());
  EXPECT_EQ(s["unpriced_calls"], 3);
  EXPECT_EQ(s["untrusted"], false);
  EXPECT_EQ(s["records"], 14);

  Ran show = mecha("sessions show " + id);
  ASSERT_EQ(show.code, 0) << show.err;
  std::string text =
      std::regex_replace(show.out, std::regex(R"(\d{4}-\d\d-\d\dT[\d:.]+Z)"), "TIME");
  text = std::regex_replace(text, std::regex(R"(pid \d+)"), "pid N");
  EXPECT_EQ(text, fmt::format(R"(session {}
title: find errors in log.txt
started: TIME
turns: 3 · cost: unpriced (3 unpriced calls) · untrusted: no
── run started TIME (pid N)

> find errors in log.txt
Looking.
● Grope(pattern="ERROR")
  ⎿ error [t1]:
    unknown tool 'Grope'; the tools that exist are: Read, Write, Edit, Glob, Grep, Bash, BashOutput, KillShell, WebFetch, TodoWrite, Remember, Recall, Task
found 2 errors
── run ended: completed · 2 turns · cost unknown
── run started TIME (pid N), resumed

> and now?
still 2
── run ended: completed · 1 turn · cost unknown
)",
                              id));

  Ran exported = mecha("sessions export " + id.substr(0, 17));
  ASSERT_EQ(exported.code, 0) << exported.err;
  std::istringstream lines(exported.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    auto j = parse_json(line, "export");
    ASSERT_TRUE(j.ok()) << line;
    EXPECT_EQ((*j)["seq"], ++n);
  }
  EXPECT_EQ(n, 14);

  Ran rm = mecha("sessions rm --json " + id);
  ASSERT_EQ(rm.code, 0) << rm.err;
  EXPECT_EQ(rm.out, fmt::format("{{\"removed\":\"{}\"}}\n", id));
  Ran gone = mecha("sessions show " + id);
  EXPECT_EQ(gone.code, 2);
  EXPECT_EQ(gone.err, fmt::format("mecha: no session {} in {}\n", id, store()));
}

TEST_F(SessionsCli, ListIsATableForPeople) {
  write("two.jsonl", kTwoTurns);
  write("config.toml", kPricing);
  Ran run = mecha("run --json --config config.toml --model cassette:two.jsonl 'first task'");
  ASSERT_EQ(run.code, 0) << run.err;
  std::string id = done_of(run)["session"];
  Ran list = mecha("sessions list");
  ASSERT_EQ(list.code, 0) << list.err;
  std::string text =
      std::regex_replace(list.out, std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d)"), "YYYY-MM-DD hh:mm");
  EXPECT_EQ(text,
            fmt::format("ID                    STARTED (UTC)     TURNS        COST  UNTRUSTED  "
                        "TITLE\n"
                        "{}  YYYY-MM-DD hh:mm      2     $2.0000  no         first task\n",
                        id));
}

TEST_F(SessionsCli, HumanRunPrintsTheSessionId) {
  write("two.jsonl", kTwoTurns);
  Ran r = mecha("run --model cassette:two.jsonl 'find errors'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.err, m, std::regex(R"(^mecha: session (\d{8}-\d{6}-[0-9a-z]{4})\n)")))
      << r.err;
}

TEST_F(SessionsCli, ALimitExitsWith3AndTheSessionResumes) {
  write("two.jsonl", kTwoTurns);
  write("follow.jsonl", kFollowUp);
  write("config.toml", kPricing);
  Ran r = mecha("run --json --config config.toml --max-turns 1 --model cassette:two.jsonl 'go'");
  EXPECT_EQ(r.code, 3) << r.err;
  Json done = done_of(r);
  EXPECT_EQ(done["status"], "limits_exceeded");
  EXPECT_EQ(done["limit"], "max_turns (1)");
  EXPECT_EQ(done["cost_usd"], 1.0);
  EXPECT_EQ(done["unpriced_calls"], 0);
  Ran resumed = mecha("run --json --config config.toml --model cassette:follow.jsonl --resume " +
                      done["session"].get<std::string>() + " 'continue'");
  EXPECT_EQ(resumed.code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(done_of(resumed)["status"], "completed");
}

TEST_F(SessionsCli, CostCeilingExitsWith3) {
  write("two.jsonl", kTwoTurns);
  write("config.toml", kPricing);
  Ran r = mecha("run --json --config config.toml --max-cost 0.5 --model cassette:two.jsonl 'go'");
  EXPECT_EQ(r.code, 3) << r.err;
  Json done = done_of(r);
  EXPECT_EQ(done["limit"], "max_cost ($0.5000)");
  EXPECT_EQ(done["turns"], 1);
  EXPECT_EQ(done["cost_usd"], 1.0);
}

TEST_F(SessionsCli, ASessionInUseIsRefusedNamingThePid) {
  write("two.jsonl", kTwoTurns);
  Ran first = mecha("run --json --model cassette:two.jsonl 'go'");
  ASSERT_EQ(first.code, 0) << first.err;
  std::string id = done_of(first)["session"];
  auto st = store::SessionStore::open(store());
  ASSERT_TRUE(st.ok());
  auto held = (*st)->open_session(id);  // this process runs it now
  ASSERT_TRUE(held.ok());
  Ran second = mecha("run --json --model cassette:two.jsonl --resume " + id + " 'again'");
  EXPECT_EQ(second.code, 1);
  EXPECT_EQ(second.err,
            fmt::format("mecha: session {} is in use by process {}: wait for that run to finish or "
                        "stop it, then try again (lock file {}-locks/{}.lock)\n",
                        id, getpid(), store(), id));
}

TEST_F(SessionsCli, ResumeOfNothingIsAUsageError) {
  write("two.jsonl", kTwoTurns);
  Ran r = mecha("run --model cassette:two.jsonl --resume last 'go'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, fmt::format("mecha: there are no sessions of the work tree {} in {} yet\n",
                               tree(), store()));
  Ran list = mecha("sessions list --store elsewhere.db");
  EXPECT_EQ(list.code, 2);
  EXPECT_EQ(list.err,
            fmt::format("mecha: no session store at {}/elsewhere.db (a run creates it)\n", tree()));
}

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Without XDG_STATE_HOME the store is ~/.local/state/mecha/sessions.db; the directory is
// 0700 and the database with its WAL files 0600, and nothing of it is in the tree.
TEST_F(SessionsCli, TheDefaultStoreIsPrivateInTheHomeAndNotInTheTree) {
  write("two.jsonl", kTwoTurns);
  Ran r = mecha("run --json --model cassette:two.jsonl 'go'", "XDG_STATE_HOME=");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto state = dir_.path() / "home" / ".local" / "state" / "mecha";
  EXPECT_EQ(mode_of(dir_.path() / "home" / ".local"), 0700u);
  EXPECT_EQ(mode_of(state), 0700u);
  EXPECT_EQ(mode_of(state / "sessions.db"), 0600u);
  EXPECT_EQ(mode_of(state / "sessions.db-locks"), 0700u);
  // The -wal and -shm files are gone once the last connection closed; whatever is left is
  // as private as the database (store_tests check the WAL files of an open store).
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(state)) {
    EXPECT_EQ(mode_of(e.path()), e.is_directory() ? 0700u : 0600u) << e.path();
    ++files;
  }
  EXPECT_GE(files, 2);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(tree()) / ".mecha"));
  EXPECT_FALSE(std::filesystem::exists(store()));
  Ran list = mecha("sessions list --json", "XDG_STATE_HOME=");
  ASSERT_EQ(list.code, 0) << list.err;
  auto arr = parse_json(list.out, "list");
  ASSERT_TRUE(arr.ok()) << list.out;
  ASSERT_EQ(arr->size(), 1u);
  EXPECT_EQ((*arr)[0]["id"], done_of(r)["session"]);
  EXPECT_EQ((*arr)[0]["work_tree"], tree());
}

// A state directory someone loosened is made private again.
TEST_F(SessionsCli, ALooserStateDirectoryIsTightened) {
  write("two.jsonl", kTwoTurns);
  std::filesystem::create_directories(dir_.path() / "state" / "mecha");
  ::chmod((dir_.path() / "state" / "mecha").c_str(), 0777);
  Ran r = mecha("run --json --model cassette:two.jsonl 'go'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(mode_of(dir_.path() / "state" / "mecha"), 0700u);
}

TEST_F(SessionsCli, ListShowsThisTreesSessionsAndAllShowsEveryTree) {
  write("two.jsonl", kTwoTurns);
  const std::string other = (dir_.path() / "other").string();
  std::filesystem::create_directories(other);
  std::filesystem::copy_file(std::filesystem::path(tree()) / "two.jsonl",
                             std::filesystem::path(other) / "two.jsonl");
  Ran here = mecha("run --json --model cassette:two.jsonl 'here'");
  ASSERT_EQ(here.code, 0) << here.err;
  Ran there = mecha("run --json --model cassette:two.jsonl 'there'", "", other);
  ASSERT_EQ(there.code, 0) << there.err;
  const std::string here_id = done_of(here)["session"], there_id = done_of(there)["session"];

  auto ids = [](const Ran& r) {
    std::vector<std::string> out;
    auto arr = parse_json(r.out, "list");
    EXPECT_TRUE(arr.ok()) << r.out << r.err;
    if (arr.ok()) {
      for (const auto& s : *arr)
        out.push_back(s["title"].get<std::string>() + "@" + s["work_tree"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(ids(mecha("sessions list --json")), (std::vector<std::string>{"here@" + tree()}));
  EXPECT_EQ(ids(mecha("sessions list --json", "", other)),
            (std::vector<std::string>{"there@" + other}));
  EXPECT_EQ(ids(mecha("sessions list --json --all")),
            (std::vector<std::string>{"here@" + tree(), "there@" + other}));
  EXPECT_EQ(ids(mecha("sessions list --json -C " + other)),
            (std::vector<std::string>{"there@" + other}));

  Ran table = mecha("sessions list --all");
  ASSERT_EQ(table.code, 0) << table.err;
  std::string text =
      std::regex_replace(table.out, std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d)"), "YYYY-MM-DD hh:mm");
  EXPECT_EQ(text.substr(0, text.find('\n') + 1),
            "ID                    STARTED (UTC)     TURNS        COST  UNTRUSTED  TREE  TITLE\n");
  EXPECT_NE(text.find(fmt::format("{}  YYYY-MM-DD hh:mm      2    unpriced  no         {}  there\n",
                                  there_id, other)),
            std::string::npos)
      << text;

  // An id works from any tree; "last" is this tree's.
  Ran show = mecha("sessions show --json " + there_id);
  ASSERT_EQ(show.code, 0) << show.err;
  Ran last = mecha("sessions show --json last");
  ASSERT_EQ(last.code, 0) << last.err;
  auto j = parse_json(last.out, "show");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["session"]["id"], here_id);
}

// A store left inside the tree by an older mecha was writable by sandboxed commands: its
// labels could have been cleared. It is not imported and not resumed; a note names it and
// says what to do.
TEST_F(SessionsCli, AnOldStoreInTheTreeIsNamedNotImported) {
  write("two.jsonl", kTwoTurns);
  const auto old = std::filesystem::path(tree()) / ".mecha" / "sessions.db";
  std::string old_id;
  {
    auto st = store::SessionStore::open(old);
    ASSERT_TRUE(st.ok()) << st.message();
    auto s = (*st)->create("laundered");
    ASSERT_TRUE(s.ok());
    old_id = (*s)->id();
    ASSERT_TRUE((*s)->append(store::Record::note("main", "forged")).ok());
  }
  const std::string note = fmt::format(
      "mecha: note: {old} is a session store of an older mecha, inside the work tree where "
      "sandboxed commands could rewrite it, so its sessions are not imported: their untrusted "
      "and private labels cannot be vouched for. Sessions are now kept in {store}. To read the "
      "old ones: mecha sessions list --store {old}; to stop this note, move {old} (with its "
      "-wal, -shm and -locks) out of the tree or delete it.\n",
      fmt::arg("old", old.string()), fmt::arg("store", store()));
  Ran resume = mecha("run --json --model cassette:two.jsonl --resume " + old_id + " 'go on'");
  EXPECT_EQ(resume.code, 2);
  EXPECT_EQ(resume.err, note + fmt::format("mecha: no session {} in {}\n", old_id, store()));
  Ran run = mecha("run --json --model cassette:two.jsonl 'fresh'");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, note);
  Ran list = mecha("sessions list --json --all");
  ASSERT_EQ(list.code, 0) << list.err;
  auto arr = parse_json(list.out, "list");
  ASSERT_TRUE(arr.ok());
  ASSERT_EQ(arr->size(), 1u);
  EXPECT_EQ((*arr)[0]["title"], "fresh");
  // The old file is left as it was, for the user to read or delete.
  Ran old_list = mecha("sessions list --json --all --store .mecha/sessions.db");
  ASSERT_EQ(old_list.code, 0) << old_list.err;
  EXPECT_EQ(parse_json(old_list.out, "old")->at(0)["title"], "laundered");
}

}  // namespace
}  // namespace mecha::cli
