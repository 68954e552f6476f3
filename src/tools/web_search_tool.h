// WebSearch: a web search through the backend of [web.search] (Claude Code's name and input:
// {query, allowed_domains?, blocked_domains?}).
//
// Backends:
//   searxng  GET {url}/search?q=QUERY&format=json  ->  results[].{url, title, content}
//   brave    GET {url}?q=QUERY&count=N with Accept: application/json and
//            X-Subscription-Token: $api_key_env  ->  web.results[].{url, title, description}
// The backend URL is the user's own configuration, so it is fetched wherever it points
// ([web] allow_private does not apply to it) and is not redirected. A missing API key is an
// error at call time naming the variable. Results are filtered by the call's allowed_domains
// (a result must be on one, or below one) and blocked_domains, and cut at max_results.
//
// Labels: results are untrusted_input (snippets are whoever wrote the pages'); the query
// leaves the machine, so every call is external_send, whatever the query.
#pragma once

#include "config/world_config.h"
#include "tools/tool.h"

namespace mecha::tools {

class WebSearchTool final : public Tool {
 public:
  // REQUIRES: config.search.backend is "searxng" or "brave".
  explicit WebSearchTool(config::WebConfig config);

  std::string name() const override { return "WebSearch"; }
  std::string description() const override;
  Json input_schema() const override;
  bool read_only() const override { return true; }
  Capabilities capabilities() const override {
    return {.untrusted_input = true, .external_send = true};
  }
  TreeAccess tree_access() const override { return TreeAccess::kNone; }
  ToolOutput call(const Json& input, ToolContext& ctx) override;

 private:
  config::WebConfig config_;
};

// `s` percent-encoded for a query string (RFC 3986 unreserved characters kept).
std::string query_escape(std::string_view s);

}  // namespace mecha::tools
