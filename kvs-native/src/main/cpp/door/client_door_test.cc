// The native client door: the handshake with and without a client secret,
// requests answered on the shard or later from another thread, and its
// bounds (connections, frame size, a client that never reads, a silent
// client). The Java ClientPortTest runs the same door behind the region
// service; client_door_tls_test.cc runs it with TLS.

#include "door/client_door.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "channel/bootstrap.h"
#include "channel/bootstrap_auth.h"
#include "door/client_handshake.h"
#include "testing/eventually.h"
#include "util/coding.h"

namespace kvs::door {
namespace {

using testing::Eventually;

// Echoes a request reversed on the calling thread; one starting with 'L'
// is answered later by a thread of its own (as replication answers), one
// starting with '#' with that many bytes.
class Handler : public channel::RequestHandler {
 public:
  Handler() : later_([this] { AnswerLater(); }) {}
  ~Handler() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    later_.join();
  }

  void Handle(channel::Session*, std::string_view request,
              std::string* reply) override {
    reply->assign(request.rbegin(), request.rend());
  }

  void HandleAsync(channel::Session* session, std::string_view request,
                   Respond respond) override {
    handled_.fetch_add(1);
    if (!request.empty() && request[0] == 'L') {
      std::lock_guard<std::mutex> lock(mutex_);
      waiting_.emplace_back(std::string(request), std::move(respond));
      return;
    }
    if (!request.empty() && request[0] == '#') {
      respond(std::string(std::stoul(std::string(request.substr(1))), 'r'));
      return;
    }
    std::string reply;
    Handle(session, request, &reply);
    respond(std::move(reply));
  }

  uint64_t handled() const { return handled_.load(); }

 private:
  void AnswerLater() {
    for (;;) {
      std::deque<std::pair<std::string, Respond>> taken;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_ && waiting_.empty()) return;
        taken.swap(waiting_);
      }
      for (auto& [request, respond] : taken) {
        respond("later:" + request);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::atomic<uint64_t> handled_{0};
  std::mutex mutex_;
  bool stopping_ = false;
  std::deque<std::pair<std::string, Respond>> waiting_;
  std::thread later_;
};

// A blocking test client of the door's framing.
class Client {
 public:
  explicit Client(uint16_t port) {
    EXPECT_TRUE(
        channel::Connect("127.0.0.1", port, std::chrono::seconds(5), &socket_)
            .ok());
    // Blocking, so that reads wait (bounded by the timeout) for what comes.
    ::fcntl(socket_, F_SETFL, ::fcntl(socket_, F_GETFL) & ~O_NONBLOCK);
    struct timeval timeout {};
    timeout.tv_sec = 10;
    ::setsockopt(socket_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~Client() {
    if (socket_ >= 0) ::close(socket_);
  }

  void Send(std::string_view body) {
    std::string frame;
    coding::PutFixed32(&frame, static_cast<uint32_t>(body.size()));
    frame.append(body);
    ASSERT_TRUE(
        channel::WriteAll(socket_, frame, std::chrono::seconds(10)).ok());
  }
  // The next frame's body; "<closed>" if the connection closed.
  std::string Receive() {
    std::string head = ReadExactly(4);
    if (head.size() < 4) return "<closed>";
    return ReadExactly(coding::DecodeFixed32(head.data()));
  }
  // Whether the server closed the connection (waiting for it, bounded).
  bool Closed() {
    char byte;
    return ::recv(socket_, &byte, 1, 0) == 0;
  }
  // The handshake, proving `secret`; the Admission's status and message.
  std::pair<uint8_t, std::string> Handshake(const std::string& secret) {
    channel::Challenge challenge;
    EXPECT_TRUE(channel::DecodeChallenge(Receive(), &challenge).ok());
    Hello hello;
    hello.nonce = channel::RandomNonce();
    hello.proof = secret.empty() ? std::string(channel::kProofBytes, '\0')
                                 : channel::Prove(secret, kHelloPurpose,
                                                  challenge.nonce, hello.nonce);
    Send(EncodeHello(hello));
    uint8_t status = 255;
    std::string message, proof;
    EXPECT_TRUE(DecodeAdmission(Receive(), &status, &message, &proof).ok());
    if (status == 0 && !secret.empty()) {
      EXPECT_TRUE(channel::Verify(proof, secret, kAdmitPurpose, hello.nonce,
                                  challenge.nonce));
    }
    return {status, message};
  }
  int socket() const { return socket_; }

 private:
  std::string ReadExactly(size_t size) {
    std::string out(size, '\0');
    size_t got = 0;
    while (got < size) {
      const ssize_t n = ::recv(socket_, out.data() + got, size - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return out.substr(0, got);  // closed, or the timeout
      got += static_cast<size_t>(n);
    }
    return out;
  }
  int socket_ = -1;
};

std::unique_ptr<ClientDoor> Open(Handler* handler, ClientDoorOptions options) {
  std::unique_ptr<ClientDoor> door;
  EXPECT_TRUE(ClientDoor::Start(handler, options, &door).ok());
  return door;
}

TEST(ClientDoorTest, AnswersOnTheShardAndLaterFromAnotherThread) {
  Handler handler;
  ClientDoorOptions options;
  options.shards = 2;
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client first(door->port()), second(door->port());
  EXPECT_EQ(first.Handshake("").first, 0);
  EXPECT_EQ(second.Handshake("").first, 0);
  first.Send("abc");
  EXPECT_EQ(first.Receive(), "cba");
  second.Send("Lx");
  EXPECT_EQ(second.Receive(), "later:Lx");
  // Pipelined: both kinds, the immediate ones answered first.
  for (int i = 0; i < 100; ++i) {
    first.Send(i % 2 == 0 ? "L" + std::to_string(i) : "x" + std::to_string(i));
  }
  size_t later = 0, now = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string reply = first.Receive();
    if (reply.rfind("later:", 0) == 0) {
      ++later;
    } else {
      ++now;
    }
  }
  EXPECT_EQ(later, 50u);
  EXPECT_EQ(now, 50u);
  EXPECT_EQ(door->stats().requests, 102u);
  EXPECT_EQ(door->stats().connections, 2u);
}

TEST(ClientDoorTest, OnlyClientsProvingTheSecretAreServed) {
  Handler handler;
  ClientDoorOptions options;
  options.client_secret = std::string(32, 's');
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client good(door->port()), none(door->port()), wrong(door->port()),
      rude(door->port());
  EXPECT_EQ(good.Handshake(options.client_secret).first, 0);
  const auto refused = none.Handshake("");
  EXPECT_EQ(refused.first,
            static_cast<uint8_t>(Status::Code::kInvalidArgument));
  EXPECT_NE(refused.second.find("client secret"), std::string::npos);
  EXPECT_TRUE(none.Closed());
  EXPECT_NE(wrong.Handshake(std::string(32, 'w')).first, 0);
  // A request instead of the Hello: refused, never executed.
  channel::Challenge challenge;
  EXPECT_TRUE(channel::DecodeChallenge(rude.Receive(), &challenge).ok());
  rude.Send("a request");
  uint8_t status = 0;
  std::string message, proof;
  EXPECT_TRUE(DecodeAdmission(rude.Receive(), &status, &message, &proof).ok());
  EXPECT_NE(status, 0);
  EXPECT_NE(message.find("no handshake Hello"), std::string::npos);
  EXPECT_TRUE(rude.Closed());
  good.Send("ok");
  EXPECT_EQ(good.Receive(), "ko");
  EXPECT_EQ(handler.handled(), 1u);
  EXPECT_EQ(door->stats().refusals, 3u);
}

TEST(ClientDoorTest, ASilentClientIsRefusedAtTheDeadline) {
  Handler handler;
  ClientDoorOptions options;
  options.handshake_timeout = std::chrono::milliseconds(100);
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client silent(door->port());
  channel::Challenge challenge;
  EXPECT_TRUE(channel::DecodeChallenge(silent.Receive(), &challenge).ok());
  uint8_t status = 0;
  std::string message, proof;
  EXPECT_TRUE(
      DecodeAdmission(silent.Receive(), &status, &message, &proof).ok());
  EXPECT_NE(message.find("no handshake within 100 ms"), std::string::npos);
  EXPECT_TRUE(silent.Closed());
  EXPECT_TRUE(Eventually([&] { return door->stats().connections == 0; }));
}

TEST(ClientDoorTest, BoundsCloseOnlyTheConnectionOverThem) {
  Handler handler;
  ClientDoorOptions options;
  options.max_connections = 2;
  options.max_frame_bytes = 1024;
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client first(door->port()), hostile(door->port());
  EXPECT_EQ(first.Handshake("").first, 0);
  EXPECT_EQ(hostile.Handshake("").first, 0);
  {
    Client third(door->port());  // one beyond the cap: closed at once
    EXPECT_TRUE(third.Closed());
  }
  EXPECT_EQ(door->stats().refused_connections, 1u);
  hostile.Send(std::string(2048, 'x'));  // above the frame bound
  EXPECT_TRUE(hostile.Closed());
  EXPECT_EQ(door->stats().malformed, 1u);
  EXPECT_TRUE(Eventually([&] { return door->stats().connections == 1; }));
  Client again(door->port());  // room again
  EXPECT_EQ(again.Handshake("").first, 0);
  first.Send("still");
  EXPECT_EQ(first.Receive(), "llits");
}

TEST(ClientDoorTest, AClientThatNeverReadsStopsBeingRead) {
  Handler handler;
  ClientDoorOptions options;
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client greedy(door->port()), polite(door->port());
  EXPECT_EQ(greedy.Handshake("").first, 0);
  EXPECT_EQ(polite.Handshake("").first, 0);
  // 64 KiB replies, never read: the door stops reading once its output
  // passes the bound (the socket buffers hold a few MiB first).
  std::string requests;
  for (int i = 0; i < 2000; ++i) {
    coding::PutFixed32(&requests, 6);
    requests += "#65536";
  }
  size_t sent = 0;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (sent < requests.size() && std::chrono::steady_clock::now() < give_up) {
    const ssize_t n = ::send(greedy.socket(), requests.data() + sent,
                             requests.size() - sent, MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (door->stats().output_stalls > 0 && sent > 0) break;
    }
  }
  EXPECT_TRUE(Eventually([&] { return door->stats().output_stalls >= 1; }));
  const uint64_t handled = handler.handled();
  EXPECT_LT(handled, 2000u);  // not everything sent was taken
  polite.Send("served");
  EXPECT_EQ(polite.Receive(), "devres");
  // Reading its replies lets it go on: the door takes more of its requests
  // once what waits for it drains below the low-water mark.
  uint64_t read = 0;
  while (handler.handled() <= handled && read < handled) {
    ASSERT_EQ(greedy.Receive().size(), 65536u);
    ++read;
  }
  EXPECT_GT(handler.handled(), handled);
}

double ProcessCpuMillis() {
  struct timespec now {};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 +
         static_cast<double>(now.tv_nsec) / 1e6;
}

TEST(ClientDoorTest, AnIdleDoorBlocks) {
  Handler handler;
  ClientDoorOptions options;
  options.shards = 2;
  std::unique_ptr<ClientDoor> door = Open(&handler, options);
  Client client(door->port());
  EXPECT_EQ(client.Handshake("").first, 0);
  const uint64_t turns = door->stats().shard_turns;
  const double cpu = ProcessCpuMillis();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The handler's own thread naps each millisecond; the shards take no turn.
  EXPECT_EQ(door->stats().shard_turns, turns);
  EXPECT_LT(ProcessCpuMillis() - cpu, 100.0);
}

}  // namespace
}  // namespace kvs::door

namespace kvs::door {
namespace {

// Holds requests starting with 'W' in flight (as replicated writes wait for
// their backups) and offers an eventfd to watch for their "answers"
// (RequestHandler::EndOfTurn); once it is readable, the next end of turn
// answers them. Everything but the eventfd's writer runs on the shard.
class Watching : public channel::RequestHandler {
 public:
  Watching() { Replace(); }
  ~Watching() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Handle(channel::Session*, std::string_view request,
              std::string* reply) override {
    reply->assign(request);
  }
  void HandleAsync(channel::Session*, std::string_view request,
                   Respond respond) override {
    if (!request.empty() && request[0] == 'W') {
      held_.emplace_back(std::string(request), std::move(respond));
      return;
    }
    respond(std::string(request));
  }
  AnswerWatch EndOfTurn(bool may_watch) override {
    end_of_turns_.fetch_add(1);
    if (!may_watch) not_offered_.fetch_add(1);
    if (arrived_) {
      arrived_ = false;
      uint64_t drained;
      (void)!::read(fd_, &drained, sizeof drained);
      for (auto& [request, respond] : held_) respond("held:" + request);
      held_.clear();
    }
    if (held_.empty() || watched_) return {};
    watched_ = true;
    return {fd_, source_, owner_};
  }
  void AnswersArrived() override {
    watched_ = false;
    arrived_ = true;
    arrivals_.fetch_add(1);
  }

  // From the test: the answers came.
  void Answer() {
    const uint64_t one = 1;
    ASSERT_EQ(::write(fd_, &one, sizeof one), 8);
  }
  // From the test, while nothing is held: a new descriptor (and source);
  // the old one closes once the door's copy is all that is left of it.
  void Replace() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ++source_;
    owner_ = std::make_shared<int>(0);
  }
  uint64_t arrivals() const { return arrivals_.load(); }
  uint64_t not_offered() const { return not_offered_.load(); }

 private:
  std::deque<std::pair<std::string, Respond>> held_;  // the shard's
  bool watched_ = false;
  bool arrived_ = false;
  int fd_ = -1;
  uint64_t source_ = 0;
  std::shared_ptr<const void> owner_;
  std::atomic<uint64_t> end_of_turns_{0};
  std::atomic<uint64_t> not_offered_{0};
  std::atomic<uint64_t> arrivals_{0};
};

// Whether `socket` becomes readable within `wait`.
bool ReadableWithin(int socket, std::chrono::milliseconds wait) {
  struct pollfd one {
    socket, POLLIN, 0
  };
  return ::poll(&one, 1, static_cast<int>(wait.count())) == 1;
}

// The door watches, on the shard, the descriptor the handler's end of turn
// offers, and when it is readable runs the end of turn again, which answers
// what was held: no other thread answers. Armed again each round; a new
// descriptor (a new source) is watched instead of the old.
TEST(ClientDoorTest, AShardWatchesForTheAnswersItsTurnLeftInFlight) {
  Watching handler;
  ClientDoorOptions options;
  options.shards = 1;
  std::unique_ptr<ClientDoor> door;
  ASSERT_TRUE(ClientDoor::Start(&handler, options, &door).ok());
  Client client(door->port());
  ASSERT_EQ(client.Handshake("").first, 0);
  for (int round = 1; round <= 3; ++round) {
    if (round == 3) handler.Replace();
    client.Send("W" + std::to_string(round));
    client.Send("x");
    EXPECT_EQ(client.Receive(), "x");
    // Held until its answers come.
    EXPECT_FALSE(
        ReadableWithin(client.socket(), std::chrono::milliseconds(50)));
    handler.Answer();
    EXPECT_EQ(client.Receive(), "held:W" + std::to_string(round));
    EXPECT_EQ(handler.arrivals(), static_cast<uint64_t>(round));
  }
  EXPECT_EQ(handler.not_offered(), 0u);
}

}  // namespace
}  // namespace kvs::door
