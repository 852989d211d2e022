#include "lsm/l0_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "testing/random_keys.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

using std::string_literals::operator""s;  // "\x00"s keeps its zero byte

using Version = std::pair<std::string, uint64_t>;  // (key, lsn)

// The table's order, written out independently: std::string compares as
// unsigned bytes (char_traits<char>::lt), LSN descending.
struct VersionLess {
  bool operator()(const Version& a, const Version& b) const {
    if (a.first != b.first) {
      return a.first < b.first;
    }
    return a.second > b.second;
  }
};

// Every (key, lsn) the table yields, in order.
std::vector<Version> Scan(const L0Table& table) {
  std::vector<Version> versions;
  L0Table::Iterator it(&table);
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    versions.emplace_back(std::string(it.entry().key), it.entry().lsn);
  }
  return versions;
}

// A payload a reader can recompute from the entry's key and LSN, so a torn
// or misplaced entry shows as a mismatch.
std::string PayloadFor(std::string_view key, uint64_t lsn) {
  std::string payload;
  coding::PutFixed64(&payload, lsn);
  payload.append(key);
  payload.append(lsn % 41, static_cast<char>(lsn));
  return payload;
}
uint8_t KindFor(uint64_t lsn) { return static_cast<uint8_t>(lsn % 3); }

TEST(L0TableTest, EmptyTableHasNothingAndAllocatesNothing) {
  L0Table table;
  L0Table::Entry entry;
  EXPECT_FALSE(table.Get("", &entry));
  EXPECT_FALSE(table.Get("key", &entry));
  L0Table::Iterator it(&table);
  EXPECT_FALSE(it.Valid());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.Seek("");
  EXPECT_FALSE(it.Valid());
  EXPECT_EQ(table.EntryCount(), 0u);
  EXPECT_EQ(table.MemoryBytes(), 0u);
}

TEST(L0TableTest, OrdersKeysAsUnsignedBytesWithPrefixesFirst) {
  // The expected order, by hand: a signed-char comparison would put \x80 and
  // \xff before "a", and a C-string comparison would merge keys at \x00.
  // Keys around 8 bytes check the comparison of 8-byte prefixes: equal
  // prefixes, and keys that end inside the prefix or just after it.
  const std::vector<std::string> ordered = {
      ""s,
      "\x00"s,
      "\x00\x00"s,
      "\x00\x01"s,
      "\x01"s,
      "a"s,
      "a\x00"s,
      "a\x00\xff"s,
      "a\x01"s,
      "ab"s,
      "abcdefg"s,
      "abcdefg\x00"s,
      "abcdefg\x00\x01"s,
      "abcdefgh"s,
      "abcdefgh\x00"s,
      "abcdefghi"s,
      "abcdefgi"s,
      "b"s,
      "\x7f"s,
      "\x80"s,
      "\xfe\xff"s,
      "\xff"s,
      "\xff\x00"s,
      "\xff\xff"s,
      "\xff\xff\xff"s,
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff"s,
  };
  std::vector<size_t> insertion_order(ordered.size());
  for (size_t i = 0; i < ordered.size(); ++i) {
    insertion_order[i] = (i * 7) % ordered.size();  // 7 is coprime with 26
  }
  L0Table table;
  uint64_t lsn = 100;
  for (size_t index : insertion_order) {
    table.Insert(ordered[index], lsn++, 0, "");
  }
  const std::vector<Version> scanned = Scan(table);
  ASSERT_EQ(scanned.size(), ordered.size());
  for (size_t i = 0; i < ordered.size(); ++i) {
    EXPECT_EQ(scanned[i].first, ordered[i]) << "position " << i;
  }
  EXPECT_EQ(table.EntryCount(), ordered.size());
}

TEST(L0TableTest, VersionsOfAKeyComeNewestFirst) {
  L0Table table;
  std::vector<uint64_t> lsns;
  for (uint64_t lsn = 1; lsn <= 100; ++lsn) {
    lsns.push_back(lsn);
  }
  std::reverse(lsns.begin() + 30, lsns.end());  // neither sorted nor reversed
  table.Insert("j", 50, 0, "before");
  table.Insert("k\x00"s, 50, 0, "after");
  for (uint64_t lsn : lsns) {
    table.Insert("k", lsn, KindFor(lsn), PayloadFor("k", lsn));
  }
  L0Table::Iterator it(&table);
  it.SeekToFirst();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "j");
  for (uint64_t lsn = 100; lsn >= 1; --lsn) {
    it.Next();
    ASSERT_TRUE(it.Valid());
    EXPECT_EQ(it.entry().key, "k");
    EXPECT_EQ(it.entry().lsn, lsn);
    EXPECT_EQ(it.entry().kind, KindFor(lsn));
    EXPECT_EQ(it.entry().payload, PayloadFor("k", lsn));
  }
  it.Next();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "k\x00"s);
  it.Next();
  EXPECT_FALSE(it.Valid());
}

TEST(L0TableTest, GetReturnsTheNewestVersionOfExactlyThatKey) {
  L0Table table;
  table.Insert("k", 5, 1, "five");
  table.Insert("k", 9, 2, "nine");
  table.Insert("k", 7, 3, "seven");
  table.Insert("m", 0, 4, "zero");
  table.Insert("m", std::numeric_limits<uint64_t>::max(), 5, "max");
  L0Table::Entry entry;
  ASSERT_TRUE(table.Get("k", &entry));
  EXPECT_EQ(entry.key, "k");
  EXPECT_EQ(entry.lsn, 9u);
  EXPECT_EQ(entry.kind, 2);
  EXPECT_EQ(entry.payload, "nine");
  ASSERT_TRUE(table.Get("m", &entry));
  EXPECT_EQ(entry.lsn, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(entry.payload, "max");
  // Neighbours and prefixes of existing keys are absent, and a miss leaves
  // the output untouched.
  for (const std::string& absent :
       {""s, "j"s, "k\x00"s, "l"s, "mm"s, "\xff"s}) {
    EXPECT_FALSE(table.Get(absent, &entry)) << absent;
    EXPECT_EQ(entry.payload, "max");
  }
}

TEST(L0TableTest, SeekFindsTheFirstKeyAtOrAfterItsNewestVersion) {
  L0Table table;
  for (std::string_view key : {"b", "d", "f"}) {
    table.Insert(key, 1, 0, "old");
    table.Insert(key, 2, 0, "new");
  }
  L0Table::Iterator it(&table);
  it.Seek("d");  // exact: the newest version of d
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "d");
  EXPECT_EQ(it.entry().lsn, 2u);
  it.Next();
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "d");
  EXPECT_EQ(it.entry().lsn, 1u);
  it.Seek("c");  // between: the next key; seeking backwards works too
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "d");
  EXPECT_EQ(it.entry().lsn, 2u);
  it.Seek("");  // before everything
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "b");
  EXPECT_EQ(it.entry().lsn, 2u);
  it.Seek("d\x00"s);  // just after d
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "f");
  it.Seek("f\x00"s);  // past the end
  EXPECT_FALSE(it.Valid());
  it.Seek("\xff");
  EXPECT_FALSE(it.Valid());
}

TEST(L0TableTest, BackwardSeeksFindTheEntriesBeforeAKeyAndTheLast) {
  L0Table table;
  L0Table::Iterator it(&table);
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  for (std::string_view key : {"b", "d", "f"}) {
    table.Insert(key, 1, 0, "old");
    table.Insert(key, 5, 0, "new");
  }
  it.SeekToLast();  // the oldest version of the last key
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "f");
  EXPECT_EQ(it.entry().lsn, 1u);
  it.SeekBefore("d");  // the oldest version of the key before d
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "b");
  EXPECT_EQ(it.entry().lsn, 1u);
  it.SeekBefore("c");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "b");
  it.SeekBefore("b");
  EXPECT_FALSE(it.Valid());
  it.SeekBefore("\xff");
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "f");
  it.Seek("d", 4);  // the newest version of d at LSN 4 or below
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "d");
  EXPECT_EQ(it.entry().lsn, 1u);
  it.Seek("d", 0);  // none of d is that old: the next key
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().key, "f");
  EXPECT_EQ(it.entry().lsn, 5u);
}

TEST(L0TableTest, StoresMaximalKeysAndPayloads) {
  testing::RandomBytes random(7);
  const std::string big_key = random.Bytes(limits::key_size_bytes_max);
  const std::string big_payload = random.Bytes(limits::value_size_bytes_max);
  const std::string medium_payload = random.Bytes(3000);
  // Small blocks put the medium payload above a quarter block as well.
  for (size_t block_bytes : {L0Table::kArenaBlockBytesDefault, size_t{4096}}) {
    L0Table table(block_bytes);
    table.Insert("a", 1, 0, "small");
    table.Insert(big_key, 2, 1, big_payload);
    table.Insert("b", 3, 2, medium_payload);
    table.Insert("c", 4, 3, "small");
    L0Table::Entry entry;
    ASSERT_TRUE(table.Get(big_key, &entry));
    EXPECT_EQ(entry.key, big_key);
    EXPECT_TRUE(entry.payload == big_payload);  // no 1 MiB failure message
    ASSERT_TRUE(table.Get("b", &entry));
    EXPECT_TRUE(entry.payload == medium_payload);
    ASSERT_TRUE(table.Get("c", &entry));
    EXPECT_EQ(entry.payload, "small");
    EXPECT_GE(table.MemoryBytes(),
              big_key.size() + big_payload.size() + medium_payload.size());
    EXPECT_EQ(table.EntryCount(), 4u);
  }
}

TEST(L0TableTest, RandomizedMatchesAnOrderedMap) {
  testing::RandomBytes random(42);
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(random.Key(0, 12));
  }
  std::vector<uint64_t> lsns(5000);
  for (size_t i = 0; i < lsns.size(); ++i) {
    lsns[i] = i * 3 + 1;
  }
  std::shuffle(lsns.begin(), lsns.end(), random.engine());
  // Small blocks exercise many block switches.
  L0Table table(4096);
  std::map<Version, std::pair<uint8_t, std::string>, VersionLess> model;
  for (uint64_t lsn : lsns) {
    const std::string& key = keys[random.Uniform(keys.size())];
    const std::string payload = random.Bytes(random.Uniform(200));
    const auto kind = static_cast<uint8_t>(random.Uniform(256));
    table.Insert(key, lsn, kind, payload);
    model[{key, lsn}] = {kind, payload};
  }
  ASSERT_EQ(table.EntryCount(), model.size());
  L0Table::Iterator it(&table);
  it.SeekToFirst();
  for (const auto& [version, value] : model) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(it.entry().key, version.first);
    ASSERT_EQ(it.entry().lsn, version.second);
    ASSERT_EQ(it.entry().kind, value.first);
    ASSERT_EQ(it.entry().payload, value.second);
    it.Next();
  }
  EXPECT_FALSE(it.Valid());
  // Get and Seek against the model, for present keys and random probes.
  std::vector<std::string> probes = keys;
  for (int i = 0; i < 300; ++i) {
    probes.push_back(random.Key(0, 12));
  }
  const uint64_t newest = std::numeric_limits<uint64_t>::max();
  for (const std::string& probe : probes) {
    const auto expected = model.lower_bound({probe, newest});
    it.Seek(probe);
    if (expected == model.end()) {
      EXPECT_FALSE(it.Valid());
    } else {
      ASSERT_TRUE(it.Valid());
      EXPECT_EQ(it.entry().key, expected->first.first);
      EXPECT_EQ(it.entry().lsn, expected->first.second);
    }
    L0Table::Entry entry;
    const bool present =
        expected != model.end() && expected->first.first == probe;
    ASSERT_EQ(table.Get(probe, &entry), present);
    if (present) {
      EXPECT_EQ(entry.lsn, expected->first.second);
      EXPECT_EQ(entry.payload, expected->second.second);
    }
  }
}

TEST(L0TableTest, MemoryAccountingGrowsAndCoversTheBytesStored) {
  L0Table table(64 * 1024);
  const std::string payload(1000, 'p');
  size_t stored_bytes = 0;
  size_t previous_memory = table.MemoryBytes();
  size_t increases = 0;
  for (uint64_t lsn = 1; lsn <= 500; ++lsn) {
    const std::string key = "key" + std::to_string(lsn);
    table.Insert(key, lsn, 0, payload);
    stored_bytes += key.size() + payload.size();
    const size_t memory = table.MemoryBytes();
    ASSERT_GE(memory, previous_memory);
    ASSERT_GE(memory, stored_bytes);
    increases += memory > previous_memory ? 1 : 0;
    previous_memory = memory;
  }
  // About 500 KB in 64 KiB blocks: the arena grew block by block, and the
  // overhead (node headers, links, the unused end of each block) is modest.
  EXPECT_GE(increases, 7u);
  EXPECT_LE(table.MemoryBytes(), stored_bytes * 3 / 2);
}

// Writers insert disjoint LSNs over a shared set of keys while readers scan
// and probe. Readers check every scan is strictly ordered, every entry
// carries the payload and kind derived from its key and LSN, and scans never
// shrink. Afterwards the table holds exactly what was inserted.
TEST(L0TableTest, ConcurrentInsertsAndReadsStayOrderedAndWhole) {
  constexpr int kWriters = 4;
  constexpr int kReaders = 2;
  constexpr uint64_t kInsertsPerWriter = 4000;
  testing::RandomBytes random(2024);
  std::vector<std::string> keys;
  // Few keys: a key's newest versions all go to the front of its run, so
  // concurrent writers aim at the same links and their CASes conflict.
  for (int i = 0; i < 16; ++i) {
    keys.push_back(random.Key(0, 10));
  }
  L0Table table(16 * 1024);
  // Writers start together to contend; readers start once every writer is
  // halfway, so their scans are long and overlap the second half of inserts.
  std::latch start(kWriters);
  std::latch halfway(kWriters);
  std::atomic<bool> writers_done{false};
  std::vector<std::set<Version, VersionLess>> inserted(kWriters);
  struct ReaderResult {
    uint64_t scans = 0;
    uint64_t disorders = 0;
    uint64_t torn = 0;
    uint64_t shrinks = 0;
  };
  std::vector<ReaderResult> results(kReaders);

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      testing::RandomBytes choice(w);
      start.arrive_and_wait();
      for (uint64_t i = 0; i < kInsertsPerWriter; ++i) {
        if (i == kInsertsPerWriter / 2) {
          halfway.count_down();
        }
        const uint64_t lsn = i * kWriters + w + 1;  // disjoint per writer
        const std::string& key = keys[choice.Uniform(keys.size())];
        table.Insert(key, lsn, KindFor(lsn), PayloadFor(key, lsn));
        inserted[w].insert({key, lsn});
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      ReaderResult& result = results[r];
      testing::RandomBytes choice(100 + r);
      size_t previous_count = 0;
      halfway.wait();
      bool last_scan = false;
      while (!last_scan) {
        // One more scan after the writers finish, so a reader always scans.
        last_scan = writers_done.load(std::memory_order_acquire);
        size_t count = 0;
        Version previous;
        L0Table::Iterator it(&table);
        for (it.SeekToFirst(); it.Valid(); it.Next()) {
          const L0Table::Entry& entry = it.entry();
          Version current(std::string(entry.key), entry.lsn);
          if (count > 0 && !VersionLess()(previous, current)) {
            ++result.disorders;
          }
          if (entry.payload != PayloadFor(entry.key, entry.lsn) ||
              entry.kind != KindFor(entry.lsn)) {
            ++result.torn;
          }
          previous = std::move(current);
          ++count;
        }
        result.shrinks += count < previous_count ? 1 : 0;
        previous_count = count;
        ++result.scans;
        L0Table::Entry entry;
        const std::string& probe = keys[choice.Uniform(keys.size())];
        if (table.Get(probe, &entry) &&
            (entry.key != probe ||
             entry.payload != PayloadFor(probe, entry.lsn))) {
          ++result.torn;
        }
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) {
    threads[w].join();
  }
  writers_done.store(true, std::memory_order_release);
  for (int r = 0; r < kReaders; ++r) {
    threads[kWriters + r].join();
  }

  for (const ReaderResult& result : results) {
    EXPECT_GE(result.scans, 1u);
    EXPECT_EQ(result.disorders, 0u);
    EXPECT_EQ(result.torn, 0u);
    EXPECT_EQ(result.shrinks, 0u);
  }
  std::set<Version, VersionLess> all;
  for (const auto& set : inserted) {
    all.insert(set.begin(), set.end());
  }
  ASSERT_EQ(all.size(), kWriters * kInsertsPerWriter);
  EXPECT_EQ(table.EntryCount(), all.size());
  const std::vector<Version> scanned = Scan(table);
  EXPECT_TRUE(
      std::equal(scanned.begin(), scanned.end(), all.begin(), all.end()));
}

TEST(L0TableDeathTest, DuplicateKeyAndLsnStopsTheProcess) {
  L0Table table;
  table.Insert("k", 7, 0, "a");
  table.Insert("k", 8, 0, "a");  // same key, another LSN: fine
  table.Insert("j", 7, 0, "a");  // same LSN, another key: fine
  EXPECT_DEATH(table.Insert("k", 7, 1, "b"),
               "duplicate .key, lsn. inserted into L0");
}

}  // namespace
}  // namespace kvs::lsm
