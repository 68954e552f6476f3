// MessageDelivery: sends one message of the outbox through the backend [messaging] names.
//   maildir  the message as RFC 5322 text, written into the Maildir's tmp/ and renamed into
//            new/ (tmp/, new/ and cur/ are created 0700 when missing)
//   webhook  an HTTP POST of the JSON {"id", "to", "subject", "body"}; a 2xx answer is success
//   smtp     libcurl to smtp:// or smtps:// [messaging] smtp_url, from [messaging] from, the
//            login from the environment variables [messaging] smtp_user_env and
//            smtp_password_env; with a login, smtp:// must upgrade to TLS (STARTTLS)
//
// Header injection: a `to` or `subject` holding CR or LF, and a `to` that is not one plain
// address (local@domain, nothing else), are refused before anything is written, with an
// error naming the field.
//
// Thread-safety: stateless functions; call from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "base/cancel.h"
#include "base/result.h"
#include "config/world_config.h"

namespace mecha::tools {

struct OutgoingMessage {
  int64_t id = 0;  // the outbox id
  std::string to;
  std::string subject;
  std::string body;
};

// Refuses what could inject headers or name more than one recipient (see above).
Status check_outgoing(const OutgoingMessage& m);

// The message as RFC 5322 text with CRLF line ends: From ([messaging] from, else
// "mecha@localhost"), To, Subject (RFC 2047-encoded when not ASCII), Date, Message-ID, and a
// text/plain UTF-8 body (base64 when it is not short-lined ASCII). `unix_s` is the Date.
std::string rfc5322_text(const config::MessagingConfig& config, const OutgoingMessage& m,
                         int64_t unix_s);

// Delivers `m` with the configured backend; an error says which backend failed and why.
// `cancel` may be null.
Status deliver_message(const config::MessagingConfig& config, const OutgoingMessage& m,
                       const CancelToken* cancel);

}  // namespace mecha::tools
