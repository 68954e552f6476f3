// The tools that reach the world outside the work tree: [web], [memory], [mail], [messaging],
// and the interlock's mode, [security].
//
//   [web]
//   allow_private = false         # Default: false; true lets WebFetch reach loopback, private,
//                                 #   link-local and metadata addresses (tests use it)
//   allowed_domains = ["docs.python.org"]
//                                 # Default: none. A fetch of a URL on one of these domains (or
//                                 #   a subdomain) is not a send; any other URL the user did not
//                                 #   write in the prompt is (DESIGN.md, security model 2).
//                                 #   Bare host names only; the reader keeps them in lower case
//   max_bytes = 10485760          # Default: 10 MiB of body; more is cut off with a note
//   timeout_s = 30                # Default: 30, the whole fetch, redirects included
//   max_redirects = 5             # Default: 5
//
//   [web.search]                  # WebSearch is offered only when a backend is set
//   backend = "searxng"           # "searxng" (its JSON API) or "brave" (the Brave Search API)
//   url = "http://127.0.0.1:8888" # SearXNG's base URL; Default for brave: its public API
//   api_key_env = "BRAVE_API_KEY" # brave only; Default: BRAVE_API_KEY
//   max_results = 10              # Default: 10
//
//   [memory]
//   enabled = true                # Default: true: Remember and Recall are offered
//   file = "/path/notes.db"       # Default: notes.db in the state directory
//
//   [mail]
//   maildir = "~/Mail/INBOX"      # ReadInbox and ReadMessage are offered only when it is set
//
//   [messaging]
//   approve = "always"            # "always" (Default): every message waits in the outbox for a
//                                 #   person; "when_tainted": only while the run holds untrusted
//                                 #   content; "never": sent at once (the interlock still holds)
//   backend = "maildir"           # where an approved message goes: "maildir", "webhook" or
//                                 #   "smtp"; SendMessage is offered only when it is set
//   maildir = "~/Mail/Sent"       # maildir: the message is written into its new/
//   webhook_url = "https://..."   # webhook: a JSON POST {to, subject, body, id}
//   smtp_url = "smtp://host:587"  # smtp (smtps:// for TLS)
//   from = "me@example.com"       # smtp: the sender
//   smtp_user_env = "SMTP_USER"   # smtp: names of variables holding the login, if any
//   smtp_password_env = "SMTP_PASSWORD"
//   outbox = "/path/outbox.db"    # Default: outbox.db in the state directory
//
//   [security]
//   mode = "trifecta"             # Default; "rule_of_two" also holds back changes of state
//                                 #   (Write, Edit, Bash, MCP tools that change state) once a
//                                 #   run holds untrusted content and private data
//
// Paths are absolute, or start with "~/" (the user's $HOME); a relative path is an error
// naming the key. A backend's own keys are required once the files are merged (maildir
// needs [messaging] maildir, webhook webhook_url, smtp smtp_url and from; searxng needs url).
// Every key here is a security key for an untrusted project file (config.h), except the
// values that only tighten: [web] allow_private = false and allowed_domains = [], [memory]
// enabled = false, [messaging] approve = "always", [security] mode = "rule_of_two".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mecha::config {

// The Brave Search API, [web.search] url's Default for backend = "brave".
inline constexpr char kBraveSearchUrl[] = "https://api.search.brave.com/res/v1/web/search";

struct SearchConfig {
  std::string backend;  // "" (no WebSearch), "searxng" or "brave"
  std::string url;      // set by the reader for brave when not given: kBraveSearchUrl
  std::string api_key_env = "BRAVE_API_KEY";
  int max_results = 10;
  bool operator==(const SearchConfig&) const = default;
};

struct WebConfig {
  bool allow_private = false;
  std::vector<std::string> allowed_domains;
  int64_t max_bytes = 10 << 20;
  double timeout_s = 30;
  int max_redirects = 5;
  SearchConfig search;
  bool operator==(const WebConfig&) const = default;
};

struct MemoryConfig {
  bool enabled = true;
  std::optional<std::filesystem::path> file;  // unset: <state dir>/notes.db
  bool operator==(const MemoryConfig&) const = default;
};

struct MailConfig {
  std::optional<std::filesystem::path> maildir;  // unset: no mailbox tools
  bool operator==(const MailConfig&) const = default;
};

enum class SendApproval { kAlways, kWhenTainted, kNever };

struct MessagingConfig {
  SendApproval approve = SendApproval::kAlways;
  std::string backend;  // "" (no SendMessage), "maildir", "webhook" or "smtp"
  std::optional<std::filesystem::path> maildir;
  std::string webhook_url;
  std::string smtp_url;
  std::string from;
  std::string smtp_user_env;
  std::string smtp_password_env;
  std::optional<std::filesystem::path> outbox;  // unset: <state dir>/outbox.db
  bool operator==(const MessagingConfig&) const = default;
};

enum class SecurityMode { kTrifecta, kRuleOfTwo };

struct SecurityConfig {
  SecurityMode mode = SecurityMode::kTrifecta;
  bool operator==(const SecurityConfig&) const = default;
};

}  // namespace mecha::config
