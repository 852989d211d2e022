// HeldRequests: client requests for a region this server stopped serving
// for its split or merge (RegionService::DetachSealed), held instead of
// refused until a region that takes them over is attached here (a daughter,
// the merged region: RegionService::TakeOver), the region is attached again
// (the split failed), or the hold ends -- then they run again, redirected
// to the region that took them over, held again if that is not attached
// yet (a split's other daughter), or refused WRONG_REGION as before.
// Their clients so see a split as a pause as long as its commit and the
// daughters' opens, not that plus their map's refresh.
//
// Bounded: a hold lasts at most the time given (RegionService: limits::
// sealed_hold_ms), and at most limits::held_requests_max requests wait at
// once; a request beyond that is not held (the caller refuses it). A
// timer thread, started at the first hold, ends holds at their time.
//
// Thread safety: every method may run on any thread; `rerun` is called
// without this object's lock held, on the thread that released the hold
// (the timer's, or a Release caller's).

#ifndef KVS_SERVICE_HELD_REQUESTS_H_
#define KVS_SERVICE_HELD_REQUESTS_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel/server.h"
#include "wire/messages.h"

namespace kvs::service {

class HeldRequests {
 public:
  using Respond = channel::RequestHandler::Respond;
  // Runs a released request again: its encoding and its responder.
  using Rerun = std::function<void(std::string request, Respond respond)>;

  explicit HeldRequests(Rerun rerun);
  // Close()s.
  ~HeldRequests();
  HeldRequests(const HeldRequests&) = delete;
  HeldRequests& operator=(const HeldRequests&) = delete;

  // Requests for `region_id` are held from now until `until` (a hold in
  // place is extended, its requests kept).
  void Hold(uint64_t region_id, std::chrono::steady_clock::time_point until);
  // Takes `request` (copied) and `*respond` if its region is held and
  // there is room: true, `*respond` moved from. False: the caller answers.
  bool Park(const wire::Request& request, Respond* respond);
  // Ends the hold of `region_id`: its requests run again now (no-op if
  // it holds none).
  void Release(uint64_t region_id);
  // Runs the requests held for `region_id` again now, the hold kept: one
  // of its successors was attached, and those of another may still come.
  void RunAgain(uint64_t region_id);
  // Ends every hold (their requests run again) and the timer; later holds
  // hold nothing.
  void Close();

  // Requests held now (tests, metrics).
  size_t held() const;

 private:
  struct Held {
    std::chrono::steady_clock::time_point until;
    std::vector<std::pair<std::string, Respond>> requests;
  };
  void RunTimer();
  void RunEach(std::vector<std::pair<std::string, Respond>> requests);

  const Rerun rerun_;
  mutable std::mutex mutex_;
  std::condition_variable wakeup_;
  std::map<uint64_t, Held> holds_;  // under mutex_
  size_t held_ = 0;                 // under mutex_: requests in holds_
  bool closed_ = false;             // under mutex_
  std::thread timer_;               // started at the first Hold
};

}  // namespace kvs::service

#endif  // KVS_SERVICE_HELD_REQUESTS_H_
