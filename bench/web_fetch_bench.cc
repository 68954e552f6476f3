// WebFetch of a 1 MB HTML page served over loopback, to text. Target (issue 17): under 30 ms
// of mecha's own time per fetch.
//
//   cmake -B build -DMECHA_BENCH=ON && ninja -C build web_fetch_bench
//   ./build/bench/web_fetch_bench
//
// The "CPU" column is the CPU time of the thread that calls the tool: the transfer (libcurl
// runs in it), the address check, the charset check and the HTML walk; the loopback server
// runs in a thread of its own and is not counted. "Time" is wall-clock time, server included.
// BM_HtmlToText is the conversion alone.
//
// Measured 2026-12-01 on the shared 2-core build machine, under load: 62-65 ms CPU per fetch,
// 49-55 ms of it in the conversion, of which gumbo's parse is about nine tenths (perf);
// mecha's walk of the tree is about 4 ms.
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tools/html_text.h"
#include "tools/testing/web_server.h"
#include "tools/web_fetch_tool.h"

namespace mecha::tools {
namespace {

// About 1 MB of a documentation page: sections with headings, paragraphs with links and
// inline code, lists, a table and a code block each, and the scripts and styles a real page
// carries.
const std::string& page() {
  static const std::string html = [] {
    std::string h =
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Bench page</title>"
        "<style>body{font:14px sans-serif}</style><script>var a = 1;</script></head><body>";
    for (int i = 0; h.size() < (1u << 20); ++i) {
      h += fmt::format(
          "<section><h2 id=\"s{0}\">Section {0}</h2><p>This paragraph explains part {0} of "
          "the manual, with <a href=\"/docs/part{0}.html\">a link</a> and <code>call_{0}()"
          "</code> in the text, and some more words so that it reads like prose: the quick "
          "brown fox jumps over the lazy dog.</p><ul><li>first point {0}</li><li>second "
          "<em>point</em></li><li><a href=\"https://other.example/{0}\">elsewhere</a></li>"
          "</ul><table><tr><th>key</th><th>value</th></tr><tr><td>k{0}</td><td>v{0}</td></tr>"
          "</table><pre>int f{0}(int x) {{\n  return x * {0};\n}}</pre><script>track({0});"
          "</script></section>\n",
          i);
    }
    return h + "</body></html>";
  }();
  return html;
}

void BM_WebFetch1MiBPage(benchmark::State& state) {
  testing::WebServer web;
  web.page("/page.html", "text/html; charset=utf-8", page());
  config::WebConfig config;
  WebFetchTool tool(config, [](std::string_view ip) {
    return ip == "127.0.0.1" ? AddressClass::kPublic : classify_address(ip);
  });
  CancelToken cancel;
  ToolContext ctx;
  ctx.cancel = &cancel;
  const Json input = {{"url", web.url("/page.html")}, {"prompt", "what is in part 7?"}};
  size_t text_bytes = 0;
  for (auto _ : state) {
    ToolOutput out = tool.call(input, ctx);
    if (out.is_error) state.SkipWithError(out.content.c_str());
    text_bytes = out.content.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["html_bytes"] = static_cast<double>(page().size());
  state.counters["text_bytes"] = static_cast<double>(text_bytes);
}
BENCHMARK(BM_WebFetch1MiBPage)->Unit(benchmark::kMillisecond);

void BM_HtmlToText(benchmark::State& state) {
  for (auto _ : state) {
    auto text = page_text("text/html; charset=utf-8", page(), "https://bench.example/page.html");
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_HtmlToText)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mecha::tools

BENCHMARK_MAIN();
