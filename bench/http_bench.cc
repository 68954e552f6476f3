// One model request's transport cost on loopback (issue 19: reused connections), against a
// keep-alive server that streams a short SSE answer, read as a provider reads it (whole at
// its final event).
//
// BM_PostOnAKeptConnection is a run's client: one HttpClient for every request, so all of
// them share one connection. BM_PostOnANewConnection builds a client per request, as every
// request did before clients kept their handles: a new connection each time. The
// `connections` counter is connections per request, as the server counted them. Each runs
// over both transports: /libcurl (https:// and proxied URLs) and /plain (http:// URLs).
#include <benchmark/benchmark.h>

#include <string>

#include "providers/http.h"
#include "providers/testing/fake_model_server.h"

namespace mecha::providers {
namespace {

using testing::FakeModelServer;
using testing::ScriptedResponse;

const std::string kAnswer =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n";

class UntilDone final : public BodyReceiver {
 public:
  Status on_body(std::string_view piece) override {
    body_.append(piece);
    return ok_status();
  }
  bool complete() const override { return body_.find("data: [DONE]\n\n") != std::string::npos; }

 private:
  std::string body_;
};

HttpOptions options(HttpTransport transport) {
  HttpOptions o;
  o.max_retries = 0;
  o.transport = transport;
  return o;
}

HttpRequest request_to(const FakeModelServer& server) {
  HttpRequest r;
  r.url = server.base_url("/v1/chat/completions");
  r.headers = {"Content-Type: application/json"};
  r.body = std::string(4096, 'x');  // a short conversation
  return r;
}

void post_once(benchmark::State& state, FakeModelServer& server, const HttpClient& client) {
  server.enqueue(ScriptedResponse::sse(kAnswer));
  UntilDone receiver;
  auto reply = client.post(request_to(server), receiver);
  if (!reply.ok()) state.SkipWithError(reply.message().c_str());
}

void report(benchmark::State& state, const FakeModelServer& server) {
  state.counters["connections"] =
      static_cast<double>(server.connections()) / static_cast<double>(server.requests().size());
}

void BM_PostOnAKeptConnection(benchmark::State& state, HttpTransport transport) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  HttpClient client(options(transport));
  for (auto _ : state) post_once(state, server, client);
  report(state, server);
}
BENCHMARK_CAPTURE(BM_PostOnAKeptConnection, libcurl, HttpTransport::kLibcurl)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_PostOnAKeptConnection, plain, HttpTransport::kPlain)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_PostOnANewConnection(benchmark::State& state, HttpTransport transport) {
  FakeModelServer server(FakeModelServer::Connections::kKeptAlive);
  for (auto _ : state) {
    HttpClient client(options(transport));
    post_once(state, server, client);
  }
  report(state, server);
}
BENCHMARK_CAPTURE(BM_PostOnANewConnection, libcurl, HttpTransport::kLibcurl)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_PostOnANewConnection, plain, HttpTransport::kPlain)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace mecha::providers

BENCHMARK_MAIN();
