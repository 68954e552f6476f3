// CurlHandlePool: the libcurl handles one HttpClient keeps between its requests, so that the
// connection (HTTP keep-alive) and the TLS session one request opened serve the next one.
//
// CurlHandles is one easy handle with the multi handle that drives it: the multi handle holds
// the connection cache and the DNS cache, the easy handle the TLS session cache. A request
// takes a CurlHandles, sets every option it needs on it again, and gives it back only when
// its transfer ended cleanly; handles that are not given back (a transfer cancelled, failed or
// cut short) are destroyed with their connections, so nothing of a broken transfer reaches
// the next request.
//
// Promises:
//  1. take() hands out the idle handles given back last (their connection is the likeliest
//     to be alive), or new ones when none is idle; null when libcurl cannot make them.
//  2. At most max_idle handles are kept; give_back() beyond that destroys the handles.
//  3. Destroying CurlHandles closes its connections: the multi handle is cleaned up before the
//     easy handle, and neither is in a transfer then.
//
// Thread-safe: take() and give_back() may be called from any thread; one CurlHandles is used
// by one thread at a time.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "providers/libcurl.h"

namespace mecha::providers {

class CurlHandles {
 public:
  // Null when libcurl cannot make a handle.
  static std::unique_ptr<CurlHandles> make(const Libcurl& lib);
  CurlHandles(const CurlHandles&) = delete;
  CurlHandles& operator=(const CurlHandles&) = delete;

  CURL* easy() const { return easy_.get(); }
  CURLM* multi() const { return multi_.get(); }
  // The easy handle's CURLOPT_ERRORBUFFER for its whole life, so libcurl never writes into a
  // buffer that a finished request freed.
  char* error_buffer() { return error_.data(); }

 private:
  CurlHandles(EasyHandle easy, MultiHandle multi);

  // Declared in this order so that the multi handle, and the connections it caches, go first.
  EasyHandle easy_;
  MultiHandle multi_;
  std::array<char, CURL_ERROR_SIZE> error_{};
};

class CurlHandlePool {
 public:
  // Default: as many as the daemon runs turns at once.
  static constexpr size_t kDefaultMaxIdle = 16;

  explicit CurlHandlePool(size_t max_idle = kDefaultMaxIdle) : max_idle_(max_idle) {}
  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;

  std::unique_ptr<CurlHandles> take(const Libcurl& lib);
  // REQUIRES: the handles' last transfer ended cleanly and is out of its multi handle.
  void give_back(std::unique_ptr<CurlHandles> handles);
  size_t idle() const;

 private:
  const size_t max_idle_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<CurlHandles>> idle_;  // GUARDED_BY(mu_), the last given back last
};

}  // namespace mecha::providers
