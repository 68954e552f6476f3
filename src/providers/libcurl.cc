#include "providers/libcurl.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string_view>

#include "base/shared_library.h"

namespace mecha::providers {
namespace {

constexpr const char* kSoname = "libcurl.so.4";
constexpr const char* kPackage = "libcurl4 (apt-get install libcurl4)";

template <class Fn>
Status resolve(void* handle, const char* file, const char* name, Fn& slot) {
  return resolve_symbol(handle, file, name, "libcurl", slot);
}

}  // namespace

Result<Libcurl> load_libcurl(const char* file) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::error(fmt::format("cannot load {} ({}); model calls over HTTP need {}", file,
                                     why != nullptr ? why : "unknown reason", kPackage));
  }
  Libcurl lib{};
  // clang-format off
  for (Status st : {
           resolve(handle, file, "curl_global_init", lib.global_init),
           resolve(handle, file, "curl_easy_init", lib.easy_init),
           resolve(handle, file, "curl_easy_cleanup", lib.easy_cleanup),
           resolve(handle, file, "curl_easy_setopt", lib.easy_setopt),
           resolve(handle, file, "curl_easy_perform", lib.easy_perform),
           resolve(handle, file, "curl_easy_getinfo", lib.easy_getinfo),
           resolve(handle, file, "curl_easy_strerror", lib.easy_strerror),
           resolve(handle, file, "curl_multi_init", lib.multi_init),
           resolve(handle, file, "curl_multi_cleanup", lib.multi_cleanup),
           resolve(handle, file, "curl_multi_add_handle", lib.multi_add_handle),
           resolve(handle, file, "curl_multi_remove_handle", lib.multi_remove_handle),
           resolve(handle, file, "curl_multi_perform", lib.multi_perform),
           resolve(handle, file, "curl_multi_poll", lib.multi_poll),
           resolve(handle, file, "curl_multi_info_read", lib.multi_info_read),
           resolve(handle, file, "curl_multi_strerror", lib.multi_strerror),
           resolve(handle, file, "curl_slist_append", lib.slist_append),
           resolve(handle, file, "curl_slist_free_all", lib.slist_free_all),
           resolve(handle, file, "curl_url", lib.url),
           resolve(handle, file, "curl_url_cleanup", lib.url_cleanup),
           resolve(handle, file, "curl_url_set", lib.url_set),
           resolve(handle, file, "curl_url_get", lib.url_get),
           resolve(handle, file, "curl_free", lib.free),
       }) {
    // clang-format on
    if (!st.ok()) {
      dlclose(handle);
      return st;
    }
  }
  return lib;
}

Result<const Libcurl*> libcurl() {
  static std::once_flag once;
  static Result<Libcurl> loaded = Status::error("libcurl not loaded");
  std::call_once(once, [] {
    loaded = load_libcurl(kSoname);
    if (loaded.ok() && loaded->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      loaded = Status::error(fmt::format("{}: curl_global_init failed", kSoname));
    }
  });
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

std::string no_proxy_list() {
  std::string list = "127.0.0.1,localhost,::1";
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    if (std::string_view(v) == "*") return "*";
    list += ',';
    list += v;
  }
  return list;
}

}  // namespace mecha::providers
