#include "tools/testing/smtp_sink.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "base/spawn.h"
#include "base/testing/wait_until.h"

namespace mecha::tools::testing {
namespace {

constexpr const char* kServer = R"py(
import json, socketserver, sys
log, port_file = sys.argv[1], sys.argv[2]

class Handler(socketserver.StreamRequestHandler):
    def say(self, line):
        self.wfile.write((line + "\r\n").encode())
        self.wfile.flush()

    def handle(self):
        self.say("220 sink ESMTP")
        sender, rcpt = "", []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode("latin-1").rstrip("\r\n")
            verb = cmd.split(" ")[0].upper()
            if verb in ("EHLO", "HELO"):
                self.say("250-sink")
                self.say("250 8BITMIME")
            elif verb == "MAIL":
                sender, rcpt = cmd[10:].split(" ")[0], []
                self.say("250 ok")
            elif verb == "RCPT":
                rcpt.append(cmd[8:])
                self.say("250 ok")
            elif verb == "DATA":
                self.say("354 go on")
                data = b""
                while True:
                    chunk = self.rfile.readline()
                    if not chunk or chunk == b".\r\n":
                        break
                    if chunk.startswith(b".."):
                        chunk = chunk[1:]
                    data += chunk
                with open(log, "a") as f:
                    f.write(json.dumps({"from": sender, "rcpt": rcpt,
                                        "data": data.decode("utf-8", "replace")}) + "\n")
                self.say("250 queued")
            elif verb == "QUIT":
                self.say("221 bye")
                return
            else:
                self.say("250 ok")

socketserver.TCPServer.allow_reuse_address = True
with socketserver.TCPServer(("127.0.0.1", 0), Handler) as server:
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
)py";

}  // namespace

bool SmtpSink::available() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

SmtpSink::SmtpSink(const std::filesystem::path& dir) : log_(dir / "smtp-sink.jsonl") {
  const std::filesystem::path port_file = dir / "smtp-sink.port";
  SpawnOptions opt;
  opt.argv = {"python3", "-c", kServer, log_.string(), port_file.string()};
  auto null_in = UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  auto null_out = UniqueFd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  opt.stdin_fd = null_in.get();
  opt.stdout_fd = null_out.get();
  opt.stderr_fd = null_out.get();
  auto pid = spawn_child(opt);
  if (!pid) return;
  pid_ = *pid;
  // The server writes the file once it listens; without it by then, running() is false.
  (void)mecha::testing::wait_until(
      [&] {
        std::ifstream in(port_file);
        if (in >> port_) return true;
        port_ = 0;
        return false;
      },
      std::chrono::seconds(20));
}

SmtpSink::~SmtpSink() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::vector<Json> SmtpSink::received() const {
  std::vector<Json> out;
  std::ifstream in(log_);
  std::string line;
  while (std::getline(in, line)) {
    auto j = parse_json(line, "smtp sink log");
    if (j) out.push_back(*j);
  }
  return out;
}

}  // namespace mecha::tools::testing
