// The one-sided message protocol end to end: a Server and Clients over a
// real libfabric provider (shm and tcp), an echo-style handler.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "channel/bootstrap.h"
#include "channel/client.h"
#include "channel/message_format.h"
#include "channel/server.h"
#include "testing/eventually.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::channel {
namespace {

using Clock = std::chrono::steady_clock;

// Replies with the request reversed, or, for a request starting with '#',
// with as many bytes as the decimal number after it says.
class TestHandler : public RequestHandler {
 public:
  void Handle(Session* session, std::string_view request,
              std::string* reply) override {
    if (request == "replica") {
      // A 2 MiB replica buffer on this connection: "<address> <key> <size>".
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<std::shared_ptr<ReplicaBuffer>> set;
      const Status status = session->ReplicaBuffers(1, 1, 2u << 20, &set);
      if (!status.ok()) {
        reply->assign(status.ToString());
        return;
      }
      replica_ = set[0];
      const fabric::RemoteBuffer& remote = replica_->remote();
      reply->assign(std::to_string(remote.address) + " " +
                    std::to_string(remote.key) + " " +
                    std::to_string(remote.size));
      return;
    }
    if (request == "drop replica") {
      std::lock_guard<std::mutex> lock(mutex_);
      reply->assign(replica_ != nullptr ? "dropped" : "none");
      replica_.reset();
      return;
    }
    if (!request.empty() && request[0] == '#') {
      const size_t size = std::stoul(std::string(request.substr(1)));
      reply->resize(size);
      for (size_t i = 0; i < size; ++i)
        (*reply)[i] = static_cast<char>(i % 251);
      return;
    }
    if (request.substr(0, 4) == "crc ") {
      // "crc <offset> <length>": the CRC32C of that range of the replica.
      size_t length_at = 0;
      const size_t offset =
          std::stoul(std::string(request.substr(4)), &length_at);
      const size_t length =
          std::stoul(std::string(request.substr(4 + length_at)));
      std::lock_guard<std::mutex> lock(mutex_);
      reply->assign(
          std::to_string(crc32c::Value(replica_->data() + offset, length)));
      return;
    }
    if (request == "stall") {
      std::unique_lock<std::mutex> lock(mutex_);
      released_.wait(lock, [this] { return release_; });
    }
    reply->assign(request.rbegin(), request.rend());
  }
  // The replica buffer a "replica" request made, or null.
  const char* replica() {
    std::lock_guard<std::mutex> lock(mutex_);
    return replica_ != nullptr ? replica_->data() : nullptr;
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_ = true;
    released_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool release_ = false;
  std::shared_ptr<ReplicaBuffer> replica_;
};

std::string Reversed(std::string_view text) {
  return std::string(text.rbegin(), text.rend());
}

std::string Pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i % 251);
  return bytes;
}

using testing::Eventually;

class ChannelTest : public ::testing::TestWithParam<fabric::Provider> {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.endpoint = EndpointOptions();
    ASSERT_TRUE(Server::Start(options, &handler_, &server_).ok());
  }
  void TearDown() override {
    handler_.Release();
    server_.reset();
  }

  fabric::EndpointOptions EndpointOptions() const {
    fabric::EndpointOptions options;
    options.provider = GetParam();
    if (options.provider == fabric::Provider::kTcp) options.node = "127.0.0.1";
    return options;
  }

  std::unique_ptr<Client> NewClient(uint32_t buffer_bytes = 256u << 10) {
    ClientOptions options;
    options.endpoint = EndpointOptions();
    options.request_buffer_bytes = buffer_bytes;
    options.reply_buffer_bytes = buffer_bytes;
    std::unique_ptr<Client> client;
    const Status status =
        Client::Connect(options, "127.0.0.1", server_->port(), &client);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return client;
  }

  // Asks the test handler for its replica buffer's descriptor.
  static ::testing::AssertionResult DescribeReplica(
      Client* client, fabric::RemoteBuffer* remote) {
    std::string described;
    const Status status = client->Call("replica", &described);
    if (!status.ok()) {
      return ::testing::AssertionFailure() << status.ToString();
    }
    std::istringstream fields(described);
    if (!(fields >> remote->address >> remote->key >> remote->size)) {
      return ::testing::AssertionFailure() << "unreadable: " << described;
    }
    return ::testing::AssertionSuccess();
  }

  TestHandler handler_;
  std::unique_ptr<Server> server_;
};

// The benchmarks split a server's CPU time by thread name.
std::map<std::string, int> ThreadNames() {
  std::map<std::string, int> names;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    ++names[name];
  }
  return names;
}

TEST_P(ChannelTest, ServerThreadsAreNamedByRole) {
  // Each thread names itself as it starts.
  const bool stream = GetParam() == fabric::Provider::kStream;
  EXPECT_TRUE(Eventually([stream] {
    std::map<std::string, int> names = ThreadNames();
    if (stream) {  // one loop, no spinner
      return names["kvs-stream"] == 1 && names["kvs-fab-accept"] == 1 &&
             names["kvs-stream-work"] == 2 && names["kvs-stream-ctl"] == 1 &&
             names["kvs-fab-spin"] == 0;
    }
    return names["kvs-fab-spin"] == 1 && names["kvs-fab-accept"] == 1 &&
           names["kvs-fab-worker"] == 2;  // ServerOptions' default
  }));
}

TEST_P(ChannelTest, RepliesOfEverySizeArriveWholeFetchingWhatDidNotFit) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  for (const size_t size :
       {0, 1, 100, 443, 444, 445, 4096, 65536, 300000, 1 << 20}) {
    std::string reply;
    const Status status = client->Call("#" + std::to_string(size), &reply);
    ASSERT_TRUE(status.ok()) << size << ": " << status.ToString();
    ASSERT_EQ(reply, Pattern(size)) << size;
  }
  std::string reply;
  if (GetParam() != fabric::Provider::kStream) {  // a stream has no slots
    EXPECT_GT(client->stats().fetches, 0u);
    EXPECT_GT(server_->stats().reply_parts, 0u);
    // Later replies got larger slots: no more parts for a mid-sized reply.
    const uint64_t fetches = client->stats().fetches;
    ASSERT_TRUE(client->Call("#4096", &reply).ok());
    EXPECT_EQ(client->stats().fetches, fetches);
  }
  // Requests of every size too, up to what the request buffer holds.
  for (const size_t size : {1, 64, 1000, 100000}) {
    const std::string request(size, 'q');
    ASSERT_TRUE(client->Call(request, &reply).ok()) << size;
    EXPECT_EQ(reply, Reversed(request));
  }
  std::string too_big(300000, 'x');
  EXPECT_EQ(client->Call(too_big, &reply).code(), Status::Code::kTooLarge);
}

TEST_P(ChannelTest, TheRequestBufferWrapsAroundManyTimesInOrder) {
  auto client = NewClient(/*buffer_bytes=*/4096);
  ASSERT_NE(client, nullptr);
  std::mt19937 random(3);
  for (int i = 0; i < 3000; ++i) {
    const std::string request =
        std::to_string(i) + std::string(random() % 700, 'w');
    std::string reply;
    ASSERT_TRUE(client->Call(request, &reply).ok()) << i;
    ASSERT_EQ(reply, Reversed(request)) << i;
  }
  if (GetParam() != fabric::Provider::kStream) {  // a stream has no ring
    EXPECT_GT(client->stats().wraps, 10u);
  }
}

TEST_P(ChannelTest, ManyOutstandingRequestsEachGetTheirOwnReply) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::map<int, std::string> replies;
  int submitted = 0;
  while (submitted < 2000) {
    const std::string request = "request-" + std::to_string(submitted);
    const int index = submitted;
    const Status status =
        client->Submit(request, [&, index](Status s, std::string_view reply) {
          ASSERT_TRUE(s.ok()) << s.ToString();
          replies[index] = std::string(reply);
        });
    if (status.IsBusy()) {
      client->Poll();
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.ToString();
    ++submitted;
  }
  while (client->outstanding() > 0) client->Poll();
  ASSERT_EQ(replies.size(), 2000u);
  for (const auto& [index, reply] : replies) {
    EXPECT_EQ(reply, Reversed("request-" + std::to_string(index)));
  }
}

TEST_P(ChannelTest, ConcurrentClientsAreServedIndependently) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    threads.emplace_back([&, c] {
      auto client = NewClient();
      if (client == nullptr) {
        ++failures;
        return;
      }
      for (int i = 0; i < 300; ++i) {
        const std::string request = std::to_string(c) + ":" + std::to_string(i);
        std::string reply;
        if (!client->Call(request, &reply).ok() || reply != Reversed(request)) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(
      Eventually([&] { return server_->stats().connections_open == 0; }));
  EXPECT_EQ(server_->stats().connections_accepted, 4u);
}

TEST_P(ChannelTest, ADepartedClientIsDisconnectedAndItsMemoryReleased) {
  {
    auto client = NewClient();
    ASSERT_NE(client, nullptr);
    std::string reply;
    ASSERT_TRUE(client->Call("hello", &reply).ok());
    EXPECT_EQ(server_->stats().connections_open, 1u);
  }
  EXPECT_TRUE(
      Eventually([&] { return server_->stats().connections_open == 0; }));
  EXPECT_EQ(server_->stats().connections_closed, 1u);
  auto next = NewClient();
  std::string reply;
  EXPECT_TRUE(next->Call("again", &reply).ok());
}

TEST_P(ChannelTest, AnUnresponsiveServerTimesOutWithAClearError) {
  ClientOptions options;
  options.endpoint = EndpointOptions();
  options.request_timeout = std::chrono::milliseconds(300);
  std::unique_ptr<Client> client;
  ASSERT_TRUE(
      Client::Connect(options, "127.0.0.1", server_->port(), &client).ok());
  std::string reply;
  const auto start = Clock::now();
  const Status status = client->Call("stall", &reply);
  EXPECT_EQ(status.code(), Status::Code::kIoError) << status.ToString();
  EXPECT_NE(status.message().find("no reply within 300 ms"),
            std::string_view::npos);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_FALSE(client->health().ok());
  EXPECT_FALSE(client->Submit("more", nullptr).ok());
  // The client closed its connection: the server lets it go, and the
  // handler's late reply is dropped, not written to a departed peer.
  EXPECT_TRUE(
      Eventually([&] { return server_->stats().connections_open == 0; }));
  handler_.Release();
}

// Not over shm: in one process, a closed shm endpoint unmaps memory its
// in-process peers still write to, unlike a server process's exit.
TEST_P(ChannelTest, AServerThatGoesAwayFailsTheCallsInTime) {
  if (GetParam() == fabric::Provider::kShm) GTEST_SKIP();
  ClientOptions options;
  options.endpoint = EndpointOptions();
  options.request_timeout = std::chrono::milliseconds(500);
  std::unique_ptr<Client> client;
  ASSERT_TRUE(
      Client::Connect(options, "127.0.0.1", server_->port(), &client).ok());
  std::string reply;
  ASSERT_TRUE(client->Call("before", &reply).ok());
  server_.reset();
  const auto start = Clock::now();
  const Status status = client->Call("after", &reply);
  EXPECT_FALSE(status.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3)) << status.ToString();
}

// The replication channel's primitives: a backup's buffer written
// one-sidedly at offsets, then a control message that finds the bytes.
TEST_P(ChannelTest, ReplicationWritesLandInAReplicaBufferBeforeLaterMessages) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  fabric::RemoteBuffer remote;
  ASSERT_TRUE(DescribeReplica(client.get(), &remote));
  ASSERT_EQ(remote.size, 2u << 20);
  std::string segment(2u << 20, '\0');
  for (size_t i = 0; i < segment.size(); ++i) {
    segment[i] = static_cast<char>((i * 131) >> 7);
  }
  int completed = 0;
  // Callbacks come from Poll only, never from inside WriteRemote (whose
  // caller may hold locks the callback takes).
  bool writing = false;
  for (size_t offset = 0; offset < segment.size();) {
    const size_t chunk = std::min<size_t>(100000, segment.size() - offset);
    writing = true;
    const Status status = client->WriteRemote(
        remote, offset, std::string_view(segment).substr(offset, chunk),
        [&](Status s) {
          EXPECT_TRUE(s.ok()) << s.ToString();
          EXPECT_FALSE(writing) << "called from inside WriteRemote";
          ++completed;
        });
    writing = false;
    if (status.IsBusy()) {
      client->Poll();
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.ToString();
    offset += chunk;
  }
  const int writes = static_cast<int>((segment.size() + 99999) / 100000);
  ASSERT_TRUE(Eventually([&] {
    client->Poll();
    return completed == writes;
  }));
  std::string reply;
  ASSERT_TRUE(
      client->Call("crc 0 " + std::to_string(segment.size()), &reply).ok());
  EXPECT_EQ(reply,
            std::to_string(crc32c::Value(segment.data(), segment.size())));
  EXPECT_EQ(std::string(handler_.replica(), segment.size()), segment);
  // Writes outside the buffer are refused before anything is sent.
  EXPECT_EQ(
      client->WriteRemote(remote, remote.size - 10, "0123456789a", nullptr)
          .code(),
      Status::Code::kInvalidArgument);
  EXPECT_TRUE(client->health().ok());
  // The buffer outlives its connection until its owner lets it go.
  client.reset();
  EXPECT_NE(handler_.replica(), nullptr);
  auto next = NewClient();
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(next->Call("drop replica", &reply).ok());
  EXPECT_EQ(reply, "dropped");
}

// One post scatters pieces to several places (replication sends the
// batches of several regions to one backup server so): each lands where it
// was aimed, and one completion reports them all.
TEST_P(ChannelTest, OneRemoteWriteScattersPiecesToTheirOwnPlaces) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  fabric::RemoteBuffer remote;
  ASSERT_TRUE(DescribeReplica(client.get(), &remote));
  ASSERT_GT(client->remote_pieces_max(), 1u);  // tcp and shm take 4
  const size_t per_post = std::min<size_t>(client->remote_pieces_max(), 4);
  // Pieces of different sizes, piece i to offset 100,000 * (n - i): the
  // order on the wire differs from the order in the buffer.
  const size_t sizes[] = {3000, 7, 40000, 129};
  const std::string pattern = Pattern(50000);
  std::vector<Client::RemotePiece> pieces;
  size_t from = 0;
  for (size_t i = 0; i < per_post; ++i) {
    pieces.push_back({&remote, 100000 * (per_post - i),
                      std::string_view(pattern).substr(from, sizes[i % 4])});
    from += sizes[i % 4];
  }
  int completed = 0;
  ASSERT_TRUE(client
                  ->WriteRemote(pieces,
                                [&](Status status) {
                                  EXPECT_TRUE(status.ok()) << status.ToString();
                                  ++completed;
                                })
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    client->Poll();
    return completed > 0;
  }));
  std::string marker;  // a message after the write finds every piece
  ASSERT_TRUE(client->Call("marker", &marker).ok());
  EXPECT_EQ(completed, 1);
  for (size_t i = 0; i < per_post; ++i) {
    EXPECT_EQ(std::string_view(handler_.replica() + pieces[i].offset,
                               pieces[i].bytes.size()),
              pieces[i].bytes)
        << "piece " << i;
  }
  // More pieces than one post takes, none, or one outside the buffer: refused
  // before anything is sent, and the connection stays up.
  while (pieces.size() <= client->remote_pieces_max()) {
    pieces.push_back(pieces.front());
  }
  EXPECT_EQ(client->WriteRemote(pieces, nullptr).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(client->WriteRemote({}, nullptr).code(),
            Status::Code::kInvalidArgument);
  const Client::RemotePiece outside{&remote, remote.size - 2, "abc"};
  EXPECT_EQ(client->WriteRemote({&outside, 1}, nullptr).code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(client->health().ok());
}

// An idle server blocks instead of polling; a client's knocks (and over
// tcp its bytes arriving) wake it at once, for a request and for one-sided
// writes into a replica buffer (which need its progress, and carry no
// message).
TEST_P(ChannelTest, AnIdleServerBlocksAndKnocksWakeItAtOnce) {
  if (GetParam() == fabric::Provider::kStream) {
    GTEST_SKIP()
        << "no spinner to block or knock: AnIdleStreamServerCostsNoCpu";
  }
  server_.reset();
  ServerOptions options;
  options.endpoint = EndpointOptions();
  options.spin_block_after = std::chrono::microseconds(1000);
  options.spin_block_max = std::chrono::milliseconds(60000);
  ASSERT_TRUE(Server::Start(options, &handler_, &server_).ok());
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  fabric::RemoteBuffer remote;
  ASSERT_TRUE(DescribeReplica(client.get(), &remote));
  const std::string segment = Pattern(remote.size);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(Eventually([&] { return server_->stats().spinner_blocked; }))
        << round;
    uint64_t blocks = server_->stats().spinner_blocks;
    // Without a knock it would sleep a minute: past the request timeout.
    auto started = Clock::now();
    std::string reply;
    ASSERT_TRUE(client->Call("knock knock", &reply).ok()) << round;
    EXPECT_EQ(reply, Reversed("knock knock"));
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(2)) << round;
    EXPECT_GT(server_->stats().spinner_blocks, blocks) << round;

    ASSERT_TRUE(Eventually([&] { return server_->stats().spinner_blocked; }))
        << round;
    blocks = server_->stats().spinner_blocks;
    started = Clock::now();
    bool written = false;
    ASSERT_TRUE(client
                    ->WriteRemote(remote, 0, segment,
                                  [&](Status status) {
                                    EXPECT_TRUE(status.ok())
                                        << status.ToString();
                                    written = true;
                                  })
                    .ok());
    while (!written && client->health().ok()) client->Poll();
    ASSERT_TRUE(written) << client->health().ToString();
    // The knock woke the server (over shm the write completes without its
    // progress, so the next round must not find it still in this block).
    ASSERT_TRUE(Eventually([&] {
      return server_->stats().spinner_blocks > blocks;
    })) << round;
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(2)) << round;
  }
  std::string crc;
  ASSERT_TRUE(
      client->Call("crc 0 " + std::to_string(segment.size()), &crc).ok());
  EXPECT_EQ(crc, std::to_string(crc32c::Value(segment.data(), segment.size())));
  EXPECT_GT(client->stats().knocks, 0u);
  EXPECT_GE(server_->stats().spinner_blocks, 6u);
  // A departing client's half-close wakes the blocked server too.
  ASSERT_TRUE(Eventually([&] { return server_->stats().spinner_blocked; }));
  client.reset();
  EXPECT_TRUE(
      Eventually([&] { return server_->stats().connections_open == 0; }));
}

// A peer's one-sided writes cannot be recalled (and shm performs writes
// into memory that is no longer registered), so a replica buffer lives as
// long as its connection: a write after its user let it go lands in it, and
// the same set asked for again on the connection is that memory, zeroed.
TEST_P(ChannelTest, AReplicaBufferLivesAsLongAsItsConnection) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::string described;
  ASSERT_TRUE(client->Call("replica", &described).ok());
  fabric::RemoteBuffer remote;
  std::istringstream fields(described);
  ASSERT_TRUE(fields >> remote.address >> remote.key >> remote.size);
  std::string reply;
  ASSERT_TRUE(client->Call("drop replica", &reply).ok());
  ASSERT_EQ(reply, "dropped");
  int completed = 0;
  ASSERT_TRUE(client
                  ->WriteRemote(remote, 4096, std::string(1000, 'x'),
                                [&](Status status) {
                                  EXPECT_TRUE(status.ok()) << status.ToString();
                                  ++completed;
                                })
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    client->Poll();
    return completed == 1;
  }));
  EXPECT_TRUE(client->health().ok()) << client->health().ToString();
  std::string again;
  ASSERT_TRUE(client->Call("replica", &again).ok());
  EXPECT_EQ(again, described);  // the same registered memory
  ASSERT_TRUE(client->Call("crc 4096 1000", &reply).ok());
  EXPECT_EQ(reply, std::to_string(
                       crc32c::Value(std::string(1000, '\0').data(), 1000)));
}

// A peer that writes a well-sealed but wrong message (a reply slot outside
// its reply buffer) is disconnected; other clients are served on.
TEST_P(ChannelTest, AMalformedMessageClosesOnlyItsConnection) {
  if (GetParam() == fabric::Provider::kStream) {
    GTEST_SKIP()
        << "one-sided messages: AMalformedFrameClosesOnlyItsConnection";
  }
  auto good = NewClient();
  ASSERT_NE(good, nullptr);
  std::unique_ptr<fabric::Endpoint> endpoint;
  ASSERT_TRUE(fabric::Endpoint::Open(EndpointOptions(), &endpoint).ok());
  io::AlignedBuffer buffer(8192);
  std::memset(buffer.data(), 0, buffer.size());
  std::unique_ptr<fabric::MemoryRegion> region;
  ASSERT_TRUE(endpoint->Register(buffer.data(), buffer.size(), &region).ok());
  int socket = -1;
  ASSERT_TRUE(
      Connect("127.0.0.1", server_->port(), std::chrono::seconds(2), &socket)
          .ok());
  Challenge challenge;
  ASSERT_TRUE(ReadChallenge(socket, std::chrono::seconds(2), &challenge).ok());
  Hello hello;
  hello.provider = GetParam();
  hello.address = endpoint->address();
  hello.reply_buffer = {region->RemoteAddress(4096), region->key(), 4096};
  hello.request_buffer_bytes = 4096;
  ASSERT_TRUE(
      WriteAll(socket, EncodeHello(hello), std::chrono::seconds(2)).ok());
  Welcome welcome;
  ASSERT_TRUE(ReadWelcome(socket, std::chrono::seconds(2), &welcome).ok());
  ASSERT_TRUE(welcome.status.ok());
  fi_addr_t server = 0;
  ASSERT_TRUE(endpoint->AddPeer(welcome.address, &server).ok());
  MessageHeader header;
  header.kind = MessageKind::kRequest;
  header.reply_offset = 1 << 20;  // beyond the 4 KiB reply buffer
  header.reply_capacity = 512;
  EncodeMessage(header, "bad", buffer.data());
  bool written = false;
  ASSERT_TRUE(endpoint
                  ->PostWrite(server, buffer.data(), MessageBytes(3), *region,
                              welcome.request_buffer.address,
                              welcome.request_buffer.key,
                              [&](Status) { written = true; })
                  .ok());
  EXPECT_TRUE(Eventually([&] {
    endpoint->Progress();
    return server_->stats().malformed == 1;
  }));
  EXPECT_TRUE(Eventually([&] { return PeerClosed(socket); }));
  ::close(socket);
  std::string reply;
  EXPECT_TRUE(good->Call("still here", &reply).ok());
  EXPECT_EQ(reply, Reversed("still here"));
}

INSTANTIATE_TEST_SUITE_P(Providers, ChannelTest,
                         ::testing::Values(fabric::Provider::kShm,
                                           fabric::Provider::kTcp,
                                           fabric::Provider::kStream),
                         [](const auto& param_info) {
                           return std::string(
                               fabric::ProviderName(param_info.param));
                         });

TEST(ChannelBootstrapTest, SomethingThatIsNotAServerIsAClearError) {
  ClientOptions options;
  std::unique_ptr<Client> client;
  // Nothing listens on port 1.
  const Status status = Client::Connect(options, "127.0.0.1", 1, &client);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("connect"), std::string_view::npos)
      << status.ToString();
}

}  // namespace
}  // namespace kvs::channel
