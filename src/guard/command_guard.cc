#include "guard/command_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "guard/operands.h"

namespace mecha::guard {
namespace {

Verdict refuse(std::string rule, std::string reason) {
  return Verdict{false, std::move(rule), std::move(reason)};
}

// The directories the line may be in at a point: more than one after a `cd` that may
// fail. "" stands for a directory not known in advance.
using Cwds = std::vector<std::string>;
constexpr size_t kMaxCwds = 8;

bool has_brace_list(const ShellWord& w) {
  size_t open = w.text.find('{');
  return open != std::string::npos && w.text.find(',', open) != std::string::npos &&
         w.text.find('}', open) != std::string::npos;
}

bool is_fd_target(const std::string& t) {
  return t == "-" || (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos);
}

std::string describe(const Command& c);

class Screen {
 public:
  // `start` is the directory the line starts in (absolute); empty: the work tree.
  Screen(const Places& places, bool clear_tree, std::string_view start = {})
      : places_(places), clear_tree_(clear_tree) {
    cwds_.push_back({start.empty() ? places.work_tree : normalise(start)});
  }

  // A word with a brace list ("/etc/{passwd,shadow}") is checked as each of its expansions.
  // `into`: a directory the command writes into under names of its own choosing (an
  // archive's members, a build's outputs), so a protected part below it counts too.
  std::optional<Verdict> write(const ShellWord& word, const char* what, bool into = false) {
    if (has_brace_list(word)) {
      for (const std::string& alt : expand_braces(word.text)) {
        ShellWord w = word;
        w.text = alt;
        if (auto v = write_one(w, what, into)) return v;
      }
      return std::nullopt;
    }
    return write_one(word, what, into);
  }

  std::optional<Verdict> read(const ShellWord& word) {
    if (has_brace_list(word)) {
      for (const std::string& alt : expand_braces(word.text)) {
        ShellWord w = word;
        w.text = alt;
        if (auto v = read_one(w)) return v;
      }
      return std::nullopt;
    }
    return read_one(word);
  }
  std::optional<Verdict> write_one(const ShellWord& w, const char* what, bool into) {
    for (const std::string& cwd : cwds_.back()) {
      // After a `cd` to a place known only at run time, a relative path is anywhere.
      if (cwd.empty() && !w.text.empty() && w.text[0] != '/' && w.text[0] != kHome &&
          w.text[0] != '~' && w.text[0] != kUnknown)
        return refuse("not-understood",
                      fmt::format("{} `{}` in a directory known only when the line runs (after a "
                                  "`cd` to it)",
                                  what, w.shown()));
      Resolved r = resolve_path(w, cwd, places_, clear_tree_, dotglob_);
      if (r.secret)
        return refuse("secret-path",
                      fmt::format("{} `{}`, a secret location ({})", what, w.shown(), r.path));
      if (r.place == Place::kOutside || r.place == Place::kAncestor)
        return refuse(
            "write-outside-tree",
            fmt::format("{} `{}`, which is {}, outside the work tree", what, w.shown(), r.path));
      const bool exact = !w.glob && !w.dynamic;
      if (r.protected_ && exact)
        return refuse("protected-path",
                      fmt::format("{} `{}`, which is {}, a protected part of the work tree", what,
                                  w.shown(), r.path));
      if (r.protected_)
        return refuse("protected-path",
                      fmt::format("{} `{}`, which may name {}, a protected part of the work tree",
                                  what, w.shown(), r.protected_part));
      if (into && r.holds_protected)
        return refuse(
            "protected-path",
            fmt::format("{} `{}`, which {} {}, a protected part of the work tree, under it", what,
                        w.shown(), exact ? "holds" : "may hold", r.protected_part));
    }
    return std::nullopt;
  }

  std::optional<Verdict> read_one(const ShellWord& w) {
    const std::string& t = w.text;
    // An option's value: `--file=/x`, `-I/x`.
    if (t.size() > 1 && t[0] == '-') {
      size_t eq = t.find('=');
      size_t from = eq != std::string::npos ? eq + 1 : t.find('/');
      if (from == std::string::npos) return std::nullopt;
      ShellWord v = w;
      v.text = t.substr(from);
      return read_one(v);
    }
    for (const std::string& cwd : cwds_.back()) {
      Resolved r = resolve_path(w, cwd, places_, clear_tree_);
      if (r.secret)
        return refuse("secret-path",
                      fmt::format("reads `{}`, a secret location ({})", w.shown(), r.path));
    }
    return std::nullopt;
  }

  // A folder read with everything under it: refused when a secret location lies below it.
  std::optional<Verdict> read_tree(const ShellWord& w, const Command& c) {
    if (w.text.size() > 1 && w.text[0] == '-') return std::nullopt;
    for (const std::string& cwd : cwds_.back()) {
      Resolved r = resolve_path(w, cwd, places_, clear_tree_);
      if (r.place == Place::kUnknown || r.path.empty()) continue;
      if (clear_tree_ && r.place == Place::kInside) continue;
      std::string secret = secret_under(r.path, places_);
      if (!secret.empty())
        return refuse("secret-path",
                      fmt::format("`{}` reads `{}` ({}) with everything under it, and the secret "
                                  "location {} lies there",
                                  describe(c), w.shown(), r.path, secret));
    }
    return std::nullopt;
  }

  std::vector<Place> places_of(const std::vector<ShellWord>& words) {
    std::vector<Place> out;
    for (const auto& w : words)
      for (const std::string& cwd : cwds_.back())
        out.push_back(resolve_path(w, cwd, places_, clear_tree_).place);
    return out;
  }

  void change_directory(const Command& c) {
    Cwds& now = cwds_.back();
    Cwds next = now;  // a cd may fail and leave the directory as it was
    std::vector<ShellWord> args;
    for (size_t i = 1; i < c.argv.size(); ++i)
      if (c.argv[i].text.empty() || c.argv[i].text[0] != '-' || c.argv[i].text == "-")
        args.push_back(c.argv[i]);
    if (c.name == "popd" || (!args.empty() && args[0].text == "-")) {
      next.push_back("");
    } else {
      ShellWord target = args.empty() ? literal_word(std::string(1, kHome)) : args[0];
      for (const std::string& cwd : now) next.push_back(resolve_directory(target, cwd, places_));
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (next.size() > kMaxCwds) next = {""};
    now = std::move(next);
  }  // `ln -s TARGET LINK`: a write through LINK later in the line reaches TARGET.
  void link(const Command& c) {
    std::vector<const ShellWord*> ops;
    bool symbolic = false;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a.size() > 1 && a[0] == '-') {
        symbolic |= a.find('s') != std::string::npos && a[1] != '-';
        symbolic |= a == "--symbolic";
        continue;
      }
      ops.push_back(&c.argv[i]);
    }
    if (!symbolic || ops.size() != 2) return;
    for (const std::string& cwd : cwds_.back()) {
      Resolved target = resolve_path(*ops[0], cwd, places_, clear_tree_);
      Resolved at = resolve_path(*ops[1], cwd, places_, clear_tree_);
      if (at.path.empty() || target.place == Place::kInside || target.place == Place::kTree)
        continue;
      links_.push_back({at.path, target});
    }
  }
  std::optional<Verdict> through_link(const ShellWord& w, const char* what) {
    if (links_.empty()) return std::nullopt;
    for (const std::string& cwd : cwds_.back()) {
      Resolved r = resolve_path(w, cwd, places_, clear_tree_);
      for (const auto& [path, target] : links_) {
        if (r.path.empty() || !within(r.path, path)) continue;
        if (target.secret)
          return refuse("secret-path", fmt::format("{} `{}`, a link to a secret location ({})",
                                                   what, w.shown(), target.path));
        if (target.place != Place::kWritable)
          return refuse("write-outside-tree",
                        fmt::format("{} `{}`, a link the line made to {}, outside the work tree",
                                    what, w.shown(),
                                    target.path.empty() ? "a place not known "
                                                          "in advance"
                                                        : target.path));
      }
    }
    return std::nullopt;
  }

  // A web server started in (or for) a directory outside the tree serves it to the network.
  std::optional<Verdict> serve(const Command& c) {
    bool server = false;
    std::optional<ShellWord> dir;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a == "http.server" || a == "SimpleHTTPServer" ||
          (c.name.rfind("php", 0) == 0 && a == "-S"))
        server = true;
      if ((a == "--directory" || a == "-d" || a == "-t") && i + 1 < c.argv.size())
        dir = c.argv[i + 1];
      else if (a.rfind("--directory=", 0) == 0)
        dir = literal_word(a.substr(12), c.argv[i].offset);
    }
    if (!server) return std::nullopt;
    ShellWord where = dir ? *dir : literal_word(".");
    for (const std::string& cwd : cwds_.back()) {
      Resolved r = resolve_path(where, cwd, places_, clear_tree_);
      if (r.secret || r.place == Place::kOutside || r.place == Place::kAncestor ||
          r.place == Place::kUnknown)
        return refuse("serve-outside",
                      fmt::format("`{}` serves {} to the network, which is outside the work tree",
                                  c.argv[0].shown(), r.path.empty() ? where.shown() : r.path));
    }
    return std::nullopt;
  }

  // `shopt -s dotglob`: from here on `*` and `?` match names that start with a dot.
  void note_glob_options(const Command& c) {
    if (c.name != "shopt") return;
    bool set = false, dotglob = false;
    for (const ShellWord& w : c.argv) {
      set |= w.text == "-s";
      dotglob |= w.text == "dotglob" || w.dynamic;
    }
    dotglob_ |= set && dotglob;
  }

  void open() { cwds_.push_back(cwds_.back()); }
  void close() {
    if (cwds_.size() > 1) cwds_.pop_back();
  }

 private:
  const Places& places_;
  bool clear_tree_;  // no secret inside the tree: its paths skip the secret list
  std::vector<Cwds> cwds_;
  std::vector<std::pair<std::string, Resolved>> links_;  // link path -> what it points at
  bool dotglob_ = false;                                 // the line ran `shopt -s dotglob`
};

// The command as it will run after unwrapping, for messages: its words, shortened.
std::string describe(const Command& c) {
  std::string s;
  for (const ShellWord& w : c.argv) {
    if (!s.empty()) s += ' ';
    s += w.shown();
    if (s.size() > 120) {
      s = s.substr(0, 117) + "...";
      break;
    }
  }
  if (!c.via.empty()) s += " (run by " + c.via + ")";
  return s;
}

bool is_network_device(const std::string& t) {
  return t.rfind("/dev/tcp/", 0) == 0 || t.rfind("/dev/udp/", 0) == 0;
}

// Programs whose work is talking to the network.
bool networked(const Command& c) {
  static const char* const kNames[] = {"curl",  "wget",   "nc",        "ncat",         "netcat",
                                       "socat", "ssh",    "scp",       "sftp",         "rsync",
                                       "ftp",   "telnet", "aria2c",    "http",         "https",
                                       "xh",    "lftp",   "smbclient", "mosquitto_pub"};
  for (const char* n : kNames)
    if (c.name == n) {
      // rsync between local paths is a copy.
      if (c.name != "rsync") return true;
      for (size_t i = 1; i < c.argv.size(); ++i) {
        const std::string& a = c.argv[i].text;
        if (!a.empty() && a[0] != '-' && a.find(':') != std::string::npos &&
            a.find(':') < a.find('/'))
          return true;
      }
      return false;
    }
  if (c.name == "git" && c.argv.size() > 1)
    for (const char* sub : {"push", "fetch", "pull", "clone", "ls-remote"})
      if (c.argv[1].text == sub) return true;
  return false;
}

bool is_address(const std::string& t) {
  if (t.find("://") != std::string::npos) return true;
  size_t colon = t.find(':');  // user@host:path, host:path
  return colon != std::string::npos && colon > 0 && t.find('/') > colon && t[0] != '-';
}

// Without a network a networked program can still work: on the sandbox's own loopback (a
// server the same line started), or git with a remote the line does not name, which may
// be a folder on this machine.
bool offline_may_work(const Command& c) {
  bool names_address = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    for (const char* loopback : {"localhost", "127.0.0.1", "[::1]", "0.0.0.0"})
      if (a.find(loopback) != std::string::npos) return true;
    if (is_address(a)) names_address = true;
  }
  return c.name == "git" && !names_address;
}

}  // namespace

CommandGuard::CommandGuard(Policy policy)
    : policy_(std::move(policy)), tree_clear_(tree_holds_no_secret(policy_.places)) {
  RE2::Options options;
  options.set_log_errors(false);
  auto set = std::make_shared<RE2::Set>(options, RE2::ANCHOR_BOTH);
  for (size_t i = 0; i < policy_.rules.size(); ++i) {
    const Rule& r = policy_.rules[i];
    // A pattern the set cannot take is matched on its own, like a rule without one.
    if (!r.command || set->Add(r.command->pattern(), nullptr) < 0) {
      any_command_rules_.push_back(i);
      continue;
    }
    set_rules_.push_back(i);
  }
  if (set->Compile()) {
    command_names_ = std::move(set);
  } else {
    any_command_rules_.clear();
    for (size_t i = 0; i < policy_.rules.size(); ++i) any_command_rules_.push_back(i);
    set_rules_.clear();
  }
}

std::vector<size_t> CommandGuard::rules_for(const std::string& name) const {
  std::vector<size_t> out = any_command_rules_;
  std::vector<int> hits;
  if (command_names_ && command_names_->Match(name, &hits))
    for (int h : hits) out.push_back(set_rules_[static_cast<size_t>(h)]);
  std::sort(out.begin(), out.end());
  return out;
}

Result<CommandGuard> CommandGuard::create(Policy policy) {
  const bool default_places = policy.places.writable == default_writable() &&
                              policy.places.protected_ == default_protected() &&
                              policy.places.secrets == default_secrets();
  MECHA_RETURN_IF_ERROR(check_rule_examples(policy, /*include_builtin=*/!default_places));
  return CommandGuard(std::move(policy));
}

Status check_rule_examples(const Policy& policy, bool include_builtin) {
  // Examples are judged against a fixed tree and home, so they mean the same everywhere.
  Places example = policy.places;
  example.work_tree = "/example/tree";
  example.home = "/example/home";
  for (const Rule& rule : policy.rules) {
    if (rule.builtin && !include_builtin) continue;
    for (const auto& line : rule.match) {
      auto fires = rule_fires_on(rule, line, example);
      if (!fires)
        return Status::error(
            fmt::format("guard rule '{}': example `{}`: {}", rule.name, line, fires.message()));
      if (!*fires)
        return Status::error(
            fmt::format("guard rule '{}' does not match its example `{}`; fix the rule or "
                        "the example",
                        rule.name, line));
    }
    for (const auto& line : rule.not_match) {
      auto fires = rule_fires_on(rule, line, example);
      if (fires && *fires)
        return Status::error(
            fmt::format("guard rule '{}' matches `{}`, which it lists under not_match; fix "
                        "the rule or the example",
                        rule.name, line));
    }
  }
  return ok_status();
}

Result<bool> rule_fires_on(const Rule& rule, std::string_view line, const Places& places) {
  auto found = find_commands(line);
  if (auto* p = std::get_if<Problem>(&found)) return Status::error(p->reason);
  Screen screen(places, tree_holds_no_secret(places));
  for (const Step& step : std::get<Script>(found).steps) {
    if (step.kind == Step::Kind::kScopeOpen) screen.open();
    if (step.kind == Step::Kind::kScopeClose) screen.close();
    if (step.kind != Step::Kind::kCommand) continue;
    Operands ops = operands_of(step.command);
    CommandFacts facts{&step.command, &ops.flags, screen.places_of(ops.writes)};
    if (rule_fires(rule, facts)) return true;
    if (step.command.name == "cd" || step.command.name == "pushd" || step.command.name == "popd")
      screen.change_directory(step.command);
  }
  return false;
}

CommandGuard CommandGuard::for_work_tree(const std::string& work_tree) const {
  // The rules are the same, so is their compiled set (shared): only the places change.
  CommandGuard g = *this;
  g.policy_.places.work_tree = normalise(work_tree);
  g.tree_clear_ = tree_holds_no_secret(g.policy_.places);
  return g;
}

Verdict CommandGuard::screen(std::string_view line, std::string_view cwd) const {
  auto found = find_commands(line, limits_);
  if (auto* p = std::get_if<Problem>(&found)) return refuse(p->rule, p->reason);
  return screen_script(std::get<Script>(found), cwd);
}

std::optional<Verdict> CommandGuard::screen_network(const Command& c,
                                                    std::set<std::string>& added_remotes) const {
  if (!networked(c)) return std::nullopt;
  if (!policy_.network && !offline_may_work(c))
    return refuse("no-network",
                  fmt::format("`{}` needs the network, and the sandbox has none: it cannot work",
                              describe(c)));
  if (c.name != "git" || c.argv.size() < 2) return std::nullopt;
  const std::string& sub = c.argv[1].text;
  if (sub != "push") return std::nullopt;
  bool pushed_somewhere = false;
  for (size_t i = 2; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    if (a.empty() || a[0] == '-') {
      if (a == "--repo" || a == "-o" || a == "--push-option" || a == "--receive-pack") ++i;
      if (a.rfind("--repo=", 0) == 0 && is_address(a.substr(7)))
        return refuse("push-to-address",
                      fmt::format("`{}` pushes to an address given in the line rather than a "
                                  "remote the repository already has",
                                  describe(c)));
      continue;
    }
    pushed_somewhere = true;
    if (is_address(a) || c.argv[i].dynamic || added_remotes.count(a) > 0)
      return refuse("push-to-address",
                    fmt::format("`{}` pushes to an address given in the line rather than a "
                                "remote the repository already has",
                                describe(c)));
    break;  // the remote; the rest are refspecs
  }
  // `git push` alone goes to the branch's remote, origin unless set: changed in this line?
  if (!pushed_somewhere && !added_remotes.empty())
    return refuse(
        "push-to-address",
        fmt::format("`{}` pushes to a remote whose address the line changed", describe(c)));
  return std::nullopt;
}

Verdict CommandGuard::screen_script(const Script& script, std::string_view cwd) const {
  Screen screen(policy_.places, tree_clear_, cwd);
  std::set<std::string> added_remotes;  // `git remote add NAME URL`, `set-url NAME URL`
  // A folder holding secrets read whole: kept until the end, so that a more specific rule
  // (`find / -exec rm -rf {} +` deletes) names the refusal when one applies.
  std::optional<Verdict> tree_read;
  for (const Step& step : script.steps) {
    switch (step.kind) {
      case Step::Kind::kScopeOpen:
        screen.open();
        continue;
      case Step::Kind::kScopeClose:
        screen.close();
        continue;
      case Step::Kind::kRedirect: {
        const Redirect& r = step.redirect;
        bool writes = r.op.find('>') != std::string::npos;
        if ((r.op == ">&" || r.op == "<&") && is_fd_target(r.target.text)) continue;
        if (is_network_device(r.target.text))
          return refuse(policy_.network ? "network-redirect" : "no-network",
                        policy_.network
                            ? fmt::format("the redirection to `{}` opens a network connection "
                                          "from the shell itself, which the guard cannot follow",
                                          r.target.shown())
                            : fmt::format("the redirection to `{}` opens a network connection, "
                                          "and the sandbox has no network: it cannot work",
                                          r.target.shown()));
        if (auto v = writes ? screen.write(r.target, "redirects output to") : screen.read(r.target))
          return *v;
        if (writes)
          if (auto v = screen.through_link(r.target, "redirects output to")) return *v;
        continue;
      }
      case Step::Kind::kCommand:
        break;
    }
    const Command& c = step.command;
    if (c.name == "git" && c.argv.size() > 3 && c.argv[1].text == "remote" &&
        (c.argv[2].text == "add" || c.argv[2].text == "set-url" || c.argv[2].text == "rename")) {
      for (size_t i = 3; i < c.argv.size(); ++i)
        if (!c.argv[i].text.empty() && c.argv[i].text[0] != '-') {
          added_remotes.insert(c.argv[i].text);
          if (c.argv[2].text != "rename") break;
        }
    }
    if (auto v = screen_network(c, added_remotes)) return *v;
    Operands ops = operands_of(c);
    CommandFacts facts{&c, &ops.flags, screen.places_of(ops.writes)};
    for (size_t i : rules_for(c.name)) {
      const Rule& rule = policy_.rules[i];
      if (rule_fires(rule, facts))
        return refuse(rule.name, fmt::format("`{}` {}", describe(c), rule.reason));
    }
    if (ops.not_understood)
      return refuse("not-understood", fmt::format("`{}`: {}", describe(c), *ops.not_understood));
    if (c.script_operand_unknown)
      return refuse("not-understood",
                    fmt::format("`{}` runs a script whose name or text is known only when it runs",
                                describe(c)));
    if (c.script_from_unknown_pipe)
      return refuse("not-understood",
                    fmt::format("`{}` reads commands from a pipe whose text is known only when "
                                "it runs",
                                describe(c)));
    std::string what = fmt::format("`{}` writes", describe(c));
    for (const auto& w : ops.writes) {
      if (auto v = screen.write(w, what.c_str())) return *v;
      if (auto v = screen.through_link(w, what.c_str())) return *v;
    }
    if (!ops.write_dirs.empty()) {
      std::string into = what + " into";
      for (const auto& w : ops.write_dirs) {
        if (auto v = screen.write(w, into.c_str(), /*into=*/true)) return *v;
        if (auto v = screen.through_link(w, into.c_str())) return *v;
      }
    }
    if (auto v = screen.serve(c)) return *v;
    if (c.name == "ln") screen.link(c);
    const bool recursive = reads_recursively(c, ops);
    for (const auto& w : ops.reads) {
      if (auto v = screen.read(w)) return *v;
      if (recursive && !tree_read) tree_read = screen.read_tree(w, c);
    }
    if (c.name == "cd" || c.name == "pushd" || c.name == "popd") screen.change_directory(c);
    screen.note_glob_options(c);
  }
  if (tree_read) return *tree_read;
  return Verdict{};
}

std::string CommandGuard::refusal_message(const Verdict& v, int refusals) const {
  return fmt::format(
      "Refused by the command guard, rule '{}': {}. The work tree is {}; commands may write only "
      "inside it (and /tmp). This rule is permanent: variants of this command will be refused too, "
      "so do not retry it in another form; choose a different approach that stays inside the work "
      "tree. Refusals so far in this run: {}.",
      v.rule, v.reason, policy_.places.work_tree, refusals);
}

}  // namespace mecha::guard
