#include "lsm/l0_table.h"

#include <bit>
#include <cstring>
#include <limits>
#include <new>

#include "util/check.h"
#include "util/limits.h"

namespace kvs::lsm {

// A node, in one arena allocation:
//
//   field     size                       meaning
//   header    sizeof(Node) = 32          lsn, key prefix, sizes, kind, height
//   links     8 * height                 next node at each level, atomic
//   key       key_size                   user key bytes
//   payload   payload_size               payload bytes
//
// Everything but the links is written once, before the node is published,
// and never changes; the acquire load that finds the node makes it visible.
struct L0Table::Node {
  uint64_t lsn;
  uint64_t prefix;  // KeyPrefix(key()): most comparisons end here
  uint32_t key_size;
  uint32_t payload_size;
  uint8_t kind;
  uint8_t height;

  std::atomic<Node*>* links() {
    return reinterpret_cast<std::atomic<Node*>*>(reinterpret_cast<char*>(this) +
                                                 sizeof(Node));
  }
  const std::atomic<Node*>* links() const {
    return reinterpret_cast<const std::atomic<Node*>*>(
        reinterpret_cast<const char*>(this) + sizeof(Node));
  }
  const char* key_data() const {
    return reinterpret_cast<const char*>(this) + sizeof(Node) +
           height * sizeof(std::atomic<Node*>);
  }
  std::string_view key() const { return {key_data(), key_size}; }
  std::string_view payload() const {
    return {key_data() + key_size, payload_size};
  }
  // Whether this node is ordered strictly before `target`.
  bool Before(const Target& target) const {
    if (prefix != target.prefix) {
      return prefix < target.prefix;
    }
    const int order = key().compare(target.key);
    return order < 0 || (order == 0 && lsn > target.lsn);
  }
};

uint64_t L0Table::KeyPrefix(std::string_view key) {
  // The first 8 bytes, big-endian, zero-padded: when two keys' prefixes
  // differ, they order the keys as the bytewise comparison does (a key that
  // ends within the prefix is a prefix of the other up to there, and its
  // zero padding sorts it first, as the shorter key sorts first).
  uint64_t bytes = 0;
  if (!key.empty()) {  // memcpy from null is undefined even for 0 bytes
    std::memcpy(&bytes, key.data(), key.size() < 8 ? key.size() : 8);
  }
  if constexpr (std::endian::native == std::endian::little) {
    bytes = __builtin_bswap64(bytes);
  }
  return bytes;
}

// Where a new node goes at each level: between the links array `previous`
// (the head's or a node's) and the node `next` (null at the end). A
// predecessor is named by its links array so that the head needs no node.
struct L0Table::Splice {
  std::atomic<Node*>* previous[kHeightMax];
  Node* next[kHeightMax];
};

namespace {

// Links are followed by many threads at once, so each must be one lock-free
// machine word, and nodes must keep the arena's alignment for the links.
static_assert(std::atomic<void*>::is_always_lock_free);
static_assert(alignof(std::atomic<void*>) <= Arena::kAlignmentBytes);
static_assert(limits::key_size_bytes_max <=
              std::numeric_limits<uint32_t>::max());
static_assert(limits::value_size_bytes_max <=
              std::numeric_limits<uint32_t>::max());

// The highest LSN sorts first among a key's versions, so (key, kLsnNewest)
// is the position of the key's newest version.
constexpr uint64_t kLsnNewest = std::numeric_limits<uint64_t>::max();

// SplitMix64: fast, and good enough to draw skiplist heights.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

L0Table::L0Table(size_t arena_block_bytes) : arena_(arena_block_bytes) {
  static_assert(sizeof(Node) % Arena::kAlignmentBytes == 0);
  static_assert(kHeightMax <= std::numeric_limits<uint8_t>::max());
}

int L0Table::RandomHeight() {
  // One generator per thread: concurrent inserts must not contend on it.
  // Seeds differ between threads through a shared counter.
  static std::atomic<uint64_t> seed_counter{0};
  thread_local uint64_t state =
      seed_counter.fetch_add(1, std::memory_order_relaxed) *
      0xd1b54a32d192ed03ull;
  // Branching factor 4: each further level with probability 1/4, which is
  // the chance that the next two low bits of a random word are both zero.
  const int zero_bit_pairs = std::countr_zero(NextRandom(&state)) / 2;
  return 1 +
         (zero_bit_pairs < kHeightMax - 1 ? zero_bit_pairs : kHeightMax - 1);
}

L0Table::Node* L0Table::NewNode(int height, std::string_view key, uint64_t lsn,
                                uint8_t kind, std::string_view payload) {
  const size_t bytes = sizeof(Node) + height * sizeof(std::atomic<Node*>) +
                       key.size() + payload.size();
  Node* node =
      new (arena_.Allocate(bytes)) Node{lsn,
                                        KeyPrefix(key),
                                        static_cast<uint32_t>(key.size()),
                                        static_cast<uint32_t>(payload.size()),
                                        kind,
                                        static_cast<uint8_t>(height)};
  for (int level = 0; level < height; ++level) {
    new (&node->links()[level]) std::atomic<Node*>(nullptr);
  }
  char* bytes_out = reinterpret_cast<char*>(node->links() + height);
  // memcpy from a null pointer is undefined even for zero bytes, and an
  // empty string_view may hold one.
  if (!key.empty()) {
    std::memcpy(bytes_out, key.data(), key.size());
  }
  if (!payload.empty()) {
    std::memcpy(bytes_out + key.size(), payload.data(), payload.size());
  }
  return node;
}

void L0Table::Insert(std::string_view key, uint64_t lsn, uint8_t kind,
                     std::string_view payload) {
  KVS_CHECK(key.size() <= limits::key_size_bytes_max);
  KVS_CHECK(payload.size() <= limits::value_size_bytes_max);
  const int height = RandomHeight();
  Node* node = NewNode(height, key, lsn, kind, payload);
  const Target target(key, lsn);
  Splice splice;
  FindSplice(target, &splice);
  // Link bottom-up: a node reachable at a level is then always reachable at
  // every level below it, which is what searches that descend rely on.
  for (int level = 0; level < height; ++level) {
    for (;;) {
      Node* next = splice.next[level];
      if (level == 0) {
        // `next` is the first node not before (key, lsn): equal or after.
        KVS_CHECK_MSG(next == nullptr || next->lsn != lsn || next->key() != key,
                      "duplicate (key, lsn) inserted into L0");
      }
      // Not yet reachable at this level, so a relaxed store suffices; the
      // release below publishes it together with the rest of the node.
      node->links()[level].store(next, std::memory_order_relaxed);
      if (splice.previous[level][level].compare_exchange_strong(
              next, node, std::memory_order_release,
              std::memory_order_relaxed)) {
        break;
      }
      // Another insert linked a node here first. Our predecessor is still
      // before us, so walk on from it.
      FindSpliceAtLevel(target, level, &splice);
    }
  }
  entry_count_.fetch_add(1, std::memory_order_relaxed);
}

void L0Table::FindSplice(const Target& target, Splice* splice) {
  std::atomic<Node*>* links = head_;
  // The node a level's walk stopped at is often where the next level's walk
  // stops too: it is known not to be before the target, so it is not
  // compared again.
  const Node* not_before = nullptr;
  for (int level = kHeightMax - 1; level >= 0; --level) {
    Node* next = links[level].load(std::memory_order_acquire);
    while (next != nullptr && next != not_before && next->Before(target)) {
      links = next->links();
      next = links[level].load(std::memory_order_acquire);
    }
    not_before = next;
    splice->previous[level] = links;
    splice->next[level] = next;
  }
}

void L0Table::FindSpliceAtLevel(const Target& target, int level,
                                Splice* splice) {
  std::atomic<Node*>* links = splice->previous[level];
  Node* next = links[level].load(std::memory_order_acquire);
  while (next != nullptr && next->Before(target)) {
    links = next->links();
    next = links[level].load(std::memory_order_acquire);
  }
  splice->previous[level] = links;
  splice->next[level] = next;
}

const L0Table::Node* L0Table::FindGreaterOrEqual(const Target& target) const {
  const std::atomic<Node*>* links = head_;
  const Node* next = nullptr;
  const Node* not_before = nullptr;
  for (int level = kHeightMax - 1; level >= 0; --level) {
    next = links[level].load(std::memory_order_acquire);
    while (next != nullptr && next != not_before && next->Before(target)) {
      links = next->links();
      next = links[level].load(std::memory_order_acquire);
    }
    not_before = next;
  }
  return next;
}

const L0Table::Node* L0Table::FindLastBefore(const Target* target) const {
  const std::atomic<Node*>* links = head_;
  const Node* last = nullptr;
  for (int level = kHeightMax - 1; level >= 0; --level) {
    const Node* next = links[level].load(std::memory_order_acquire);
    while (next != nullptr && (target == nullptr || next->Before(*target))) {
      last = next;
      links = next->links();
      next = links[level].load(std::memory_order_acquire);
    }
  }
  return last;
}

bool L0Table::Get(std::string_view key, Entry* entry) const {
  const Node* node = FindGreaterOrEqual(Target(key, kLsnNewest));
  if (node == nullptr || node->key() != key) {
    return false;
  }
  *entry = Entry{node->key(), node->lsn, node->kind, node->payload()};
  return true;
}

void L0Table::Iterator::SeekToFirst() {
  node_ = table_->head_[0].load(std::memory_order_acquire);
  Load();
}

void L0Table::Iterator::Seek(std::string_view key) {
  node_ = table_->FindGreaterOrEqual(Target(key, kLsnNewest));
  Load();
}

void L0Table::Iterator::Seek(std::string_view key, uint64_t lsn) {
  node_ = table_->FindGreaterOrEqual(Target(key, lsn));
  Load();
}

void L0Table::Iterator::SeekBefore(std::string_view key) {
  const Target target(key, kLsnNewest);
  node_ = table_->FindLastBefore(&target);
  Load();
}

void L0Table::Iterator::SeekToLast() {
  node_ = table_->FindLastBefore(nullptr);
  Load();
}

void L0Table::Iterator::Next() {
  KVS_CHECK(Valid());
  node_ = node_->links()[0].load(std::memory_order_acquire);
  Load();
}

void L0Table::Iterator::Load() {
  entry_ = node_ == nullptr
               ? Entry{}
               : Entry{node_->key(), node_->lsn, node_->kind, node_->payload()};
}

}  // namespace kvs::lsm
