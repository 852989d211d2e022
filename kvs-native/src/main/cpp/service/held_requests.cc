#include "service/held_requests.h"

#include <utility>

#include "util/limits.h"
#include "util/thread_name.h"

namespace kvs::service {

HeldRequests::HeldRequests(Rerun rerun) : rerun_(std::move(rerun)) {}

HeldRequests::~HeldRequests() { Close(); }

void HeldRequests::Hold(uint64_t region_id,
                        std::chrono::steady_clock::time_point until) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  Held& held = holds_[region_id];
  if (held.until < until) held.until = until;
  if (!timer_.joinable()) timer_ = std::thread([this] { RunTimer(); });
  wakeup_.notify_one();
}

bool HeldRequests::Park(const wire::Request& request, Respond* respond) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = holds_.find(request.region_id);
  if (it == holds_.end() || held_ >= limits::held_requests_max ||
      it->second.until <= std::chrono::steady_clock::now()) {
    return false;
  }
  // The request's bytes are the caller's (a connection's buffer).
  std::string bytes;
  wire::EncodeRequest(request, &bytes);
  it->second.requests.emplace_back(std::move(bytes), std::move(*respond));
  ++held_;
  return true;
}

void HeldRequests::Release(uint64_t region_id) {
  std::vector<std::pair<std::string, Respond>> requests;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = holds_.find(region_id);
    if (it == holds_.end()) return;
    requests = std::move(it->second.requests);
    held_ -= requests.size();
    holds_.erase(it);
  }
  RunEach(std::move(requests));
}

void HeldRequests::RunAgain(uint64_t region_id) {
  std::vector<std::pair<std::string, Respond>> requests;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = holds_.find(region_id);
    if (it == holds_.end()) return;
    requests = std::move(it->second.requests);
    it->second.requests.clear();
    held_ -= requests.size();
  }
  RunEach(std::move(requests));
}

void HeldRequests::Close() {
  std::vector<std::pair<std::string, Respond>> requests;
  std::thread timer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    for (auto& [id, held] : holds_) {
      for (auto& request : held.requests)
        requests.push_back(std::move(request));
    }
    holds_.clear();
    held_ = 0;
    timer = std::move(timer_);
    wakeup_.notify_one();
  }
  if (timer.joinable()) timer.join();
  RunEach(std::move(requests));
}

size_t HeldRequests::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

void HeldRequests::RunTimer() {
  SetThreadName(kThreadHoldTimer);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closed_) {
    const auto now = std::chrono::steady_clock::now();
    auto next = std::chrono::steady_clock::time_point::max();
    std::vector<std::pair<std::string, Respond>> expired;
    for (auto it = holds_.begin(); it != holds_.end();) {
      if (it->second.until <= now) {
        held_ -= it->second.requests.size();
        for (auto& request : it->second.requests) {
          expired.push_back(std::move(request));
        }
        it = holds_.erase(it);
      } else {
        if (it->second.until < next) next = it->second.until;
        ++it;
      }
    }
    if (!expired.empty()) {
      lock.unlock();
      RunEach(std::move(expired));
      lock.lock();
      continue;
    }
    if (next == std::chrono::steady_clock::time_point::max()) {
      wakeup_.wait(lock);
    } else {
      wakeup_.wait_until(lock, next);
    }
  }
}

void HeldRequests::RunEach(
    std::vector<std::pair<std::string, Respond>> requests) {
  for (auto& [bytes, respond] : requests) {
    rerun_(std::move(bytes), std::move(respond));
  }
}

}  // namespace kvs::service
