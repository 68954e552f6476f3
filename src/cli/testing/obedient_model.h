// ObedientModel: a scripted model that does whatever the text it reads tells it to, for the
// prompt-injection suite (tests/injection/). It plays Anthropic's Messages API on loopback,
// streaming, so a real `mecha run` drives it through its real provider.
//
// Its script is the conversation itself. An instruction is `<<call TOOL {json input}>>`
// anywhere in the system prompt (which quotes the tree's CLAUDE.md; obeyed first), the
// user's prompt or a tool result. The model keeps one queue of calls:
// the prompt's, in order; each tool result's instructions go to the front of what is left,
// so an injected instruction is obeyed at once (an obedient model, the worst case), and
// each distinct one once (a recalled note that matches its own query does not loop). It makes
// one call per reply; when the queue is empty it answers "Done." In an input's strings,
// `{{last_result}}` stands for the content of the latest tool result (the model copies what
// it read into what it sends), cut to 4000 bytes; `{{last_result_url}}` is the same,
// percent-encoded for a URL; `{{later:NAME}}` becomes `{{NAME}}`, for an instruction
// planted to be obeyed later (written into a note now, filled when recalled).
//
// Stateless between requests (each answer is derived from the request's messages), so one
// server serves any number of runs, in parallel too. Listens on 127.0.0.1 from construction
// to destruction.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>
#include <thread>

#include "base/strict_json.h"

namespace mecha::cli::testing {

// `s` with every byte but letters, digits and -_.~ written as %XX, as in a URL's query.
std::string percent_encoded(std::string_view s);

class ObedientModel {
 public:
  ObedientModel();
  ~ObedientModel();
  ObedientModel(const ObedientModel&) = delete;
  ObedientModel& operator=(const ObedientModel&) = delete;

  // "http://127.0.0.1:PORT/v1", the base_url of an anthropic provider.
  std::string base_url() const;

  // The next assistant message for a Messages API request body, as the server answers it:
  // {"content": [...], "stop_reason": ...}. Exposed for tests of the script.
  static Json next_reply(const Json& request);

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace mecha::cli::testing
