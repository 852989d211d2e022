#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/aligned_buffer.h"
#include "io/file.h"
#include "util/limits.h"

namespace kvs::io {
namespace {

class PosixFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kvs-posix-file-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    directory_ = pattern;
    path_ = directory_ + "/volume";
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::string directory_;
  std::string path_;
};

TEST_F(PosixFileTest, GrowsWritesSyncsAndReadsBackAligned) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = true, .create = true}, &file).ok());
  EXPECT_EQ(file->Size(), 0u);
  ASSERT_TRUE(file->Grow(4 * limits::io_alignment_bytes).ok());
  EXPECT_EQ(file->Size(), 4 * limits::io_alignment_bytes);
  EXPECT_EQ(std::filesystem::file_size(path_), file->Size());

  AlignedBuffer out(limits::io_alignment_bytes);
  std::memset(out.data(), 'k', out.size());
  ASSERT_TRUE(file->Write(limits::io_alignment_bytes, out.view()).ok());
  ASSERT_TRUE(file->Sync().ok());

  AlignedBuffer in(limits::io_alignment_bytes);
  ASSERT_TRUE(
      file->Read(limits::io_alignment_bytes, in.size(), in.data()).ok());
  EXPECT_EQ(in.view(), out.view());
}

TEST_F(PosixFileTest, ReadsOnlyTheDeviceBlocksAskedForAtItsReadAlignment) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = true, .create = true}, &file).ok());
  const uint64_t alignment = file->read_alignment_bytes();
  EXPECT_GE(alignment, 512u);
  EXPECT_LE(alignment, limits::io_alignment_bytes);
  EXPECT_EQ(alignment & (alignment - 1), 0u) << alignment;
  ASSERT_TRUE(file->Grow(2 * limits::io_alignment_bytes).ok());
  AlignedBuffer out(2 * limits::io_alignment_bytes);
  for (size_t i = 0; i < out.size(); ++i) {
    out.data()[i] = static_cast<char>(i * 7 + i / 512);
  }
  ASSERT_TRUE(file->Write(0, out.view()).ok());
  // The last block of the first page and the first of the second: a read
  // that spans a page boundary, batched with one inside a page.
  const uint64_t offset = limits::io_alignment_bytes - alignment;
  AlignedBuffer in(2 * limits::io_alignment_bytes);
  ASSERT_TRUE(file->Read(offset, 2 * alignment, in.data()).ok());
  EXPECT_EQ(std::string_view(in.data(), 2 * alignment),
            out.view().substr(offset, 2 * alignment));
  ReadOp ops[2];
  ops[0].offset = offset;
  ops[0].size = 2 * alignment;
  ops[0].out = in.data();
  ops[1].offset = alignment == limits::io_alignment_bytes ? 0 : alignment;
  ops[1].size = alignment;
  ops[1].out = in.data() + limits::io_alignment_bytes;
  ASSERT_TRUE(file->ReadMany(ops).ok());
  EXPECT_EQ(std::string_view(ops[0].out, ops[0].size),
            out.view().substr(ops[0].offset, ops[0].size));
  EXPECT_EQ(std::string_view(ops[1].out, ops[1].size),
            out.view().substr(ops[1].offset, ops[1].size));
}

TEST_F(PosixFileTest, ReadPastEndIsAnIoErrorNamingTheFile) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = true, .create = true}, &file).ok());
  AlignedBuffer in(limits::io_alignment_bytes);
  const Status status = file->Read(0, in.size(), in.data());
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_NE(status.message().find(path_), std::string_view::npos);
}

// A batch larger than one io_uring submission, in scattered order, with one
// read past the end: every other read gets its bytes, that one its error.
TEST_F(PosixFileTest, ReadManyReadsEveryRangeAndReportsEachFailure) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = true, .create = true}, &file).ok());
  constexpr size_t kBlocks = 200;
  constexpr uint64_t kBlock = limits::io_alignment_bytes;
  ASSERT_TRUE(file->Grow(kBlocks * kBlock).ok());
  AlignedBuffer block(kBlock);
  for (size_t i = 0; i < kBlocks; ++i) {
    std::memset(block.data(), static_cast<int>(i % 251), block.size());
    ASSERT_TRUE(file->Write(i * kBlock, block.view()).ok());
  }
  constexpr size_t kReads = 150;
  AlignedBuffer in((kReads + 1) * kBlock);
  std::vector<ReadOp> ops(kReads + 1);
  for (size_t i = 0; i < kReads; ++i) {
    ops[i].offset = ((i * 37) % kBlocks) * kBlock;
    ops[i].size = kBlock;
    ops[i].out = in.data() + i * kBlock;
  }
  ops[kReads] = {kBlocks * kBlock, kBlock, in.data() + kReads * kBlock, {}};
  const Status status = file->ReadMany(ops);
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  for (size_t i = 0; i < kReads; ++i) {
    ASSERT_TRUE(ops[i].status.ok()) << i << " " << ops[i].status.ToString();
    const char expected = static_cast<char>(((i * 37) % kBlocks) % 251);
    ASSERT_EQ(std::string_view(ops[i].out, kBlock),
              std::string(kBlock, expected))
        << i;
  }
  EXPECT_EQ(ops[kReads].status.code(), Status::Code::kIoError);
  EXPECT_NE(ops[kReads].status.message().find(path_), std::string_view::npos);
}

TEST_F(PosixFileTest, OpeningAMissingFileWithoutCreateFails) {
  std::unique_ptr<File> file;
  const Status status = OpenPosixFile(path_, {}, &file);
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_NE(status.message().find("No such file"), std::string_view::npos);
}

// Two engines writing one volume would corrupt it: the second open is
// refused while the first holds the file, and allowed once it closed.
TEST_F(PosixFileTest, AFileOpenTwiceIsBusyUntilTheFirstOneCloses) {
  std::unique_ptr<File> first;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = false, .create = true}, &first).ok());
  std::unique_ptr<File> second;
  const Status status =
      OpenPosixFile(path_, {.direct_io = false, .create = true}, &second);
  EXPECT_TRUE(status.IsBusy()) << status.ToString();
  EXPECT_NE(status.message().find("in use"), std::string_view::npos);
  EXPECT_EQ(second, nullptr);
  // Without the lock (a reader that knows better) it opens.
  EXPECT_TRUE(
      OpenPosixFile(path_, {.direct_io = false, .lock = false}, &second).ok());
  second.reset();
  first.reset();
  EXPECT_TRUE(OpenPosixFile(path_, {.direct_io = false}, &second).ok());
}

TEST_F(PosixFileTest, ADirectoryIsRejected) {
  std::unique_ptr<File> file;
  const Status status = OpenPosixFile(directory_, {.direct_io = false}, &file);
  EXPECT_FALSE(status.ok());
}

TEST_F(PosixFileTest, UnalignedDirectIoIsAProgrammerError) {
  std::unique_ptr<File> file;
  ASSERT_TRUE(
      OpenPosixFile(path_, {.direct_io = true, .create = true}, &file).ok());
  if (!file->direct_io()) {
    GTEST_SKIP() << "file system refuses O_DIRECT";
  }
  ASSERT_TRUE(file->Grow(2 * limits::io_alignment_bytes).ok());
  AlignedBuffer buffer(limits::io_alignment_bytes);
  EXPECT_DEATH((void)file->Write(1, buffer.view()), "unaligned direct I/O");
}

}  // namespace
}  // namespace kvs::io
