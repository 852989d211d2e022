// The fabric bootstrap's authentication by the cluster secret: the proofs,
// the challenge format, and a real Server refusing clients without the
// secret while it serves the ones that hold it.

#include "channel/bootstrap_auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "channel/bootstrap.h"
#include "channel/client.h"
#include "channel/server.h"

namespace kvs::channel {
namespace {

const std::string kSecret(32, '\x5a');
const std::string kOtherSecret(32, '\xa5');

TEST(BootstrapAuthTest, AProofVerifiesOnlyForItsSecretPurposeAndNonces) {
  const std::string a = RandomNonce(), b = RandomNonce();
  ASSERT_EQ(a.size(), kNonceBytes);
  EXPECT_NE(a, b);
  const std::string proof = Prove(kSecret, kHelloPurpose, a, b);
  ASSERT_EQ(proof.size(), kProofBytes);
  EXPECT_TRUE(Verify(proof, kSecret, kHelloPurpose, a, b));
  EXPECT_FALSE(Verify(proof, kOtherSecret, kHelloPurpose, a, b));
  EXPECT_FALSE(Verify(proof, kSecret, kWelcomePurpose, a, b));
  EXPECT_FALSE(Verify(proof, kSecret, kHelloPurpose, b, a));
  EXPECT_FALSE(Verify(proof.substr(1), kSecret, kHelloPurpose, a, b));
  // No secret: the proof is zeros and proves nothing.
  EXPECT_EQ(Prove("", kHelloPurpose, a, b), std::string(kProofBytes, '\0'));
  EXPECT_FALSE(Verify(std::string(kProofBytes, '\0'), "", kHelloPurpose, a, b));
}

TEST(BootstrapAuthTest, AChallengeRoundTripsAndDamageIsDetected) {
  Challenge sent;
  sent.proof_required = true;
  sent.nonce = RandomNonce();
  const std::string bytes = EncodeChallenge(sent);
  ASSERT_EQ(bytes.size(), kChallengeBytes);
  Challenge read;
  ASSERT_TRUE(DecodeChallenge(bytes, &read).ok());
  EXPECT_TRUE(read.proof_required);
  EXPECT_EQ(read.nonce, sent.nonce);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x01);
    EXPECT_FALSE(DecodeChallenge(damaged, &read).ok()) << "byte " << i;
  }
  EXPECT_FALSE(DecodeChallenge(bytes.substr(1), &read).ok());
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
    ASSERT_TRUE(Server::Start(options, &handler_, &server_).ok());
  }

  Status Connect(const std::string& secret, uint16_t port,
                 std::unique_ptr<Client>* client) {
    ClientOptions options;
    options.secret = secret;
    return Client::Connect(options, "127.0.0.1", port, client);
  }

  Echo handler_;
  std::unique_ptr<Server> server_;
};

TEST_F(AuthenticatedServerTest, AClientWithTheSecretIsServed) {
  std::unique_ptr<Client> client;
  const Status status = Connect(kSecret, server_->port(), &client);
  ASSERT_TRUE(status.ok()) << status.ToString();
  std::string reply;
  ASSERT_TRUE(client->Call("hello", &reply).ok());
  EXPECT_EQ(reply, "hello");
  EXPECT_EQ(server_->stats().connections_refused, 0u);
}

TEST_F(AuthenticatedServerTest, AWrongSecretIsRefusedAndOthersServedOn) {
  std::unique_ptr<Client> good;
  ASSERT_TRUE(Connect(kSecret, server_->port(), &good).ok());
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
  EXPECT_NE(refused.message().find("requires the cluster secret"),
            std::string_view::npos)
      << refused.ToString();
}

// A stranger that skips the proof (zeros) learns no endpoint address or key.
TEST_F(AuthenticatedServerTest, AHelloWithoutAProofGetsNoAddressOrKey) {
  int socket = -1;
  ASSERT_TRUE(channel::Connect("127.0.0.1", server_->port(),
                               std::chrono::seconds(2), &socket)
                  .ok());
  Challenge challenge;
  ASSERT_TRUE(ReadChallenge(socket, std::chrono::seconds(2), &challenge).ok());
  EXPECT_TRUE(challenge.proof_required);
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
  options.secret = kSecret;
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
