// What the stream transport does that the fabric does not, or does its own
// way (ChannelTest runs the common behaviour over it too): an idle server
// costs no CPU, a malformed frame or a write outside what a peer was given
// closes only that connection, and a peer that never reads its replies is
// no longer read while the others are served; a connection that fails
// inside Submit tells its requests at the next Poll.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "channel/bootstrap.h"
#include "channel/client.h"
#include "channel/server.h"
#include "channel/stream_format.h"
#include "testing/eventually.h"

namespace kvs::channel {
namespace {

using Clock = std::chrono::steady_clock;

// Echoes the request reversed; "#<n>" is answered with n bytes.
class Echo : public RequestHandler {
 public:
  void Handle(Session*, std::string_view request, std::string* reply) override {
    if (!request.empty() && request[0] == '#') {
      reply->assign(std::stoul(std::string(request.substr(1))), 'r');
      return;
    }
    reply->assign(request.rbegin(), request.rend());
  }
};

using testing::Eventually;

double ProcessCpuMillis() {
  struct timespec now {};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 +
         static_cast<double>(now.tv_nsec) / 1e6;
}

class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.endpoint.provider = fabric::Provider::kStream;
    ASSERT_TRUE(Server::Start(options, &echo_, &server_).ok());
  }

  std::unique_ptr<Client> NewClient() {
    ClientOptions options;
    options.endpoint.provider = fabric::Provider::kStream;
    std::unique_ptr<Client> client;
    EXPECT_TRUE(
        Client::Connect(options, "127.0.0.1", server_->port(), &client).ok());
    return client;
  }

  // A raw connection past the bootstrap: frames are up to the test.
  int RawConnection() {
    int socket = -1;
    EXPECT_TRUE(
        Connect("127.0.0.1", server_->port(), std::chrono::seconds(2), &socket)
            .ok());
    Hello hello;
    hello.provider = fabric::Provider::kStream;
    Welcome welcome;
    EXPECT_TRUE(
        ClientHandshake(socket, "", std::chrono::seconds(2), &hello, &welcome)
            .ok());
    return socket;
  }

  static void Send(int socket, const std::string& bytes) {
    ASSERT_TRUE(WriteAll(socket, bytes, std::chrono::seconds(2)).ok());
  }

  Echo echo_;
  std::unique_ptr<Server> server_;
};

TEST_F(StreamTest, AnIdleStreamServerCostsNoCpu) {
  auto first = NewClient();
  auto second = NewClient();
  std::string reply;
  ASSERT_TRUE(first->Call("hello", &reply).ok());
  ASSERT_TRUE(second->Call("hello", &reply).ok());
  // Two connections open, nothing asked: every thread blocks.
  const double before = ProcessCpuMillis();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_LT(ProcessCpuMillis() - before, 25.0);
  // And wakes at once for the next request.
  const auto started = Clock::now();
  ASSERT_TRUE(first->Call("again", &reply).ok());
  EXPECT_EQ(reply, "niaga");
  EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(200));
}

TEST_F(StreamTest, AMalformedFrameClosesOnlyItsConnection) {
  auto good = NewClient();
  const int unknown_version = RawConnection();
  std::string frame;
  AppendFrame(FrameType::kMessage, 1, "bad", &frame);
  frame[0] = 9;
  Send(unknown_version, frame);
  EXPECT_TRUE(Eventually([&] { return PeerClosed(unknown_version); }));
  // A write into a buffer the server never gave this connection.
  const int stray_write = RawConnection();
  frame.clear();
  AppendWrite(1, /*key=*/77, /*offset=*/0, "bytes", &frame);
  Send(stray_write, frame);
  EXPECT_TRUE(Eventually([&] { return PeerClosed(stray_write); }));
  // A reply-kind frame sent to the server.
  const int wrong_way = RawConnection();
  frame.clear();
  AppendFrame(FrameType::kReply, 1, "", &frame);
  Send(wrong_way, frame);
  EXPECT_TRUE(Eventually([&] { return PeerClosed(wrong_way); }));
  EXPECT_EQ(server_->stats().malformed, 3u);
  std::string reply;
  EXPECT_TRUE(good->Call("still here", &reply).ok());
  EXPECT_EQ(reply, "ereh llits");
  for (const int socket : {unknown_version, stray_write, wrong_way}) {
    ::close(socket);
  }
}

// A peer asking for replies it never reads (here 64 MiB of them) is held
// back once its unread output passes the bound; everyone else is served.
TEST_F(StreamTest, APeerThatNeverReadsIsHeldBackAndOthersServed) {
  const int greedy = RawConnection();
  std::string frames;
  for (uint64_t id = 1; id <= 640; ++id) {
    AppendFrame(FrameType::kMessage, id, "#100000", &frames);
  }
  Send(greedy, frames);
  auto good = NewClient();
  for (int i = 0; i < 20; ++i) {
    const auto started = Clock::now();
    std::string reply;
    ASSERT_TRUE(good->Call("next", &reply).ok()) << i;
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(1)) << i;
  }
  ::close(greedy);
  EXPECT_TRUE(
      Eventually([&] { return server_->stats().connections_open == 1; }));
}

// A connection that fails while a request goes out fails that request (and
// every other unanswered one) at the next Poll, never from inside Submit:
// its caller may hold a lock the callback takes (the replicator submits
// under its group's lock; a callback run inside deadlocked it).
TEST_F(StreamTest, AConnectionThatFailsInSubmitIsToldAtTheNextPoll) {
  auto client = NewClient();
  std::string reply;
  ASSERT_TRUE(client->Call("hello", &reply).ok());
  server_.reset();  // the peer goes: its socket answers the next bytes with RST
  bool submitting = false;
  int told_inside = 0;
  int failed = 0;
  int accepted = 0;
  Status refused;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (refused.ok() && Clock::now() < deadline) {
    submitting = true;
    refused =
        client->Submit("anyone there?", [&](Status status, std::string_view) {
          if (submitting) ++told_inside;
          if (!status.ok()) ++failed;
        });
    submitting = false;
    if (refused.ok()) ++accepted;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(refused.ok()) << "the connection never noticed its peer gone";
  EXPECT_EQ(told_inside, 0);
  EXPECT_EQ(failed, 0) << "told before any Poll";
  EXPECT_EQ(client->outstanding(), static_cast<size_t>(accepted));
  EXPECT_EQ(client->Poll(), static_cast<size_t>(accepted));
  EXPECT_EQ(failed, accepted);
  EXPECT_EQ(client->outstanding(), 0u);
}

}  // namespace
}  // namespace kvs::channel

namespace kvs::channel {
namespace {

// Holds the server's loop inside IsControl (which it asks on the loop, for
// a peer's message) while a request "stuck" is in it, until released.
class Stuck : public Echo {
 public:
  bool IsControl(std::string_view request) const override {
    if (request == "stuck") {
      std::unique_lock<std::mutex> lock(mutex_);
      inside_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return released_; });
    }
    return false;
  }
  bool Inside() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return inside_;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable bool inside_ = false;
  bool released_ = false;
};

// The watchdog's probe of the loop (Server::Probe): an idle loop answers
// (woken for it), a loop stuck in a turn does not, and answers again once it
// comes round.
TEST(StreamProbeTest, AStuckLoopAnswersNoProbeUntilItComesRound) {
  Stuck handler;
  ServerOptions options;
  options.endpoint.provider = fabric::Provider::kStream;
  std::unique_ptr<Server> server;
  ASSERT_TRUE(Server::Start(options, &handler, &server).ok());
  EXPECT_TRUE(server->Probe());  // the first
  // Idle, blocked in epoll_wait: the probe wakes it and it answers.
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(testing::Eventually([&] { return server->Probe(); }));
  }
  ClientOptions client_options;
  client_options.endpoint.provider = fabric::Provider::kStream;
  client_options.kind = ConnectionKind::kPeer;
  std::unique_ptr<Client> peer;
  ASSERT_TRUE(
      Client::Connect(client_options, "127.0.0.1", server->port(), &peer).ok());
  std::string reply;
  ASSERT_TRUE(peer->Call("hello", &reply).ok());
  bool answered = false;
  ASSERT_TRUE(
      peer->Submit("stuck", [&](Status status,
                                std::string_view) { answered = status.ok(); })
          .ok());
  ASSERT_TRUE(testing::Eventually([&] {
    peer->Poll();
    return handler.Inside();
  }));
  // Whatever probe was answered before it stuck, the next goes unanswered
  // for as long as it is stuck.
  (void)server->Probe();
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(server->Probe());
  }
  handler.Release();
  EXPECT_TRUE(testing::Eventually([&] { return server->Probe(); }));
  EXPECT_TRUE(testing::Eventually([&] {
    peer->Poll();
    return answered;
  }));
}

}  // namespace
}  // namespace kvs::channel

namespace kvs::channel {
namespace {

// The fabric's spinning thread answers the watchdog too, also while it
// waits idle for a first connection (a condition wait, not the poll set),
// and after a client came and went.
TEST(StreamProbeTest, AnIdleFabricSpinnerAnswersEveryProbe) {
  Echo handler;
  ServerOptions options;
  options.endpoint.provider = fabric::Provider::kShm;
  std::unique_ptr<Server> server;
  ASSERT_TRUE(Server::Start(options, &handler, &server).ok());
  EXPECT_TRUE(server->Probe());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(testing::Eventually([&] { return server->Probe(); }));
  }
  {
    ClientOptions client_options;
    client_options.endpoint.provider = fabric::Provider::kShm;
    std::unique_ptr<Client> client;
    ASSERT_TRUE(
        Client::Connect(client_options, "127.0.0.1", server->port(), &client)
            .ok());
    std::string reply;
    ASSERT_TRUE(client->Call("hello", &reply).ok());
    EXPECT_TRUE(testing::Eventually([&] { return server->Probe(); }));
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(testing::Eventually([&] { return server->Probe(); }));
  }
}

}  // namespace
}  // namespace kvs::channel
