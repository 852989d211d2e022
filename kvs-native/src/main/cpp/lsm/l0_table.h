// L0Table: a region's in-memory level of the LSM tree (Parallax's L0).
//
// A concurrent skiplist of entries (user key, LSN, kind, payload), ordered by
// user key ascending (bytewise, as unsigned bytes) and, for equal keys, by LSN
// descending, so the newest version of a key comes first. Every version is
// kept: choosing versions (snapshots, deletes) is the engine's job.
//
// Entries are only ever added. The whole table is destroyed at once after it
// has been compacted into L1, which is what makes lock-free reads simple:
// no node is ever unlinked or freed while a reader might hold it.
//
// Thread safety: any number of threads may Insert concurrently (each level is
// linked with a compare-and-swap, no locks) while any number of threads read
// with Get and Iterators, also without locks. A node is published with a
// release store after it is fully written and read with acquire loads, so a
// reader sees an entry completely or not at all. The destructor must not race
// with anything. What a reader observes of inserts that run concurrently with
// it is unspecified beyond that: an iteration may include some of them.

#ifndef KVS_LSM_L0_TABLE_H_
#define KVS_LSM_L0_TABLE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lsm/arena.h"

namespace kvs::lsm {

class L0Table {
 private:
  struct Node;  // declared first so that the Iterator can hold one

 public:
  // 1 MiB blocks keep the waste at the end of each block (under a quarter
  // block) small next to an L0 of tens to hundreds of MiB. A maximal entry
  // (4 KiB key, 1 MiB value) exceeds a quarter block and gets its own.
  static constexpr size_t kArenaBlockBytesDefault = size_t{1} << 20;

  // One version of a key. The views point into the table's arena and stay
  // valid while the table lives; the table owns the bytes.
  struct Entry {
    std::string_view key;
    uint64_t lsn = 0;
    uint8_t kind = 0;  // opaque here; the engine encodes the entry's type
    std::string_view payload;
  };

  // `arena_block_bytes` is the size of the blocks entries are carved from;
  // it must be within [Arena::kBlockBytesMin, Arena::kBlockBytesMax].
  explicit L0Table(size_t arena_block_bytes = kArenaBlockBytesDefault);

  L0Table(const L0Table&) = delete;
  L0Table& operator=(const L0Table&) = delete;

  // Copies the entry into the table. Requires key.size() <=
  // limits::key_size_bytes_max and payload.size() <=
  // limits::value_size_bytes_max (the engine rejects larger input with
  // TOO_LARGE before it gets here), and that (key, lsn) is not in the table
  // yet: a duplicate is a programmer error and stops the process. Thread-safe.
  void Insert(std::string_view key, uint64_t lsn, uint8_t kind,
              std::string_view payload);

  // Finds the newest entry for `key` (the highest LSN). Returns false, leaving
  // *entry untouched, if the key has no entry. Thread-safe.
  bool Get(std::string_view key, Entry* entry) const;

  // Bytes of arena blocks allocated: what counts against the engine's memory
  // budget. Grows monotonically. Thread-safe.
  size_t MemoryBytes() const { return arena_.MemoryBytes(); }

  // The number of entries inserted: exact for inserts that happened-before
  // the call (e.g. in this thread, or in threads since joined), approximate
  // for inserts running concurrently. Thread-safe.
  size_t EntryCount() const {
    return entry_count_.load(std::memory_order_relaxed);
  }

  // Walks every entry, every version, in table order. An iterator is used by
  // one thread at a time; any number of iterators may run concurrently with
  // each other and with inserts. Entries inserted while it walks may or may
  // not be seen, but it never goes backwards or skips an entry that existed
  // when it was positioned.
  class Iterator {
   public:
    // `table` is not owned and must outlive the iterator. Starts not Valid.
    explicit Iterator(const L0Table* table) : table_(table) {}

    bool Valid() const { return node_ != nullptr; }
    // Positions at the first entry of the table, if any.
    void SeekToFirst();
    // Positions at the first entry whose key is >= `key` (its newest
    // version), or not Valid if there is none.
    void Seek(std::string_view key);
    // Requires Valid(). Moves to the following entry.
    void Next();
    // Positions at the first entry ordered at or after (key, lsn): the
    // newest version of `key` whose LSN is at most `lsn`, else the first
    // entry of a later key.
    void Seek(std::string_view key, uint64_t lsn);
    // Positions at the last entry whose key is < `key` (the oldest version
    // of the key before it), or not Valid if there is none.
    void SeekBefore(std::string_view key);
    // Positions at the last entry of the table, if any.
    void SeekToLast();
    // Requires Valid(). Valid until the iterator moves; the views it holds
    // live as long as the table.
    const Entry& entry() const { return entry_; }

   private:
    void Load();  // fills entry_ from node_

    const L0Table* table_;
    const Node* node_ = nullptr;  // null when not Valid
    Entry entry_;
  };

 private:
  struct Splice;
  // A search position: (key, lsn) and the key's prefix, computed once.
  struct Target {
    Target(std::string_view k, uint64_t l)
        : key(k), prefix(KeyPrefix(k)), lsn(l) {}
    std::string_view key;
    uint64_t prefix;
    uint64_t lsn;
  };
  static uint64_t KeyPrefix(std::string_view key);

  // With branching factor 4, height 12 keeps a search at O(log n) comparisons
  // for up to 4^12 = 16 Mi entries: more than an L0 holds before it is
  // compacted (hundreds of MiB of entries of at least tens of bytes), while
  // the head and a node's worst case stay at 12 pointers.
  static constexpr int kHeightMax = 12;

  static int RandomHeight();
  Node* NewNode(int height, std::string_view key, uint64_t lsn, uint8_t kind,
                std::string_view payload);
  // The first node ordered at or after `target`, or null.
  const Node* FindGreaterOrEqual(const Target& target) const;
  // The last node ordered before `target` (any, if `target` is null), or
  // null. Links go forward only, so this walks down from the head.
  const Node* FindLastBefore(const Target* target) const;
  // Fills the splice at every level for inserting `target`.
  void FindSplice(const Target& target, Splice* splice);
  // Recomputes the splice at `level` only, walking on from its current
  // predecessor, which is still before (key, lsn) since nothing is removed.
  void FindSpliceAtLevel(const Target& target, int level, Splice* splice);

  Arena arena_;
  // The head's links: head_[level] is the first node at that level. The head
  // lives in the table, not the arena, so an empty table allocates nothing.
  std::atomic<Node*> head_[kHeightMax] = {};  // all null
  std::atomic<size_t> entry_count_{0};
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_L0_TABLE_H_
