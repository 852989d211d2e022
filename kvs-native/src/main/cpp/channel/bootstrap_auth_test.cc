// The fabric bootstrap's authentication: the proofs, the challenge format,
// and a real Server admitting clients by the client secret and peers by the
// cluster secret, refusing everyone else while it serves the rest, and never
// waiting on a peer that connects and says nothing.

#include "channel/bootstrap_auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "channel/bootstrap.h"
#include "channel/client.h"
#include "channel/server.h"

namespace kvs::channel {
namespace {

const std::string kSecret(32, '\x5a');        // the cluster's
const std::string kClientSecret(32, '\x3c');  // the applications'
const std::string kOtherSecret(32, '\xa5');

TEST(BootstrapAuthTest, AProofVerifiesOnlyForItsSecretPurposeAndNonces) {
  const std::string a = RandomNonce(), b = RandomNonce();
  ASSERT_EQ(a.size(), kNonceBytes);
  EXPECT_NE(a, b);
  const std::string_view hello = HelloPurpose(ConnectionKind::kClient);
  const std::string proof = Prove(kSecret, hello, a, b);
  ASSERT_EQ(proof.size(), kProofBytes);
  EXPECT_TRUE(Verify(proof, kSecret, hello, a, b));
  EXPECT_FALSE(Verify(proof, kOtherSecret, hello, a, b));
  EXPECT_FALSE(
      Verify(proof, kSecret, WelcomePurpose(ConnectionKind::kClient), a, b));
  // A client's proof is no peer's, even under the same secret.
  EXPECT_FALSE(
      Verify(proof, kSecret, HelloPurpose(ConnectionKind::kPeer), a, b));
  EXPECT_FALSE(Verify(proof, kSecret, hello, b, a));
  EXPECT_FALSE(Verify(proof.substr(1), kSecret, hello, a, b));
  // No secret: the proof is zeros and proves nothing.
  EXPECT_EQ(Prove("", hello, a, b), std::string(kProofBytes, '\0'));
  EXPECT_FALSE(Verify(std::string(kProofBytes, '\0'), "", hello, a, b));
}

TEST(BootstrapAuthTest, AChallengeRoundTripsAndDamageIsDetected) {
  Challenge sent;
  sent.client_proof_required = true;
  sent.nonce = RandomNonce();
  const std::string bytes = EncodeChallenge(sent);
  ASSERT_EQ(bytes.size(), kChallengeBytes);
  Challenge read;
  ASSERT_TRUE(DecodeChallenge(bytes, &read).ok());
  EXPECT_TRUE(read.client_proof_required);
  EXPECT_FALSE(read.peer_proof_required);
  EXPECT_EQ(read.nonce, sent.nonce);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x01);
    EXPECT_FALSE(DecodeChallenge(damaged, &read).ok()) << "byte " << i;
  }
  EXPECT_FALSE(DecodeChallenge(bytes.substr(1), &read).ok());
  // A challenge of another version (another release) is refused naming both.
  std::string newer = bytes;
  newer[4] = static_cast<char>(newer[4] + 1);
  const Status refused = DecodeChallenge(newer, &read);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find(
                "of version " + std::to_string(static_cast<uint8_t>(newer[4])) +
                "; this end speaks version"),
            std::string_view::npos)
      << refused.ToString();
}

TEST(BootstrapAuthTest, SecretsOutsideTheBoundsAreRefused) {
  EXPECT_TRUE(CheckSecret("").ok());
  EXPECT_TRUE(CheckSecret(kSecret).ok());
  EXPECT_FALSE(CheckSecret("short").ok());
  EXPECT_FALSE(CheckSecret(std::string(kSecretBytesMax + 1, 'x')).ok());
}

class Echo : public RequestHandler {
 public:
  void Handle(Session*, std::string_view request, std::string* reply) override {
    reply->assign(request);
  }
};

class AuthenticatedServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.secret = kSecret;
    options.client_secret = kClientSecret;
    ASSERT_TRUE(Server::Start(options, &handler_, &server_).ok());
  }

  Status Connect(const std::string& secret, uint16_t port,
                 std::unique_ptr<Client>* client,
                 ConnectionKind kind = ConnectionKind::kClient) {
    ClientOptions options;
    options.kind = kind;
    options.secret = secret;
    return Client::Connect(options, "127.0.0.1", port, client);
  }

  Echo handler_;
  std::unique_ptr<Server> server_;
};

TEST_F(AuthenticatedServerTest, AClientWithTheSecretIsServed) {
  std::unique_ptr<Client> client;
  const Status status = Connect(kClientSecret, server_->port(), &client);
  ASSERT_TRUE(status.ok()) << status.ToString();
  std::string reply;
  ASSERT_TRUE(client->Call("hello", &reply).ok());
  EXPECT_EQ(reply, "hello");
  EXPECT_EQ(server_->stats().connections_refused, 0u);
}

TEST_F(AuthenticatedServerTest, APeerWithTheClusterSecretIsServed) {
  std::unique_ptr<Client> peer;
  const Status status =
      Connect(kSecret, server_->port(), &peer, ConnectionKind::kPeer);
  ASSERT_TRUE(status.ok()) << status.ToString();
  std::string reply;
  ASSERT_TRUE(peer->Call("replicate", &reply).ok());
  EXPECT_EQ(reply, "replicate");
}

// The two credentials are separate: the client secret never makes a peer,
// and the cluster secret is not what a client proves.
TEST_F(AuthenticatedServerTest, EachKindMustProveItsOwnSecret) {
  std::unique_ptr<Client> connection;
  const Status client_as_peer = Connect(kClientSecret, server_->port(),
                                        &connection, ConnectionKind::kPeer);
  ASSERT_FALSE(client_as_peer.ok());
  EXPECT_NE(client_as_peer.message().find("cluster's secret"),
            std::string_view::npos)
      << client_as_peer.ToString();
  const Status cluster_as_client =
      Connect(kSecret, server_->port(), &connection, ConnectionKind::kClient);
  ASSERT_FALSE(cluster_as_client.ok());
  EXPECT_NE(cluster_as_client.message().find("client secret"),
            std::string_view::npos)
      << cluster_as_client.ToString();
  EXPECT_EQ(server_->stats().connections_refused, 2u);
}

TEST_F(AuthenticatedServerTest, AWrongSecretIsRefusedAndOthersServedOn) {
  std::unique_ptr<Client> good;
  ASSERT_TRUE(Connect(kClientSecret, server_->port(), &good).ok());
  std::unique_ptr<Client> stranger;
  const Status refused = Connect(kOtherSecret, server_->port(), &stranger);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("authentication failed"),
            std::string_view::npos)
      << refused.ToString();
  EXPECT_EQ(stranger, nullptr);
  EXPECT_EQ(server_->stats().connections_refused, 1u);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  std::string reply;
  ASSERT_TRUE(good->Call("still here", &reply).ok());
  EXPECT_EQ(reply, "still here");
}

TEST_F(AuthenticatedServerTest, AClientWithoutTheSecretIsToldWhy) {
  std::unique_ptr<Client> client;
  const Status refused = Connect("", server_->port(), &client);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("requires the client secret"),
            std::string_view::npos)
      << refused.ToString();
}

// A peer that connects and sends nothing (or half a Hello) holds up nobody:
// handshakes run side by side, each bounded by the bootstrap timeout.
TEST_F(AuthenticatedServerTest, ASilentPeerDelaysNobody) {
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) {
    int socket = -1;
    ASSERT_TRUE(channel::Connect("127.0.0.1", server_->port(),
                                 std::chrono::seconds(2), &socket)
                    .ok());
    if (i % 2 == 1) {
      const std::string half = EncodeHello(Hello()).substr(0, 12);
      ASSERT_TRUE(WriteAll(socket, half, std::chrono::seconds(2)).ok());
    }
    silent.push_back(socket);
  }
  // Well under the 2 s bootstrap timeout any one of them could hold a
  // one-at-a-time acceptor for.
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<Client> client;
  const Status status = Connect(kClientSecret, server_->port(), &client);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  std::string reply;
  ASSERT_TRUE(client->Call("prompt", &reply).ok());
  for (const int socket : silent) ::close(socket);
}

// A stranger that skips the proof (zeros) learns no endpoint address or key.
TEST_F(AuthenticatedServerTest, AHelloWithoutAProofGetsNoAddressOrKey) {
  int socket = -1;
  ASSERT_TRUE(channel::Connect("127.0.0.1", server_->port(),
                               std::chrono::seconds(2), &socket)
                  .ok());
  Challenge challenge;
  ASSERT_TRUE(ReadChallenge(socket, std::chrono::seconds(2), &challenge).ok());
  EXPECT_TRUE(challenge.client_proof_required);
  EXPECT_TRUE(challenge.peer_proof_required);
  Hello hello;
  hello.address = "anything";
  hello.reply_buffer = {4096, 1, 4096};
  hello.request_buffer_bytes = 4096;
  ASSERT_TRUE(
      WriteAll(socket, EncodeHello(hello), std::chrono::seconds(2)).ok());
  Welcome welcome;
  ASSERT_TRUE(ReadWelcome(socket, std::chrono::seconds(2), &welcome).ok());
  ::close(socket);
  EXPECT_FALSE(welcome.status.ok());
  EXPECT_TRUE(welcome.address.empty());
  EXPECT_EQ(welcome.request_buffer.key, 0u);
  EXPECT_EQ(welcome.request_buffer.address, 0u);
}

TEST(BootstrapAuthServerTest, AClientWithASecretRefusesAServerWithout) {
  Echo handler;
  std::unique_ptr<Server> open_server;
  ASSERT_TRUE(Server::Start(ServerOptions(), &handler, &open_server).ok());
  ClientOptions options;
  options.secret = kClientSecret;
  std::unique_ptr<Client> client;
  const Status refused =
      Client::Connect(options, "127.0.0.1", open_server->port(), &client);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("cannot prove"), std::string_view::npos)
      << refused.ToString();
  // Without a secret on either side, as before.
  ASSERT_TRUE(Client::Connect(ClientOptions(), "127.0.0.1", open_server->port(),
                              &client)
                  .ok());
}

}  // namespace
}  // namespace kvs::channel
