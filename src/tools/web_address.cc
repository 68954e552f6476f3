#include "tools/web_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

namespace mecha::tools {
namespace {

struct Range4 {
  uint32_t base;
  int bits;
  AddressClass cls;
};

constexpr uint32_t v4(int a, int b, int c, int d) {
  return (uint32_t(a) << 24) | (uint32_t(b) << 16) | (uint32_t(c) << 8) | uint32_t(d);
}

// Most specific first: the metadata address lies inside link-local.
constexpr std::array<Range4, 17> kRanges4 = {{
    {v4(169, 254, 169, 254), 32, AddressClass::kMetadata},
    {v4(255, 255, 255, 255), 32, AddressClass::kBroadcast},
    {v4(0, 0, 0, 0), 8, AddressClass::kThisNetwork},
    {v4(127, 0, 0, 0), 8, AddressClass::kLoopback},
    {v4(10, 0, 0, 0), 8, AddressClass::kPrivate},
    {v4(172, 16, 0, 0), 12, AddressClass::kPrivate},
    {v4(192, 168, 0, 0), 16, AddressClass::kPrivate},
    {v4(169, 254, 0, 0), 16, AddressClass::kLinkLocal},
    {v4(100, 64, 0, 0), 10, AddressClass::kSharedCgnat},
    {v4(224, 0, 0, 0), 4, AddressClass::kMulticast},
    {v4(240, 0, 0, 0), 4, AddressClass::kReserved},
    {v4(192, 0, 0, 0), 24, AddressClass::kReserved},
    {v4(192, 0, 2, 0), 24, AddressClass::kReserved},
    {v4(198, 18, 0, 0), 15, AddressClass::kReserved},
    {v4(198, 51, 100, 0), 24, AddressClass::kReserved},
    {v4(203, 0, 113, 0), 24, AddressClass::kReserved},
    {v4(192, 88, 99, 0), 24, AddressClass::kReserved},  // 6to4 relay anycast
}};

AddressClass classify_v4(uint32_t a) {
  for (const Range4& r : kRanges4) {
    uint32_t mask = r.bits == 0 ? 0 : ~uint32_t(0) << (32 - r.bits);
    if ((a & mask) == r.base) return r.cls;
  }
  return AddressClass::kPublic;
}

uint32_t v4_at(const uint8_t* b) {
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

bool all_zero(const uint8_t* b, int n) {
  return std::all_of(b, b + n, [](uint8_t x) { return x == 0; });
}

AddressClass classify_v6(const uint8_t* b) {
  if (all_zero(b, 16)) return AddressClass::kThisNetwork;
  if (all_zero(b, 15) && b[15] == 1) return AddressClass::kLoopback;
  // An IPv4 address inside: mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96
  // and 64:ff9b:1::/48 (local), 6to4 2002:AABB:CCDD::/48. A host can reach the IPv4 address
  // through each, so each is what that address is.
  const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  const uint8_t nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
  if ((all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff) || all_zero(b, 12) ||
      std::equal(nat64, nat64 + 12, b) || std::equal(nat64_local, nat64_local + 6, b)) {
    return classify_v4(v4_at(b + 12));
  }
  if (b[0] == 0x20 && b[1] == 0x02) return classify_v4(v4_at(b + 2));
  if ((b[0] & 0xfe) == 0xfc) {
    const uint8_t metadata[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};
    return std::equal(metadata, metadata + 16, b) ? AddressClass::kMetadata
                                                  : AddressClass::kPrivate;
  }
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::kPrivate;  // site-local
  if (b[0] == 0xff) return AddressClass::kMulticast;
  // Teredo (2001::/32, an obscured IPv4 inside), documentation 2001:db8::/32, discard 100::/64.
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) return AddressClass::kReserved;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return AddressClass::kReserved;
  if (b[0] == 0x01 && b[1] == 0 && all_zero(b + 2, 6)) return AddressClass::kReserved;
  return AddressClass::kPublic;
}

}  // namespace

std::string_view address_class_name(AddressClass c) {
  switch (c) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kPrivate:
      return "private";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kMetadata:
      return "metadata";
    case AddressClass::kSharedCgnat:
      return "shared (CGNAT)";
    case AddressClass::kThisNetwork:
      return "this-network";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kBroadcast:
      return "broadcast";
    case AddressClass::kReserved:
      return "reserved";
    case AddressClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

AddressClass classify_address(std::string_view ip) {
  std::string text(ip);
  in_addr a4{};
  if (inet_pton(AF_INET, text.c_str(), &a4) == 1) return classify_v4(ntohl(a4.s_addr));
  if (size_t pct = text.find('%'); pct != std::string::npos) text.resize(pct);  // zone id
  in6_addr a6{};
  if (inet_pton(AF_INET6, text.c_str(), &a6) == 1) return classify_v6(a6.s6_addr);
  return AddressClass::kUnknown;
}

Result<std::vector<std::string>> resolve_host(const std::string& written) {
  std::string host = written;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return Status::error("the URL names no host");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    return Status::error(fmt::format("cannot resolve host '{}': {}", written, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  std::vector<std::string> out;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = nullptr;
    if (ai->ai_family == AF_INET) {
      where = &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr;
    } else if (ai->ai_family == AF_INET6) {
      where = &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(ai->ai_family, where, text, sizeof text) == nullptr) continue;
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  if (out.empty()) {
    return Status::error(fmt::format("cannot resolve host '{}': no IPv4 or IPv6 address", written));
  }
  return out;
}

Status refuse_non_public(const std::string& host, const std::vector<std::string>& addresses,
                         const AddressClassifier& classify) {
  for (const std::string& ip : addresses) {
    AddressClass c = classify(ip);
    if (c == AddressClass::kPublic) continue;
    return Status::error(fmt::format(
        "refused: host '{}' resolves to {}, a {} address; WebFetch reaches only public "
        "addresses, so that a fetched URL cannot reach services of this machine or its network "
        "(the user's config can set `[web] allow_private = true` to allow it)",
        host, ip, address_class_name(c)));
  }
  return ok_status();
}

Result<std::vector<std::string>> checked_addresses(const std::string& host, bool allow_private,
                                                   const AddressClassifier& classify) {
  auto addresses = resolve_host(host);
  if (!addresses || allow_private) return addresses;
  MECHA_RETURN_IF_ERROR(refuse_non_public(host, *addresses, classify));
  return addresses;
}

}  // namespace mecha::tools
