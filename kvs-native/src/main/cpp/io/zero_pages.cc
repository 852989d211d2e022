#include "io/zero_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "util/check.h"

namespace kvs::io {
namespace {

size_t PageBytes() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

ZeroPages::~ZeroPages() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

ZeroPages& ZeroPages::operator=(ZeroPages&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, mapped_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    reclaim_ = other.reclaim_;
  }
  return *this;
}

ZeroPages ZeroPages::OrDie(size_t bytes) {
  ZeroPages pages;
  const Status mapped = pages.Map(bytes, true);
  KVS_CHECK_MSG(mapped.ok(), "out of memory");
  return pages;
}

Status ZeroPages::Map(size_t bytes, bool reclaim) {
  KVS_CHECK(data_ == nullptr);
  const size_t page = PageBytes();
  const size_t mapped = (bytes + page - 1) / page * page;
  if (mapped == 0) return Status::InvalidArgument("an empty mapping");
  void* memory = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return Status::FromErrno("mapping " + std::to_string(mapped) + " bytes",
                             errno);
  }
  // Huge pages would make the first byte written cost 2 MiB. Advice only:
  // a kernel without transparent huge pages refuses it, which is the same.
  ::madvise(memory, mapped, MADV_NOHUGEPAGE);
  data_ = static_cast<char*>(memory);
  size_ = bytes;
  mapped_ = mapped;
  reclaim_ = reclaim;
  return Status::Ok();
}

void ZeroPages::Zero(size_t offset, size_t length) {
  KVS_CHECK(offset <= size_ && length <= size_ - offset);
  if (length == 0) return;
  if (!reclaim_) {
    std::memset(data_ + offset, 0, length);
    return;
  }
  const size_t page = PageBytes();
  const size_t end = offset + length;
  const size_t first_whole = (offset + page - 1) / page * page;
  const size_t last_whole = end / page * page;
  if (first_whole >= last_whole) {
    std::memset(data_ + offset, 0, length);
    return;
  }
  std::memset(data_ + offset, 0, first_whole - offset);
  std::memset(data_ + last_whole, 0, end - last_whole);
  // A private anonymous page dropped reads as zeros when next touched.
  KVS_CHECK_MSG(::madvise(data_ + first_whole, last_whole - first_whole,
                          MADV_DONTNEED) == 0,
                "madvise(MADV_DONTNEED) on our own mapping failed");
}

}  // namespace kvs::io
