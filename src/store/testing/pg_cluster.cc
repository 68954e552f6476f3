#include "store/testing/pg_cluster.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <fmt/format.h>

#include "base/unique_fd.h"
#include "store/open_store.h"
#include "store/postgres.h"

namespace mecha::store::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kBin = "/usr/lib/postgresql/15/bin";

// Who the server runs as: this user, or nobody when this is root (initdb refuses root).
struct RunAs {
  bool change = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

RunAs run_as() {
  RunAs who;
  if (::geteuid() != 0) return who;
  const passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) return who;
  who.change = true;
  who.uid = pw->pw_uid;
  who.gid = pw->pw_gid;
  return who;
}

// Runs `argv` as run_as(), its output appended to `log`; an error quotes the log's tail.
Status run(const std::vector<std::string>& argv, const fs::path& log) {
  const RunAs who = run_as();
  // Made before the fork: the child of a threaded process may only make system calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return errno_status("fork");
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (who.change &&
        (::setgroups(0, nullptr) != 0 || ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0)) {
      _exit(126);
    }
    ::execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok_status();
  std::string tail;
  if (FILE* f = std::fopen(log.c_str(), "r")) {
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof(buf), f);
    std::fclose(f);
    tail.assign(buf, n);
  }
  return Status::error(fmt::format("{} failed (status {}): {}", argv[0], status, tail));
}

Status chown_to(const fs::path& p) {
  const RunAs who = run_as();
  if (who.change && ::chown(p.c_str(), who.uid, who.gid) != 0) {
    return errno_status("chown " + p.string());
  }
  return ok_status();
}

// A data folder in `data`: a copy of the build's template, made by initdb the first time.
Status make_data_dir(const fs::path& data, const fs::path& log) {
  const std::vector<std::string> initdb_args = {"-U",        "postgres", "-A",   "trust",
                                                "--no-sync", "-E",       "UTF8", "--no-locale"};
  auto initdb = [&](const fs::path& where) {
    std::vector<std::string> argv = {(kBin / "initdb").string(), "-D", where.string()};
    argv.insert(argv.end(), initdb_args.begin(), initdb_args.end());
    return run(argv, log);
  };
#ifdef MECHA_BINARY_DIR
  const fs::path build = MECHA_BINARY_DIR;
  const fs::path templ = build / "pg-template";
  UniqueFd lock(::open((build / "pg-template.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.valid() && ::flock(lock.get(), LOCK_EX) == 0) {
    std::error_code ec;
    if (!fs::exists(templ / "PG_VERSION", ec)) {
      // Made here, as the server's user, since that user may not write in the build folder.
      const fs::path fresh = build / "pg-template.new";
      fs::remove_all(fresh, ec);
      if (fs::create_directory(fresh, ec) && chown_to(fresh).ok() && initdb(fresh).ok()) {
        fs::rename(fresh, templ, ec);
      }
    }
    if (fs::exists(templ / "PG_VERSION", ec) &&
        run({"/bin/cp", "-a", templ.string(), data.string()}, log).ok()) {
      return ok_status();
    }
  }
#endif
  return initdb(data);
}

}  // namespace

std::string PgCluster::unavailable() {
#ifdef MECHA_SANITIZE
  // The server is PostgreSQL's code, not mecha's, and the release run of the same tests
  // already drives mecha's side of it; under the sanitizers it only costs time.
  return "PostgreSQL half skipped: not run in the sanitizer build (make test runs it)";
#endif
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    if (::access((kBin / tool).c_str(), X_OK) != 0) {
      return fmt::format(
          "PostgreSQL half skipped: {} is missing (scripts/setup --for tests installs it)",
          (kBin / tool).string());
    }
  }
  return "";
}

Result<std::unique_ptr<PgCluster>> PgCluster::start(Options options) {
  if (std::string why = unavailable(); !why.empty()) return Status::error(why);
  std::string tmpl = (fs::temp_directory_path() / "mecha-pg-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return errno_status("mkdtemp " + tmpl);
  std::unique_ptr<PgCluster> cluster(new PgCluster(tmpl));
  const fs::path& dir = cluster->dir_;
  MECHA_RETURN_IF_ERROR(chown_to(dir));
  // The server writes server.log as its own user; the tools' output goes to setup.log.
  const fs::path log = dir / "server.log";
  MECHA_RETURN_IF_ERROR(make_data_dir(dir / "data", dir / "setup.log"));
  const std::string settings = fmt::format(
      "-c listen_addresses='' -c unix_socket_directories='{}' -c fsync={} "
      "-c full_page_writes={} -c max_connections=60 -c shared_buffers=32MB",
      dir.string(), options.fsync ? "on" : "off", options.fsync ? "on" : "off");
  MECHA_RETURN_IF_ERROR(run({(kBin / "pg_ctl").string(), "-D", (dir / "data").string(), "-l",
                             log.string(), "-w", "-o", settings, "start"},
                            dir / "setup.log"));
  cluster->running_ = true;
  MECHA_RETURN_IF_ERROR(cluster->admin(
      "CREATE ROLE mecha_owner LOGIN; CREATE ROLE mecha_writer NOLOGIN; "
      "CREATE ROLE mecha LOGIN IN ROLE mecha_writer; REVOKE CREATE ON SCHEMA public FROM PUBLIC"));
  return cluster;
}

PgCluster* PgCluster::shared(std::string* why) {
  static std::string failure;
  static std::unique_ptr<PgCluster> cluster = [] {
    failure = unavailable();
    if (!failure.empty()) return std::unique_ptr<PgCluster>();
    auto started = start(Options{});
    if (!started) {
      failure = started.message();
      return std::unique_ptr<PgCluster>();
    }
    return std::move(*started);
  }();
  *why = failure;
  return cluster.get();
}

Status PgCluster::stop() {
  if (!running_) return ok_status();
  running_ = false;
  return run(
      {(kBin / "pg_ctl").string(), "-D", (dir_ / "data").string(), "-m", "immediate", "-w", "stop"},
      dir_ / "setup.log");
}

PgCluster::~PgCluster() {
  (void)stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PgCluster::url(std::string_view role, std::string_view schema,
                           std::string_view password) const {
  std::string url = fmt::format("postgresql://{}{}{}@/postgres?host={}", role,
                                password.empty() ? "" : ":", password, dir_.string());
  if (!schema.empty()) url += fmt::format("&options=-csearch_path%3D{}", schema);
  return url;
}

Status PgCluster::admin(std::string_view sql) {
  auto conn = PgConnection::connect(PostgresUrl(url("postgres")));
  if (!conn) return conn.status();
  return conn->exec(sql);
}

Result<std::string> PgCluster::fresh_store() {
  const std::string schema = fmt::format("store_{}_{}", ::getpid(), ++schemas_);
  MECHA_RETURN_IF_ERROR(admin(fmt::format("CREATE SCHEMA {} AUTHORIZATION mecha_owner", schema)));
  auto made = open_store(url("mecha_owner", schema));
  if (!made) return made.status();
  return url("mecha", schema);
}

}  // namespace mecha::store::testing
