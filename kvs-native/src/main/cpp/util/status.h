// Status: the result of an operation that can fail.
//
// The library is built with -fno-exceptions: every function that can fail
// returns a Status (or a value plus a Status). An OK status holds no heap
// state, so returning one costs a pointer. Errors carry a code and a message
// for humans. Codes equal the C ABI's kvs_status values.
//
// Thread safety: a Status is a value; distinct objects may be used from
// distinct threads freely.

#ifndef KVS_UTIL_STATUS_H_
#define KVS_UTIL_STATUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kvs/kvs.h"

namespace kvs {

class [[nodiscard]] Status {
 public:
  enum class Code : int32_t {
    kOk = KVS_OK,
    kNotFound = KVS_NOT_FOUND,
    kCorruption = KVS_CORRUPTION,
    kIoError = KVS_IO_ERROR,
    kInvalidArgument = KVS_INVALID_ARGUMENT,
    kBusy = KVS_BUSY,
    kClosed = KVS_CLOSED,
    kTooLarge = KVS_TOO_LARGE,
    kInternal = KVS_INTERNAL,
    kNotPrimary = KVS_NOT_PRIMARY,
    kWrongRegion = KVS_WRONG_REGION,
    kStaleEpoch = KVS_STALE_EPOCH,
    kOverloaded = KVS_OVERLOADED,
    kNotEnoughReplicas = KVS_NOT_ENOUGH_REPLICAS,
  };

  Status() = default;
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }
  static Status NotFound(std::string_view message) {
    return Status(Code::kNotFound, message);
  }
  static Status Corruption(std::string_view message) {
    return Status(Code::kCorruption, message);
  }
  static Status IoError(std::string_view message) {
    return Status(Code::kIoError, message);
  }
  // An I/O error from a failed system call: appends strerror(error_number).
  // ENOSPC and EDQUOT give a NoSpace error.
  static Status FromErrno(std::string_view context, int error_number);
  // The device or file system is full: an IO_ERROR (so the C ABI and the
  // wire need no new code) that IsNoSpace() tells apart, because unlike
  // other I/O errors it is transient -- writes resume once space exists --
  // and must never stop a log or a region for good.
  static Status NoSpace(std::string_view message) {
    Status status(Code::kIoError, message);
    status.state_->no_space = true;
    return status;
  }
  static Status InvalidArgument(std::string_view message) {
    return Status(Code::kInvalidArgument, message);
  }
  static Status Busy(std::string_view message) {
    return Status(Code::kBusy, message);
  }
  static Status Closed(std::string_view message) {
    return Status(Code::kClosed, message);
  }
  static Status TooLarge(std::string_view message) {
    return Status(Code::kTooLarge, message);
  }
  static Status Internal(std::string_view message) {
    return Status(Code::kInternal, message);
  }
  // Any code, e.g. one received across the C ABI.
  static Status FromCode(Code code, std::string_view message);

  bool ok() const { return state_ == nullptr; }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsBusy() const { return code() == Code::kBusy; }
  bool IsNoSpace() const { return state_ != nullptr && state_->no_space; }
  // The same error with `prefix` before its message (NoSpace kept).
  Status WithContext(std::string_view prefix) const;
  // The message without the code name; empty for OK.
  std::string_view message() const;
  // "CORRUPTION: <message>" or "OK".
  std::string ToString() const;

 private:
  struct State {
    Code code;
    std::string message;
    bool no_space = false;
  };
  Status(Code code, std::string_view message);

  std::unique_ptr<State> state_;  // null means OK
};

// Returns early from the enclosing function when `expr` is not OK.
#define KVS_RETURN_IF_ERROR(expr)       \
  do {                                  \
    ::kvs::Status kvs_status_ = (expr); \
    if (!kvs_status_.ok()) {            \
      return kvs_status_;               \
    }                                   \
  } while (false)

}  // namespace kvs

#endif  // KVS_UTIL_STATUS_H_
