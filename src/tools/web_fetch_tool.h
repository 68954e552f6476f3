// WebFetch: a web page as text (Claude Code's name and input: {url, prompt?}).
//
// The page is fetched with WebClient (tools/web_client.h: public addresses only unless
// [web] allow_private, checked at every redirect, a size cap, a timeout) and turned into text
// (tools/html_text.h), the fetch and the conversion together within [web] timeout_s and
// stopped by the run's cancel token. Claude Code hands the page and the prompt to a second model;
// mecha does not: the result begins with the page's URL, its title and the prompt ("Asked: ..."),
// and the model answers the prompt itself from the text that follows.
//
// Labels: the page is untrusted_input (its text is whoever wrote the page's), and a fetch is
// also external_send: the URL (path, query, even the host name) can carry data out, so a
// fetch of a URL the model made up is a send for the trifecta interlock. A URL the user wrote
// in the prompt (ToolContext::user_urls) or on a domain of [web] allowed_domains (or a
// subdomain) carries nothing the model chose, and is not a send.
#pragma once

#include "base/clock.h"
#include "config/world_config.h"
#include "tools/tool.h"
#include "tools/web_client.h"

namespace mecha::tools {

class WebFetchTool final : public Tool {
 public:
  // `classify` decides the class of each address (tests move their loopback servers);
  // `clock` times the conversion of a page against [web] timeout_s.
  // REQUIRES: `clock` outlives the tool.
  explicit WebFetchTool(config::WebConfig config, AddressClassifier classify = classify_address,
                        const mecha::Clock* clock = &SystemClock::instance());

  std::string name() const override { return "WebFetch"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override {
    return {.untrusted_input = true, .external_send = true};
  }
  Capabilities capabilities_for(const Json& input, const ToolContext& ctx) const override;
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  config::WebConfig config_;
  AddressClassifier classify_;
  const mecha::Clock* clock_;
};

// Whether `host` is one of `domains` or below one ("docs.python.org" is below
// "python.org"), ignoring case; a domain written "*.x" or ".x" is x.
bool host_in_domains(const std::string& host, const std::vector<std::string>& domains);

}  // namespace mecha::tools
