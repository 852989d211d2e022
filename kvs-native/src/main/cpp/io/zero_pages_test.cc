#include "io/zero_pages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace kvs::io {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// The mapping's resident bytes as the kernel counts them (/proc/self/smaps
// "Rss", which leaves out the shared zero page that reads map).
size_t ResidentBytes(const ZeroPages& pages) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t start = reinterpret_cast<uintptr_t>(pages.data());
  std::string line;
  bool ours = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0;
    uintptr_t to = 0;
    // A mapping's first line: "<from>-<to> perms ..."; keys never parse so.
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2) {
      ours = from <= start && start < to;
      continue;
    }
    if (ours && line.rfind("Rss:", 0) == 0) {
      return std::stoul(line.substr(4)) * 1024;
    }
  }
  ADD_FAILURE() << "no mapping at " << start << " in /proc/self/smaps";
  return 0;
}

bool AllZero(const char* data, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != 0) return false;
  }
  return true;
}

TEST(ZeroPagesTest, AFreshMappingReadsAsZerosAndTakesNoMemory) {
  ZeroPages pages;
  ASSERT_TRUE(pages.Map(2u << 20, true).ok());
  EXPECT_EQ(pages.size(), 2u << 20);
  EXPECT_EQ(ResidentBytes(pages), 0u);
  EXPECT_TRUE(AllZero(pages.data(), pages.size()));
  // Reading maps the shared zero page, which is not ours to count.
  pages.data()[5 * kPage + 1] = 1;
  EXPECT_EQ(ResidentBytes(pages), kPage);
}

TEST(ZeroPagesTest, ZeroGivesWholePagesBackAndKeepsTheBytesAroundIt) {
  ZeroPages pages;
  ASSERT_TRUE(pages.Map(16 * kPage, true).ok());
  std::memset(pages.data(), 'x', pages.size());
  EXPECT_EQ(ResidentBytes(pages), 16 * kPage);
  // From the middle of page 1 to the middle of page 9.
  const size_t from = kPage + 100;
  const size_t to = 9 * kPage + 7;
  pages.Zero(from, to - from);
  EXPECT_TRUE(AllZero(pages.data() + from, to - from));
  for (size_t i = 0; i < from; ++i) ASSERT_EQ(pages.data()[i], 'x');
  for (size_t i = to; i < pages.size(); ++i) ASSERT_EQ(pages.data()[i], 'x');
  // Pages 2 to 8 are wholly inside and went back.
  EXPECT_EQ(ResidentBytes(pages), 9 * kPage);
  // Written again, they hold what was written.
  pages.data()[4 * kPage] = 'y';
  EXPECT_EQ(pages.data()[4 * kPage], 'y');
  EXPECT_EQ(pages.data()[4 * kPage + 1], 0);
}

TEST(ZeroPagesTest, WithoutReclaimZeroKeepsThePages) {
  ZeroPages pages;
  ASSERT_TRUE(pages.Map(8 * kPage, false).ok());
  std::memset(pages.data(), 'x', pages.size());
  pages.Zero(0, pages.size());
  EXPECT_TRUE(AllZero(pages.data(), pages.size()));
  EXPECT_EQ(ResidentBytes(pages), 8 * kPage);
}

TEST(ZeroPagesTest, ASizeThatIsNotAPageMultipleIsKeptAsAsked) {
  ZeroPages pages;
  ASSERT_TRUE(pages.Map(kPage + 64, true).ok());
  EXPECT_EQ(pages.size(), kPage + 64);
  std::memset(pages.data(), 'x', pages.size());
  pages.Zero(0, pages.size());
  EXPECT_TRUE(AllZero(pages.data(), pages.size()));
}

}  // namespace
}  // namespace kvs::io
