// libFuzzer target over the mail parser (tools/mail_parse.h): any bytes, read as a mail, as
// its headers alone, and as HTML for its hand-written converter, must give valid UTF-8 within
// the body limit and headers on one line, never crash, and end (-timeout catches a scan that
// runs from every position to the end).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/json_limits.h"
#include "tools/mail_parse.h"

namespace {

void require_valid(const std::string& s) {
  if (mecha::replace_invalid_utf8(s) != s) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mecha::tools;
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  constexpr size_t kBody = 512;
  ParsedMail mail = parse_mail(raw, kBody);
  require_valid(mail.body);
  if (mail.body.size() > kBody) __builtin_trap();
  MailHeaders only = parse_mail_headers(raw);
  for (const MailHeaders* h : {&mail.headers, &only}) {
    for (const std::string* v : {&h->from, &h->to, &h->subject, &h->date, &h->message_id}) {
      require_valid(*v);
      if (v->find_first_of("\r\n") != std::string::npos) __builtin_trap();
    }
  }
  (void)html_to_text(raw);
  require_valid(decode_encoded_words(raw));
  return 0;
}
