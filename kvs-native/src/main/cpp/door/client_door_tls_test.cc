// The native client door with TLS, over sockets: a TLS client is served
// (the client handshake inside TLS, requests both ways, large replies
// bounded by the output bound), a plaintext client and one without the
// certificate mutual TLS requires are refused while the others are served
// on, a silent one is closed at the deadline, and a bad PEM file stops the
// door from starting with a message naming it. client_door_test.cc tests
// the door's plain TCP; tls_session_test.cc the TLS session alone.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "channel/bootstrap.h"
#include "channel/bootstrap_auth.h"
#include "door/client_door.h"
#include "door/client_handshake.h"
#include "testing/eventually.h"
#include "testing/test_certificates.h"
#include "util/coding.h"

namespace kvs::door {
namespace {

using testing::CertificateFiles;
using testing::Eventually;
using testing::TestCertificates;

// Echoes a request reversed; one starting with '#' is answered with that
// many bytes.
class EchoHandler : public channel::RequestHandler {
 public:
  void Handle(channel::Session*, std::string_view request,
              std::string* reply) override {
    reply->assign(request.rbegin(), request.rend());
  }
  void HandleAsync(channel::Session* session, std::string_view request,
                   Respond respond) override {
    handled_.fetch_add(1);
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
  std::atomic<uint64_t> handled_{0};
};

// A blocking socket to the door, reads bounded by a 10 s timeout.
int Dial(uint16_t port) {
  int socket = -1;
  EXPECT_TRUE(
      channel::Connect("127.0.0.1", port, std::chrono::seconds(5), &socket)
          .ok());
  ::fcntl(socket, F_SETFL, ::fcntl(socket, F_GETFL) & ~O_NONBLOCK);
  struct timeval timeout {};
  timeout.tv_sec = 10;
  ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return socket;
}

// A blocking TLS client of the door (OpenSSL), trusting `authority` and
// checking the server is "localhost", presenting `identity` if given.
class TlsClient {
 public:
  TlsClient(uint16_t port, const std::string& authority,
            const CertificateFiles* identity)
      : socket_(Dial(port)) {
    context_ = SSL_CTX_new(TLS_client_method());
    EXPECT_EQ(SSL_CTX_load_verify_file(context_, authority.c_str()), 1);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    if (identity != nullptr) {
      EXPECT_EQ(SSL_CTX_use_certificate_chain_file(
                    context_, identity->certificate.c_str()),
                1);
      EXPECT_EQ(SSL_CTX_use_PrivateKey_file(
                    context_, identity->private_key.c_str(), SSL_FILETYPE_PEM),
                1);
    }
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, socket_);
    SSL_set1_host(ssl_, "localhost");
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
    ::close(socket_);
    ERR_clear_error();
  }

  // The TLS handshake; false if it failed.
  bool Connect() { return SSL_connect(ssl_) == 1; }
  void Send(std::string_view body) {
    std::string frame;
    coding::PutFixed32(&frame, static_cast<uint32_t>(body.size()));
    frame.append(body);
    ASSERT_EQ(SSL_write(ssl_, frame.data(), static_cast<int>(frame.size())),
              static_cast<int>(frame.size()));
  }
  // The next frame's body; "<closed>" if the connection closed or failed.
  std::string Receive() {
    std::string head = ReadExactly(4);
    if (head.size() < 4) return "<closed>";
    return ReadExactly(coding::DecodeFixed32(head.data()));
  }
  // The client handshake inside TLS, with no secret; the Admission's
  // status (255 if none came).
  uint8_t Handshake() {
    channel::Challenge challenge;
    if (!channel::DecodeChallenge(Receive(), &challenge).ok()) return 255;
    Hello hello;
    hello.nonce = channel::RandomNonce();
    hello.proof = std::string(channel::kProofBytes, '\0');
    Send(EncodeHello(hello));
    uint8_t status = 255;
    std::string message, proof;
    if (!DecodeAdmission(Receive(), &status, &message, &proof).ok()) {
      return 255;
    }
    return status;
  }

 private:
  std::string ReadExactly(size_t size) {
    std::string out(size, '\0');
    size_t got = 0;
    while (got < size) {
      const int n =
          SSL_read(ssl_, out.data() + got, static_cast<int>(size - got));
      if (n <= 0) return out.substr(0, got);  // closed, failed, or the timeout
      got += static_cast<size_t>(n);
    }
    return out;
  }

  int socket_ = -1;
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
};

class ClientDoorTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(TestCertificates::Create(::testing::TempDir(), &ca_).ok());
    ASSERT_TRUE(ca_.Issue("server", &server_).ok());
    ASSERT_TRUE(ca_.Issue("client", &client_).ok());
  }

  std::unique_ptr<ClientDoor> Open(bool require_client_auth,
                                   ClientDoorOptions options = {}) {
    options.tls = TlsFiles{server_.certificate, server_.private_key,
                           ca_.authority(), require_client_auth};
    std::unique_ptr<ClientDoor> door;
    const Status status = ClientDoor::Start(&handler_, options, &door);
    EXPECT_TRUE(status.ok()) << status.message();
    return door;
  }

  EchoHandler handler_;
  TestCertificates ca_;
  CertificateFiles server_, client_;
};

TEST_F(ClientDoorTlsTest, ATlsClientIsServedAndAPlaintextOneRefused) {
  ClientDoorOptions options;
  options.shards = 2;
  std::unique_ptr<ClientDoor> door = Open(false, options);
  TlsClient first(door->port(), ca_.authority(), nullptr);
  ASSERT_TRUE(first.Connect());
  EXPECT_EQ(first.Handshake(), 0);
  first.Send("abc");
  EXPECT_EQ(first.Receive(), "cba");
  // A plaintext client's Hello frame is no ClientHello: it is closed.
  const int plain = Dial(door->port());
  std::string frame;
  Hello hello{channel::RandomNonce(), std::string(channel::kProofBytes, '\0')};
  coding::PutFixed32(&frame, kHelloBytes);
  frame += EncodeHello(hello);
  ASSERT_TRUE(channel::WriteAll(plain, frame, std::chrono::seconds(10)).ok());
  char byte;
  ssize_t n;
  while ((n = ::recv(plain, &byte, 1, 0)) > 0) {
  }  // an alert may come first; then the end
  EXPECT_EQ(n, 0);
  ::close(plain);
  EXPECT_EQ(door->stats().refusals, 1u);
  EXPECT_EQ(handler_.handled(), 1u);
  // Everyone else is served on, on either shard.
  TlsClient second(door->port(), ca_.authority(), nullptr);
  ASSERT_TRUE(second.Connect());
  EXPECT_EQ(second.Handshake(), 0);
  second.Send("xyz");
  first.Send("def");
  EXPECT_EQ(second.Receive(), "zyx");
  EXPECT_EQ(first.Receive(), "fed");
  EXPECT_EQ(door->stats().requests, 3u);
}

TEST_F(ClientDoorTlsTest, MutualTlsRefusesAClientWithoutACertificate) {
  std::unique_ptr<ClientDoor> door = Open(true);
  TlsClient good(door->port(), ca_.authority(), &client_);
  ASSERT_TRUE(good.Connect());
  EXPECT_EQ(good.Handshake(), 0);
  {
    // With TLS 1.3 the client finishes its side before the server checks
    // its (missing) certificate: the refusal shows when it reads.
    TlsClient anonymous(door->port(), ca_.authority(), nullptr);
    anonymous.Connect();
    EXPECT_EQ(anonymous.Receive(), "<closed>");
  }
  {
    CertificateFiles stranger;
    ASSERT_TRUE(ca_.Issue("stranger", &stranger, /*self_signed=*/true).ok());
    TlsClient impostor(door->port(), ca_.authority(), &stranger);
    impostor.Connect();
    EXPECT_EQ(impostor.Receive(), "<closed>");
  }
  EXPECT_TRUE(Eventually([&] { return door->stats().refusals == 2; }));
  EXPECT_EQ(handler_.handled(), 0u);
  good.Send("still");
  EXPECT_EQ(good.Receive(), "llits");
}

TEST_F(ClientDoorTlsTest, ASilentClientIsClosedAtTheDeadline) {
  ClientDoorOptions options;
  options.handshake_timeout = std::chrono::milliseconds(100);
  std::unique_ptr<ClientDoor> door = Open(false, options);
  const int silent = Dial(door->port());  // never sends its ClientHello
  char byte;
  EXPECT_EQ(::recv(silent, &byte, 1, 0), 0);
  ::close(silent);
  EXPECT_EQ(door->stats().refusals, 1u);
  EXPECT_TRUE(Eventually([&] { return door->stats().connections == 0; }));
}

TEST_F(ClientDoorTlsTest, AClientThatNeverReadsStopsBeingRead) {
  std::unique_ptr<ClientDoor> door = Open(false);
  TlsClient greedy(door->port(), ca_.authority(), nullptr);
  ASSERT_TRUE(greedy.Connect());
  EXPECT_EQ(greedy.Handshake(), 0);
  // 2000 requests for 64 KiB each (128 MiB) in ~20 KiB the socket holds:
  // the door stops once the replies not read pass the output bound.
  constexpr int kRequests = 2000;
  for (int i = 0; i < kRequests; ++i) greedy.Send("#65536");
  EXPECT_TRUE(Eventually([&] { return door->stats().output_stalls >= 1; }));
  const uint64_t handled = handler_.handled();
  EXPECT_LT(handled, static_cast<uint64_t>(kRequests) / 2);
  // Reading resumes it: every request is answered.
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_EQ(greedy.Receive().size(), 65536u) << "reply " << i;
  }
  EXPECT_EQ(handler_.handled(), static_cast<uint64_t>(kRequests));
}

TEST_F(ClientDoorTlsTest, ABrokenPemFileStopsTheStartNamingIt) {
  const std::string garbage = ca_.directory() + "/garbage.pem";
  std::ofstream(garbage) << "not PEM\n";
  ClientDoorOptions options;
  options.tls = TlsFiles{server_.certificate, garbage, ca_.authority(), false};
  std::unique_ptr<ClientDoor> door;
  const Status status = ClientDoor::Start(&handler_, options, &door);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find(garbage), std::string::npos)
      << status.message();
  EXPECT_EQ(door, nullptr);
}

}  // namespace
}  // namespace kvs::door
