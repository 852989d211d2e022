// AnswerWatcher: a shard's end of turn for the client door (one per shard).
// At the end of a turn that ran requests it takes the replication turn
// (RequestHandler::EndOfTurn: the turn's replicated writes leave together);
// when writes stay in flight and no other shard watches, it watches for the
// backups' answers on the shard itself -- the replicator's set of backup
// connections, through a copy of its descriptor held here -- and when they
// come it takes the turn again, settling the writes and writing their
// replies on this shard. So an answer wakes one thread, the shard, not the
// replication thread and then the shard (docs/ARCHITECTURE.md "Server
// threads"). The replication thread still looks for the timeouts (within
// 100 ms): an answer a watch missed waits that long at most.
//
// Thread safety: on its shard only; destroyed after the shard stopped.

#ifndef KVS_DOOR_ANSWER_WATCHER_H_
#define KVS_DOOR_ANSWER_WATCHER_H_

#include <cstdint>
#include <memory>

#include "channel/server.h"
#include "shard/shard.h"

namespace kvs::door {

class AnswerWatcher final : public shard::Shard::Handler,
                            public std::enable_shared_from_this<AnswerWatcher> {
 public:
  AnswerWatcher(shard::Shard* shard, channel::RequestHandler* handler)
      : shard_(shard), handler_(handler) {}
  ~AnswerWatcher() override;
  AnswerWatcher(const AnswerWatcher&) = delete;
  AnswerWatcher& operator=(const AnswerWatcher&) = delete;

  // The end of a turn in which the shard ran requests.
  void EndOfTurn();
  // The watched descriptor is readable: answers came.
  void OnReady(uint32_t events) override;

  // Times it watched, and times answers woke it (monitoring, tests).
  uint64_t watches() const { return watches_; }
  uint64_t arrivals() const { return arrivals_; }

 private:
  shard::Shard* const shard_;
  channel::RequestHandler* const handler_;
  int copy_ = -1;        // this watcher's copy of the watched descriptor
  uint64_t source_ = 0;  // whose descriptor it copies
  uint64_t watches_ = 0;
  uint64_t arrivals_ = 0;
};

}  // namespace kvs::door

#endif  // KVS_DOOR_ANSWER_WATCHER_H_
