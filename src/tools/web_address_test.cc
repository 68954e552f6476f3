#include "tools/web_address.h"

#include <gtest/gtest.h>

#include "tools/web_client.h"

namespace mecha::tools {
namespace {

struct AddressCase {
  const char* ip;
  AddressClass cls;
};

TEST(WebAddress, ClassifiesEveryRangeAFetchMustNotReach) {
  const AddressCase cases[] = {
      {"8.8.8.8", AddressClass::kPublic},
      {"172.32.0.1", AddressClass::kPublic},
      {"100.128.0.1", AddressClass::kPublic},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.0.9", AddressClass::kLoopback},
      {"10.1.2.3", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"192.168.1.1", AddressClass::kPrivate},
      {"169.254.1.1", AddressClass::kLinkLocal},
      {"169.254.169.254", AddressClass::kMetadata},
      {"100.64.0.1", AddressClass::kSharedCgnat},
      {"100.127.255.255", AddressClass::kSharedCgnat},
      {"0.0.0.0", AddressClass::kThisNetwork},
      {"0.1.2.3", AddressClass::kThisNetwork},
      {"224.0.0.1", AddressClass::kMulticast},
      {"255.255.255.255", AddressClass::kBroadcast},
      {"240.0.0.1", AddressClass::kReserved},
      {"2606:4700:4700::1111", AddressClass::kPublic},
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"::1", AddressClass::kLoopback},
      {"::", AddressClass::kThisNetwork},
      {"fc00::1", AddressClass::kPrivate},
      {"fd12:3456::1", AddressClass::kPrivate},
      {"fd00:ec2::254", AddressClass::kMetadata},
      {"fe80::1", AddressClass::kLinkLocal},
      {"fe80::1%lo", AddressClass::kLinkLocal},
      {"ff02::1", AddressClass::kMulticast},
      // IPv4 inside IPv6: the IPv4 address's class.
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:7f00:1", AddressClass::kLoopback},
      {"::ffff:169.254.169.254", AddressClass::kMetadata},
      {"::127.0.0.1", AddressClass::kLoopback},
      {"::10.0.0.1", AddressClass::kPrivate},
      {"2002:7f00:1::", AddressClass::kLoopback},
      {"2002:a00:1::1", AddressClass::kPrivate},
      {"2002:a9fe:a9fe::1", AddressClass::kMetadata},
      {"64:ff9b::127.0.0.1", AddressClass::kLoopback},
      {"64:ff9b::a9fe:a9fe", AddressClass::kMetadata},
      {"64:ff9b:1::c0a8:101", AddressClass::kPrivate},
      {"2001:db8::1", AddressClass::kReserved},
      {"example.com", AddressClass::kUnknown},
  };
  for (const AddressCase& c : cases) {
    EXPECT_EQ(address_class_name(classify_address(c.ip)), address_class_name(c.cls)) << c.ip;
  }
}

// The numeric spellings of loopback that a URL filter reading strings misses: the resolver
// reads them as the address they spell, and so does the check.
TEST(WebAddress, NumericFormsResolveToWhatTheySpell) {
  for (const char* host : {"2130706433", "0x7f.1", "0177.0.0.1", "127.1", "0x7f000001"}) {
    auto r = resolve_host(host);
    ASSERT_TRUE(r.ok()) << host << ": " << r.message();
    EXPECT_EQ(*r, std::vector<std::string>{"127.0.0.1"}) << host;
  }
  auto v6 = resolve_host("[::ffff:7f00:1]");
  ASSERT_TRUE(v6.ok()) << v6.message();
  EXPECT_EQ(*v6, std::vector<std::string>{"::ffff:127.0.0.1"});
}

TEST(WebAddress, RefusalNamesHostAddressClassAndTheKeyThatAllowsIt) {
  auto r = checked_addresses("2130706433", false, classify_address);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "refused: host '2130706433' resolves to 127.0.0.1, a loopback address; WebFetch "
            "reaches only public addresses, so that a fetched URL cannot reach services of this "
            "machine or its network (the user's config can set `[web] allow_private = true` to "
            "allow it)");
  auto local = checked_addresses("localhost", false, classify_address);
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.message().find("a loopback address"), std::string::npos) << local.message();
  auto meta = checked_addresses("169.254.169.254", false, classify_address);
  ASSERT_FALSE(meta.ok());
  EXPECT_NE(meta.message().find("169.254.169.254, a metadata address"), std::string::npos);

  auto allowed = checked_addresses("127.0.0.1", true, classify_address);
  ASSERT_TRUE(allowed.ok()) << allowed.message();
  EXPECT_EQ(*allowed, std::vector<std::string>{"127.0.0.1"});
}

// One refused address among several refuses the host: an attacker's DNS may answer a public
// address and a private one, hoping the connection takes the second.
TEST(WebAddress, OneRefusedAddressAmongManyRefusesTheHost) {
  Status st = refuse_non_public("rebind.example", {"93.184.216.34", "2606:2800::1", "10.0.0.7"},
                                classify_address);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("host 'rebind.example' resolves to 10.0.0.7, a private address"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(
      refuse_non_public("ok.example", {"93.184.216.34", "2606:2800::1"}, classify_address).ok());
}

TEST(WebUrl, ReadsHostAndPortAsCurlWillConnect) {
  struct UrlCase {
    const char* url;
    const char* host;
    int port;
  };
  const UrlCase cases[] = {
      {"http://2130706433/", "127.0.0.1", 80},
      {"http://0x7f.1/", "127.0.0.1", 80},
      {"https://[::ffff:7f00:1]/x", "[::ffff:7f00:1]", 443},
      {"HTTPS://Example.COM:8443/a?b", "example.com", 8443},
      {"http://user:pw@evil.example/", "evil.example", 80},
  };
  for (const UrlCase& c : cases) {
    auto r = parse_web_url(c.url);
    ASSERT_TRUE(r.ok()) << c.url << ": " << r.message();
    EXPECT_EQ(r->host, c.host) << c.url;
    EXPECT_EQ(r->port, c.port) << c.url;
  }
  EXPECT_TRUE(parse_web_url("http://user:pw@evil.example/")->has_credentials);
  auto file = parse_web_url("file:///etc/passwd");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.message(),
            "'file:///etc/passwd' uses the scheme 'file': WebFetch reads only http:// and "
            "https:// URLs");
  auto gopher = parse_web_url("gopher://127.0.0.1:6379/_FLUSHALL");
  EXPECT_FALSE(gopher.ok());
  EXPECT_FALSE(parse_web_url("not a url").ok());
}

}  // namespace
}  // namespace mecha::tools
