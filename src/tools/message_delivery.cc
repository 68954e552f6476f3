#include "tools/message_delivery.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "base/json_limits.h"
#include "base/strict_json.h"
#include "base/unique_fd.h"
#include "providers/libcurl.h"
#include "tools/mail_parse.h"

namespace mecha::tools {
namespace {

namespace fs = std::filesystem;
using providers::Libcurl;

constexpr long kTimeoutMs = 30000;
constexpr size_t kMaxAnswerBytes = 4096;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool atext(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+/=?^_`{|}~-.").find(c) != std::string_view::npos;
}

// local@domain: one '@', a local part of atext (no quoting), a domain of letters, digits,
// hyphens and dots.
bool plain_address(std::string_view a) {
  if (a.empty() || a.size() > 254) return false;
  size_t at = a.find('@');
  if (at == std::string_view::npos || at == 0 || at > 64 || a.find('@', at + 1) != a.npos) {
    return false;
  }
  std::string_view local = a.substr(0, at), domain = a.substr(at + 1);
  for (char c : local) {
    if (!atext(c)) return false;
  }
  if (local.front() == '.' || local.back() == '.' || local.find("..") != local.npos) return false;
  if (domain.empty() || domain.front() == '.' || domain.back() == '.' ||
      domain.find("..") != domain.npos) {
    return false;
  }
  for (char c : domain) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  }
  return true;
}

bool has_line_break(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

bool ascii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

std::string rfc5322_date(int64_t unix_s) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{}, {:02} {} {} {:02}:{:02}:{:02} +0000", kDays[tm.tm_wday], tm.tm_mday,
                     kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// RFC 2047 B-encoded words of at most 45 bytes each, never splitting a UTF-8 sequence.
std::string encoded_subject(std::string_view s) {
  if (ascii(s)) return std::string(s);
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = std::min(s.size(), pos + 45);
    while (end < s.size() && end > pos && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) {
      --end;
    }
    if (!out.empty()) out += "\r\n ";
    out += "=?utf-8?B?" + encode_base64(s.substr(pos, end - pos)) + "?=";
    pos = end;
  }
  return out;
}

std::string crlf_lines(std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\r') continue;
    if (body[i] == '\n') out += '\r';
    out += body[i];
  }
  return out;
}

bool short_lines(std::string_view s) {
  size_t run = 0;
  for (char c : s) {
    run = (c == '\n') ? 0 : run + 1;
    if (run > 998) return false;
  }
  return true;
}

// ---- libcurl ----

struct Upload {
  std::string_view data;
  size_t pos = 0;
};

size_t read_upload(char* buf, size_t size, size_t n, void* userdata) {
  auto* up = static_cast<Upload*>(userdata);
  size_t len = std::min(size * n, up->data.size() - up->pos);
  std::memcpy(buf, up->data.data() + up->pos, len);
  up->pos += len;
  return len;
}

size_t keep_answer(char* data, size_t size, size_t n, void* userdata) {
  auto* answer = static_cast<std::string*>(userdata);
  const size_t len = size * n;
  if (answer->size() < kMaxAnswerBytes) {
    answer->append(data, std::min(len, kMaxAnswerBytes - answer->size()));
  }
  return len;
}

// Runs one transfer to its end, through a multi handle so that `cancel` is heard.
Status perform(const Libcurl& lib, CURL* h, const CancelToken* cancel, const std::string& what) {
  providers::MultiHandle multi = providers::new_multi(lib);
  if (!multi) return Status::error(what + ": cannot create a libcurl handle");
  char error[CURL_ERROR_SIZE] = {0};
  lib.easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_TIMEOUT_MS, kTimeoutMs);
  lib.easy_setopt(h, CURLOPT_NOPROXY, providers::no_proxy_list().c_str());
  lib.multi_add_handle(multi.get(), h);
  CURLcode code = CURLE_OK;
  Status result;
  for (;;) {
    int running = 0;
    CURLMcode mc = lib.multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      result = Status::error(fmt::format("{}: libcurl failed: {}", what, lib.multi_strerror(mc)));
      break;
    }
    if (running == 0) {
      int left = 0;
      while (CURLMsg* msg = lib.multi_info_read(multi.get(), &left)) {
        if (msg->msg == CURLMSG_DONE) code = msg->data.result;
      }
      if (code != CURLE_OK) {
        result = Status::error(
            fmt::format("{}: {}", what, error[0] != '\0' ? error : lib.easy_strerror(code)));
      }
      break;
    }
    if (cancel != nullptr && cancel->cancelled()) {
      result = Status::cancelled(what + ": cancelled");
      break;
    }
    lib.multi_poll(multi.get(), nullptr, 0, 100, nullptr);
  }
  lib.multi_remove_handle(multi.get(), h);
  return result;
}

Status deliver_webhook(const config::MessagingConfig& config, const OutgoingMessage& m,
                       const CancelToken* cancel) {
  const std::string what = fmt::format("webhook POST {}", config.webhook_url);
  if (!starts_with(config.webhook_url, "http://") && !starts_with(config.webhook_url, "https://")) {
    return Status::error(
        fmt::format("[messaging] webhook_url must be an http:// or https:// URL, not '{}'",
                    config.webhook_url));
  }
  auto lib = providers::libcurl();
  if (!lib) return lib.status();
  const Libcurl& l = **lib;
  providers::EasyHandle h = providers::new_easy(l);
  if (!h) return Status::error(what + ": cannot create a libcurl handle");
  const std::string body =
      Json{{"id", m.id}, {"to", m.to}, {"subject", m.subject}, {"body", m.body}}.dump();
  providers::HeaderList headers =
      providers::own_list(l, l.slist_append(nullptr, "Content-Type: application/json"));
  std::string answer;
  l.easy_setopt(h.get(), CURLOPT_URL, config.webhook_url.c_str());
  l.easy_setopt(h.get(), CURLOPT_POST, 1L);
  l.easy_setopt(h.get(), CURLOPT_POSTFIELDS, body.data());
  l.easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  l.easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers.get());
  l.easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, keep_answer);
  l.easy_setopt(h.get(), CURLOPT_WRITEDATA, &answer);
  l.easy_setopt(h.get(), CURLOPT_USERAGENT, "mecha/0.1");
  MECHA_RETURN_IF_ERROR(perform(l, h.get(), cancel, what));
  long status = 0;
  l.easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    return Status::error(fmt::format("{}: the server answered HTTP {}: {}", what, status,
                                     replace_invalid_utf8(answer.substr(0, 200))));
  }
  return ok_status();
}

Result<std::string> env_value(const std::string& name, const char* key) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr || *v == '\0') {
    return Status::error(fmt::format(
        "[messaging] {} names the environment variable {}, which is not set", key, name));
  }
  return std::string(v);
}

Status deliver_smtp(const config::MessagingConfig& config, const OutgoingMessage& m,
                    const CancelToken* cancel) {
  const std::string what = fmt::format("SMTP {}", config.smtp_url);
  const bool tls = starts_with(config.smtp_url, "smtps://");
  if (!tls && !starts_with(config.smtp_url, "smtp://")) {
    return Status::error(fmt::format(
        "[messaging] smtp_url must be an smtp:// or smtps:// URL, not '{}'", config.smtp_url));
  }
  if (!plain_address(config.from)) {
    return Status::error(fmt::format(
        "[messaging] backend = \"smtp\" needs [messaging] from, one plain address (got '{}')",
        config.from));
  }
  std::string user, password;
  if (!config.smtp_user_env.empty()) {
    auto v = env_value(config.smtp_user_env, "smtp_user_env");
    if (!v) return v.status();
    user = std::move(*v);
  }
  if (!config.smtp_password_env.empty()) {
    auto v = env_value(config.smtp_password_env, "smtp_password_env");
    if (!v) return v.status();
    password = std::move(*v);
  }
  auto lib = providers::libcurl();
  if (!lib) return lib.status();
  const Libcurl& l = **lib;
  providers::EasyHandle h = providers::new_easy(l);
  if (!h) return Status::error(what + ": cannot create a libcurl handle");
  const std::string text = rfc5322_text(config, m,
                                        std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
  Upload up{text, 0};
  const std::string from = "<" + config.from + ">";
  providers::HeaderList rcpt =
      providers::own_list(l, l.slist_append(nullptr, ("<" + m.to + ">").c_str()));
  l.easy_setopt(h.get(), CURLOPT_URL, config.smtp_url.c_str());
  l.easy_setopt(h.get(), CURLOPT_MAIL_FROM, from.c_str());
  l.easy_setopt(h.get(), CURLOPT_MAIL_RCPT, rcpt.get());
  l.easy_setopt(h.get(), CURLOPT_UPLOAD, 1L);
  l.easy_setopt(h.get(), CURLOPT_READFUNCTION, read_upload);
  l.easy_setopt(h.get(), CURLOPT_READDATA, &up);
  l.easy_setopt(h.get(), CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(text.size()));
  // A login never crosses the network in the clear: smtp:// with one must upgrade to TLS.
  const bool login = !user.empty() || !password.empty();
  l.easy_setopt(h.get(), CURLOPT_USE_SSL,
                static_cast<long>(tls || login ? CURLUSESSL_ALL : CURLUSESSL_TRY));
  if (!user.empty()) l.easy_setopt(h.get(), CURLOPT_USERNAME, user.c_str());
  if (!password.empty()) l.easy_setopt(h.get(), CURLOPT_PASSWORD, password.c_str());
  return perform(l, h.get(), cancel, what);
}

std::atomic<uint64_t> delivery_count{0};

Status deliver_maildir(const config::MessagingConfig& config, const OutgoingMessage& m) {
  if (!config.maildir) {
    return Status::error("[messaging] backend = \"maildir\" needs [messaging] maildir, the folder");
  }
  const fs::path root = *config.maildir;
  std::error_code ec;
  fs::create_directories(root, ec);
  for (const char* sub : {"tmp", "new", "cur"}) {
    if (::mkdir((root / sub).c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::error(fmt::format("cannot create the Maildir folder {}: {}",
                                       (root / sub).string(), std::strerror(errno)));
    }
  }
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const int64_t secs = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  const int64_t usecs =
      std::chrono::duration_cast<std::chrono::microseconds>(now).count() % 1000000;
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  for (char& c : host) {
    if (c == '/' || c == ':') c = '_';
  }
  const std::string unique = fmt::format("{}.M{}P{}Q{}.{}", secs, usecs, ::getpid(),
                                         delivery_count.fetch_add(1) + 1, host);
  const fs::path tmp = root / "tmp" / unique;
  const fs::path dest = root / "new" / unique;
  const std::string text = rfc5322_text(config, m, secs);
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
      return Status::error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    }
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmp.c_str());
        return Status::error(fmt::format("cannot write {}: {}", tmp.string(), why));
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) {
      const std::string why = std::strerror(errno);
      ::unlink(tmp.c_str());
      return Status::error(fmt::format("cannot write {}: {}", tmp.string(), why));
    }
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::error(
        fmt::format("cannot move {} into {}: {}", tmp.string(), (root / "new").string(), why));
  }
  return ok_status();
}

}  // namespace

Status check_outgoing(const OutgoingMessage& m) {
  if (has_line_break(m.to)) {
    return Status::error("field 'to' holds a line break: it must be one plain address");
  }
  if (has_line_break(m.subject)) {
    return Status::error("field 'subject' holds a line break: a subject is one line");
  }
  if (!plain_address(m.to)) {
    return Status::error(fmt::format(
        "field 'to' is not one plain address (local@domain, with no name, brackets, commas or "
        "spaces): '{}'",
        replace_invalid_utf8(m.to.substr(0, 200))));
  }
  return ok_status();
}

std::string rfc5322_text(const config::MessagingConfig& config, const OutgoingMessage& m,
                         int64_t unix_s) {
  const std::string from = config.from.empty() ? "mecha@localhost" : config.from;
  std::string out;
  out += "From: " + from + "\r\n";
  out += "To: " + m.to + "\r\n";
  if (!m.subject.empty()) out += "Subject: " + encoded_subject(m.subject) + "\r\n";
  out += "Date: " + rfc5322_date(unix_s) + "\r\n";
  out += fmt::format("Message-ID: <outbox-{}.{}@mecha>\r\n", m.id, unix_s);
  out += "MIME-Version: 1.0\r\n";
  out += "Content-Type: text/plain; charset=utf-8\r\n";
  const std::string body = replace_invalid_utf8(m.body);
  if (ascii(body) && short_lines(body)) {
    out += "Content-Transfer-Encoding: 7bit\r\n\r\n";
    out += crlf_lines(body);
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
    return out;
  }
  out += "Content-Transfer-Encoding: base64\r\n\r\n";
  const std::string b64 = encode_base64(body);
  for (size_t i = 0; i < b64.size(); i += 76) out += b64.substr(i, 76) + "\r\n";
  return out;
}

Status deliver_message(const config::MessagingConfig& config, const OutgoingMessage& m,
                       const CancelToken* cancel) {
  MECHA_RETURN_IF_ERROR(check_outgoing(m));
  if (config.backend == "maildir") return deliver_maildir(config, m);
  if (config.backend == "webhook") return deliver_webhook(config, m, cancel);
  if (config.backend == "smtp") return deliver_smtp(config, m, cancel);
  return Status::error(
      fmt::format("[messaging] backend '{}' is not one of maildir, webhook, smtp; nothing was sent",
                  config.backend));
}

}  // namespace mecha::tools
