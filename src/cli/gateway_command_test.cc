// `mecha gateway` through the binary: it runs mecha-gateway with its arguments, and the
// gateway refuses what would expose it before it binds anything.
#include <signal.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <regex>

#include "base/strict_json.h"
#include "base/testing/wait_until.h"
#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;
using testing::RunningMecha;
using testing::TempDir;

TEST(GatewayCommand, HelpComesFromTheGatewayItself) {
  TempDir dir;
  auto r = run_mecha({"gateway", "--help"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--token-file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--serve"), std::string::npos) << r.out;
}

TEST(GatewayCommand, AnAddressBeyondLoopbackNeedsTlsOrInsecure) {
  TempDir dir;
  auto r = run_mecha({"gateway", "--listen", "0.0.0.0:0", "--socket", "nowhere.sock"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--listen 0.0.0.0:0: not a loopback address"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--tls-cert"), std::string::npos);
  auto half = run_mecha({"gateway", "--listen", "0.0.0.0:0", "--tls-cert", "c.pem"}, dir.path());
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_NE(half.err.find("TLS needs both --tls-cert and --tls-key"), std::string::npos)
      << half.err;
}

TEST(GatewayCommand, BadListenAndTokenFilesAreUsageErrorsNamingThem) {
  TempDir dir;
  auto port = run_mecha({"gateway", "--listen", "127.0.0.1:http"}, dir.path());
  EXPECT_EQ(port.exit_code, 2);
  EXPECT_NE(port.err.find("--listen 127.0.0.1:http"), std::string::npos) << port.err;
  dir.write("short", "abc\n");
  auto token = run_mecha({"gateway", "--token-file", (dir.path() / "short").string()}, dir.path());
  EXPECT_EQ(token.exit_code, 2);
  EXPECT_NE(token.err.find("at least 16 characters"), std::string::npos) << token.err;
}

// --serve: the gateway starts mecha serve beside it, serves its sessions, and stops it when
// it stops itself.
TEST(GatewayCommand, WithServeItStartsTheDaemonAndStopsItOnTheWayOut) {
  TempDir dir;
  dir.write("c.jsonl",
            "{\"mecha_cassette\": 1}\n"
            "{\"response\": {\"content\": [{\"type\": \"text\", \"text\": \"hi\"}], "
            "\"stop_reason\": \"end_turn\", \"usage\": {\"input_tokens\": 1, "
            "\"output_tokens\": 1}}}\n");
  const std::string socket = (dir.path() / "d.sock").string();
  RunningMecha gateway({"gateway", "--listen", "127.0.0.1:0", "--socket", socket, "--serve",
                        "--model", "cassette:c.jsonl", "--store", "s.db"},
                       dir.path());
  std::smatch m;
  std::string out;
  const std::regex login(R"(http://127\.0\.0\.1:(\d+)/login\?token=(\w+))");
  ASSERT_TRUE(mecha::testing::wait_until(
      [&] {
        out = gateway.out_so_far();
        return std::regex_search(out, m, login);
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20)))
      << "no login URL from the gateway: " << out;
  httplib::Client http("127.0.0.1", std::stoi(m[1]));
  const httplib::Headers bearer{{"Authorization", "Bearer " + m[2].str()}};
  auto list = http.Get("/api/sessions", bearer);
  ASSERT_TRUE(list);
  EXPECT_EQ(Json::parse(list->body)["daemon"], "connected") << list->body;
  auto opened = http.Post("/api/sessions", bearer, "{}", "application/json");
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->status, 200) << opened->body;

  gateway.signal(SIGTERM);
  auto r = gateway.wait();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(socket)) << "the daemon it started removed its socket";
}

}  // namespace
}  // namespace mecha::cli
