// Libcurl: the libcurl entry points mecha calls, resolved with dlopen on first use.
//
// Linking libcurl pulls some thirty shared libraries (TLS, Kerberos, LDAP, SSH...) into
// every start of the binary, model call or not; `mecha --version`, `mecha guard check` and
// a cassette run pay for none of them this way. The header is used for its types and
// constants only.
//
// Promises:
//  1. libcurl() loads libcurl.so.4 and runs curl_global_init once per process; every later
//     call returns the same table, or the same error when loading failed.
//  2. A library that is missing, or lacks one of the entry points, is an error naming the
//     file and the missing symbol, and saying which package provides it.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

#include "base/result.h"

namespace mecha::providers {

struct Libcurl {
  decltype(&curl_global_init) global_init;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_perform) easy_perform;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_multi_init) multi_init;
  decltype(&curl_multi_cleanup) multi_cleanup;
  decltype(&curl_multi_add_handle) multi_add_handle;
  decltype(&curl_multi_remove_handle) multi_remove_handle;
  decltype(&curl_multi_perform) multi_perform;
  decltype(&curl_multi_poll) multi_poll;
  decltype(&curl_multi_info_read) multi_info_read;
  decltype(&curl_multi_strerror) multi_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
  // The URL API: WebFetch reads a URL's host and port as curl will connect to them.
  decltype(&curl_url) url;
  decltype(&curl_url_cleanup) url_cleanup;
  decltype(&curl_url_set) url_set;
  decltype(&curl_url_get) url_get;
  decltype(&curl_free) free;
};

// Handles that free themselves through the table's entry points.
using EasyHandle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using MultiHandle = std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)>;
using HeaderList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;
inline EasyHandle new_easy(const Libcurl& lib) { return {lib.easy_init(), lib.easy_cleanup}; }
inline MultiHandle new_multi(const Libcurl& lib) { return {lib.multi_init(), lib.multi_cleanup}; }
// Takes `list` (may be null: an empty list that slist_append extends through reset()).
inline HeaderList own_list(const Libcurl& lib, curl_slist* list) {
  return {list, lib.slist_free_all};
}

// The process's libcurl (promise 1).
Result<const Libcurl*> libcurl();

// What CURLOPT_NOPROXY is set to for a model, MCP or message endpoint: loopback (a local
// server, a test) is never reached through a proxy, and neither is a host that no_proxy or
// NO_PROXY names, as with the plain transport (plain_http.h). Setting the option replaces
// libcurl's own reading of those variables, so the user's lists are kept here; one that is
// "*" exempts every host.
std::string no_proxy_list();

// Loads the named library into a new table, without global init and without caching.
// The library stays loaded for the life of the process. For tests of promise 2.
Result<Libcurl> load_libcurl(const char* file);

}  // namespace mecha::providers
