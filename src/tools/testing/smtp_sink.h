// SmtpSink: a small SMTP server on loopback (python3's socketserver), started by a test, that
// accepts every message and appends what it received to a file, one JSON object a line:
// {"from": "<a@b>", "rcpt": ["<c@d>"], "data": "the message text, CRLF line ends"}. It offers
// no STARTTLS and no AUTH. For tests of SMTP delivery; available() is false without python3
// (the test skips with one line).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/strict_json.h"

namespace mecha::tools::testing {

class SmtpSink {
 public:
  // Starts the server, keeping its log in `dir`. REQUIRES: available().
  explicit SmtpSink(const std::filesystem::path& dir);
  ~SmtpSink();
  SmtpSink(const SmtpSink&) = delete;
  SmtpSink& operator=(const SmtpSink&) = delete;

  static bool available();
  bool running() const { return port_ > 0; }
  int port() const { return port_; }
  std::string url() const { return "smtp://127.0.0.1:" + std::to_string(port_); }
  // Every message received so far.
  std::vector<Json> received() const;

 private:
  std::filesystem::path log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace mecha::tools::testing
