#include "util/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace kvs {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  const Status status = Status::Ok();
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), Status::Code::kOk);
  EXPECT_TRUE(status.message().empty());
  EXPECT_EQ(status.ToString(), "OK");
}

TEST(StatusTest, ErrorsCarryCodeAndMessage) {
  const Status status = Status::Corruption("bad block at 4096");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(status.IsCorruption());
  EXPECT_EQ(status.message(), "bad block at 4096");
  EXPECT_EQ(status.ToString(), "CORRUPTION: bad block at 4096");
}

TEST(StatusTest, CopiesAreDeepAndMovesTransferState) {
  Status original = Status::IoError("disk gone");
  Status copy = original;
  EXPECT_EQ(copy.ToString(), original.ToString());
  Status moved = std::move(original);
  EXPECT_EQ(moved.ToString(), "IO_ERROR: disk gone");
  copy = Status::Ok();
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(moved.code(), Status::Code::kIoError);
}

TEST(StatusTest, FromErrnoNamesTheSystemError) {
  const Status status = Status::FromErrno("open /volume", ENOSPC);
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_EQ(status.message(), "open /volume: No space left on device");
}

TEST(StatusTest, CodesMatchTheCAbi) {
  EXPECT_EQ(static_cast<int>(Status::Code::kTooLarge), KVS_TOO_LARGE);
  EXPECT_STREQ(kvs_status_name(KVS_TOO_LARGE), "TOO_LARGE");
  EXPECT_STREQ(kvs_status_name(static_cast<kvs_status>(99)), "UNKNOWN");
}

Status FailsThenNeverReached(bool* reached) {
  KVS_RETURN_IF_ERROR(Status::Busy("try later"));
  *reached = true;
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  bool reached = false;
  EXPECT_EQ(FailsThenNeverReached(&reached).code(), Status::Code::kBusy);
  EXPECT_FALSE(reached);
}

}  // namespace
}  // namespace kvs
