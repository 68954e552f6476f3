#include "providers/libcurl.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace mecha::providers {
namespace {

TEST(Libcurl, LoadsOnceAndHandsOutTheSameTable) {
  auto first = libcurl();
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = libcurl();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_NE((*first)->easy_setopt, nullptr);
}

TEST(Libcurl, AMissingLibraryNamesTheFileAndThePackage) {
  auto lib = load_libcurl("libmecha-no-such-curl.so.4");
  ASSERT_FALSE(lib.ok());
  const std::string m = lib.status().message();
  EXPECT_NE(m.find("cannot load libmecha-no-such-curl.so.4"), std::string::npos) << m;
  EXPECT_NE(m.find("libcurl4"), std::string::npos) << m;
}

TEST(Libcurl, ALibraryWithoutCurlsFunctionsNamesTheMissingOne) {
  auto lib = load_libcurl("libc.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().message(),
            "libc.so.6 has no curl_global_init: it is not a usable libcurl");
}

// Setting CURLOPT_NOPROXY replaces libcurl's reading of no_proxy, so a host the user exempted
// from the proxy would be proxied unless the list carries it on.
TEST(Libcurl, TheNoProxyListIsLoopbackAndWhatTheUserExempted) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int failed = 0;
    const auto expect = [&](const std::string& want) {
      ++failed;
      if (no_proxy_list() != want) _exit(failed);
    };
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    expect("127.0.0.1,localhost,::1");
    setenv("no_proxy", "gpu.internal,.corp.example", 1);
    expect("127.0.0.1,localhost,::1,gpu.internal,.corp.example");
    setenv("NO_PROXY", "llm.lan", 1);
    expect("127.0.0.1,localhost,::1,gpu.internal,.corp.example,llm.lan");
    setenv("no_proxy", "", 1);
    expect("127.0.0.1,localhost,::1,llm.lan");
    setenv("NO_PROXY", "*", 1);
    expect("*");
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the case that failed, counted from 1";
}

}  // namespace
}  // namespace mecha::providers
