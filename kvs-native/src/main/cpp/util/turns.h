// Whether the calling thread runs requests in turns and ends each turn by
// calling the request handler's EndOfTurn (a shard, shard/shard.h): work
// its requests leave behind (a replicated write to post) may then wait for
// that call instead of waking another thread.
//
// Thread safety: per thread.

#ifndef KVS_UTIL_TURNS_H_
#define KVS_UTIL_TURNS_H_

namespace kvs {

namespace turns_internal {
inline thread_local bool ends_turns = false;
}  // namespace turns_internal

inline void SetEndsTurns(bool ends) { turns_internal::ends_turns = ends; }
inline bool EndsTurns() { return turns_internal::ends_turns; }

}  // namespace kvs

#endif  // KVS_UTIL_TURNS_H_
