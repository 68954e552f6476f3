// BrowserEvents: the frames of one session, shaped into the events the page shows
// (src/cli/gateway/page/app.js reads them; the gateway's README section lists them).
//
// Text is rendered to HTML here, on the server (cli/gateway/markdown.h), never in the browser,
// and a reply is defanged whenever the session has read untrusted content by then: the
// label of the opened session, of any tool result (a subagent's included) and of turn_done,
// whichever says so first. A turn whose turn_done is untrusted has every text it showed
// rendered trusted sent again, defanged, under the same key, so what stays on the page
// follows turn_done's label even for text that came before the untrusted read. Tool input
// and output travel as plain text for the page to insert as text. Owned by one thread.
#pragma once

#include <string>
#include <vector>

#include "base/strict_json.h"
#include "wire/frames.h"

namespace mecha::gateway {

class BrowserEvents {
 public:
  // The events one frame from the daemon makes (none for a frame the page has no use for).
  std::vector<Json> on_frame(const wire::Frame& frame);

  // History replays turns read before the session's current label: it starts clean and
  // follows each past turn's own labels (wire::History).
  void begin_history();

  bool untrusted() const { return untrusted_; }

 private:
  struct ShownText {
    std::string key;
    std::string agent;
    std::string text;
    Json parent;
  };
  void on_event(const wire::Frame& frame, const Json& parent, std::vector<Json>* out);
  Json text_event(const ShownText& t, bool untrusted) const;

  bool untrusted_ = false;          // the session's label as far as the frames have said
  bool session_untrusted_ = false;  // opened's label, restored once history is done
  bool in_history_ = false;
  int64_t next_key_ = 1;
  std::vector<ShownText> trusted_texts_;  // this turn's texts shown as trusted
};

// Plain text for the page: at most `max_bytes`, cut at a character boundary, with a line
// saying how much was left out.
std::string shown_text(std::string_view text, size_t max_bytes);

}  // namespace mecha::gateway
