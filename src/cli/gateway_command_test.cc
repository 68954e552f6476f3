// `mecha gateway` through the binary: it runs mecha-gateway with its arguments, and the
// gateway refuses what would expose it before it binds anything.
#include <gtest/gtest.h>

#include "cli/testing/run_binary.h"

namespace mecha::cli {
namespace {

using testing::run_mecha;
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

}  // namespace
}  // namespace mecha::cli
