// The replica buffer sets one connection holds for its peer
// (Session::ReplicaBuffers): by tag, reused when asked for again with the
// same shape, and findable by key (the stream transport applies a WRITE to
// the buffer its key names).
//
// Thread safety: every method may be called from any thread.

#ifndef KVS_CHANNEL_REPLICA_SETS_H_
#define KVS_CHANNEL_REPLICA_SETS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "channel/server.h"
#include "util/status.h"

namespace kvs::channel {

class ReplicaSets {
 public:
  // Makes one buffer of the size asked for.
  using Make = std::function<Status(std::shared_ptr<ReplicaBuffer>*)>;

  // The set `tag` of `count` buffers of `bytes` each, zeroed: the one held
  // for `tag` if it has that shape, else new ones made by `make` replacing
  // it (ReplicaBuffer, "Lifetime").
  Status Get(uint64_t tag, size_t count, size_t bytes, const Make& make,
             std::vector<std::shared_ptr<ReplicaBuffer>>* buffers);
  // The buffer of some set whose key is `key`, or null.
  std::shared_ptr<ReplicaBuffer> Find(uint64_t key) const;
  // Lets every set go (the connection closed).
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, std::vector<std::shared_ptr<ReplicaBuffer>>> sets_;
  std::map<uint64_t, std::shared_ptr<ReplicaBuffer>> by_key_;
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_REPLICA_SETS_H_
