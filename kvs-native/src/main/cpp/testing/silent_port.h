// A port on 127.0.0.1 that accepts connections (the kernel completes them
// into its backlog) and never says a word: a backup cut off or paused, as
// its primary sees it -- a connect succeeds, the bootstrap handshake and
// every message after it wait for an answer that never comes.

#ifndef KVS_TESTING_SILENT_PORT_H_
#define KVS_TESTING_SILENT_PORT_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

#include "channel/bootstrap.h"

namespace kvs::testing {

class SilentPort {
 public:
  SilentPort() {
    EXPECT_TRUE(channel::Listen("127.0.0.1", 0, &socket_, &port_).ok());
  }
  ~SilentPort() {
    if (socket_ >= 0) ::close(socket_);
  }
  SilentPort(const SilentPort&) = delete;
  SilentPort& operator=(const SilentPort&) = delete;

  uint16_t port() const { return port_; }

 private:
  int socket_ = -1;
  uint16_t port_ = 0;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_SILENT_PORT_H_
