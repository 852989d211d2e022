#include "util/status.h"

#include <cerrno>
#include <cstring>

namespace kvs {

Status::Status(Code code, std::string_view message)
    : state_(code == Code::kOk ? nullptr
                               : new State{code, std::string(message)}) {}

Status::Status(const Status& other)
    : state_(other.state_ ? new State(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    state_.reset(other.state_ ? new State(*other.state_) : nullptr);
  }
  return *this;
}

Status Status::FromErrno(std::string_view context, int error_number) {
  char buffer[128];
  // GNU strerror_r returns a pointer that may or may not point into buffer.
  const char* text = strerror_r(error_number, buffer, sizeof(buffer));
  std::string message(context);
  message += ": ";
  message += text;
  if (error_number == ENOSPC || error_number == EDQUOT) {
    return NoSpace(message);
  }
  return Status(Code::kIoError, message);
}

Status Status::FromCode(Code code, std::string_view message) {
  return Status(code, message);
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) {
    return Status();
  }
  Status result(code(), std::string(prefix) + state_->message);
  result.state_->no_space = state_->no_space;
  return result;
}

std::string_view Status::message() const {
  return state_ ? std::string_view(state_->message) : std::string_view();
}

std::string Status::ToString() const {
  std::string result = kvs_status_name(static_cast<kvs_status>(code()));
  if (state_) {
    result += ": ";
    result += state_->message;
  }
  return result;
}

}  // namespace kvs
