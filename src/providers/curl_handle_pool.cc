#include "providers/curl_handle_pool.h"

#include <utility>

namespace mecha::providers {

std::unique_ptr<CurlHandles> CurlHandles::make(const Libcurl& lib) {
  EasyHandle easy = new_easy(lib);
  MultiHandle multi = new_multi(lib);
  if (!easy || !multi) return nullptr;
  std::unique_ptr<CurlHandles> handles(new CurlHandles(std::move(easy), std::move(multi)));
  lib.easy_setopt(handles->easy(), CURLOPT_ERRORBUFFER, handles->error_buffer());
  return handles;
}

CurlHandles::CurlHandles(EasyHandle easy, MultiHandle multi)
    : easy_(std::move(easy)), multi_(std::move(multi)) {}

std::unique_ptr<CurlHandles> CurlHandlePool::take(const Libcurl& lib) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      auto handles = std::move(idle_.back());
      idle_.pop_back();
      return handles;
    }
  }
  return CurlHandles::make(lib);
}

void CurlHandlePool::give_back(std::unique_ptr<CurlHandles> handles) {
  if (!handles) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (idle_.size() < max_idle_) {
    idle_.push_back(std::move(handles));
    return;
  }
  lock.unlock();
  handles.reset();  // closes its connection outside the lock
}

size_t CurlHandlePool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

}  // namespace mecha::providers
