// Where a fetch may connect: the addresses a host name resolves to, each put in a class, and
// the check that refuses a host when any of its addresses is not a public one.
//
// A fetched URL is chosen by the model, so by whoever wrote what the model read: without
// this check it reaches the services of the machine and its network that no one outside
// could (a database on 127.0.0.1, a router's page, the cloud's metadata service with its
// credentials at 169.254.169.254). The check runs on every address getaddrinfo returns, so
// a name whose DNS answers both a public and a private address is refused, and on the
// numeric forms too (2130706433, 0x7f.1, ::ffff:127.0.0.1, 6to4 and NAT64 wrappings of a
// private IPv4), which resolve to the address they spell.
//
// Thread-safe: no state.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace mecha::tools {

enum class AddressClass {
  kPublic,
  kLoopback,     // 127.0.0.0/8, ::1
  kPrivate,      // 10/8, 172.16/12, 192.168/16, fc00::/7
  kLinkLocal,    // 169.254/16, fe80::/10
  kMetadata,     // 169.254.169.254, fd00:ec2::254: a cloud's instance metadata service
  kSharedCgnat,  // 100.64/10, carrier-grade NAT
  kThisNetwork,  // 0.0.0.0/8, ::
  kMulticast,    // 224/4, ff00::/8
  kBroadcast,    // 255.255.255.255
  kReserved,     // 240/4, 192.0.0/24, 198.18/15, documentation ranges: nothing public
  kUnknown,      // not a numeric address at all
};

// A word for messages: "loopback", "private", "link-local", "metadata", ...
std::string_view address_class_name(AddressClass c);

// The class of a numeric IPv4 or IPv6 address as getaddrinfo prints it ("127.0.0.1",
// "::ffff:7f00:1"). An IPv6 address that carries an IPv4 one (mapped ::ffff:a.b.c.d,
// compatible ::a.b.c.d, 6to4 2002:AABB:CCDD::, NAT64 64:ff9b::a.b.c.d) is the class of that
// IPv4 address when it is not public.
AddressClass classify_address(std::string_view ip);

// Decides the class of an address; tests put their loopback servers where they need them.
using AddressClassifier = std::function<AddressClass(std::string_view ip)>;

// Every address `host` resolves to (getaddrinfo, any family), numeric, without duplicates.
// A host in brackets ("[::1]") is read without them. An error names the host and what the
// resolver said.
Result<std::vector<std::string>> resolve_host(const std::string& host);

// Refuses `host` when one of its `addresses` is of any class but kPublic (see below).
Status refuse_non_public(const std::string& host, const std::vector<std::string>& addresses,
                         const AddressClassifier& classify);

// Resolves `host` and checks each address: when `allow_private` is false, one address of any
// class but kPublic refuses the host, with a message naming the host, the address, its class,
// and the config key that allows it. Returns the addresses to connect to.
Result<std::vector<std::string>> checked_addresses(const std::string& host, bool allow_private,
                                                   const AddressClassifier& classify);

}  // namespace mecha::tools
