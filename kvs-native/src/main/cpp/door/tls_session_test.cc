// TlsContext and TlsSession without sockets: a TLS client (OpenSSL, over
// memory buffers too) and a session trade bytes by hand, so each test
// decides exactly what reaches the other side. The door's own tests over
// sockets are in client_door_tls_test.cc.

#include "door/tls_session.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fstream>
#include <memory>
#include <string>

#include "testing/test_certificates.h"

namespace kvs::door {
namespace {

using testing::CertificateFiles;
using testing::TestCertificates;

// A TLS client over memory buffers, trusting `authority`, presenting
// `identity` if given.
class MemoryClient {
 public:
  MemoryClient(const std::string& authority, const CertificateFiles* identity) {
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
    input_ = BIO_new(BIO_s_mem());
    output_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(input_, -1);
    SSL_set_bio(ssl_, input_, output_);
    SSL_set1_host(ssl_, "localhost");  // the server's name is checked too
    SSL_set_connect_state(ssl_);
  }
  ~MemoryClient() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
  }

  // One step of the handshake: true once it completed.
  bool Step() { return SSL_do_handshake(ssl_) == 1; }
  // What the client wrote, for the server.
  std::string Take() {
    std::string bytes(BIO_ctrl_pending(output_), '\0');
    if (!bytes.empty()) BIO_read(output_, bytes.data(), bytes.size());
    return bytes;
  }
  void Give(std::string_view bytes) {
    BIO_write(input_, bytes.data(), static_cast<int>(bytes.size()));
  }
  void Write(std::string_view plaintext) {
    ASSERT_EQ(
        SSL_write(ssl_, plaintext.data(), static_cast<int>(plaintext.size())),
        static_cast<int>(plaintext.size()));
  }
  // Everything it can decrypt of what it was given.
  std::string Read() {
    std::string plaintext;
    char buffer[16384];
    int n;
    while ((n = SSL_read(ssl_, buffer, sizeof buffer)) > 0) {
      plaintext.append(buffer, static_cast<size_t>(n));
    }
    ERR_clear_error();
    return plaintext;
  }
  SSL* ssl() { return ssl_; }

 private:
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* input_ = nullptr;
  BIO* output_ = nullptr;
};

class TlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(TestCertificates::Create(::testing::TempDir(), &ca_).ok());
    ASSERT_TRUE(ca_.Issue("server", &server_).ok());
    ASSERT_TRUE(ca_.Issue("client", &client_).ok());
  }

  TlsFiles Files(bool require_client_auth) const {
    return TlsFiles{server_.certificate, server_.private_key, ca_.authority(),
                    require_client_auth};
  }

  std::unique_ptr<TlsSession> Session(bool require_client_auth) {
    EXPECT_TRUE(TlsContext::Create(Files(require_client_auth), &context_).ok());
    std::unique_ptr<TlsSession> session;
    EXPECT_TRUE(TlsSession::Create(*context_, &session).ok());
    return session;
  }

  // Trades handshake messages until both ends are done or the server
  // fails (bounded: a TLS handshake takes a few flights); the server's
  // last Status.
  static Status Handshake(MemoryClient* client, TlsSession* server,
                          std::string* plaintext) {
    Status status;
    for (int flight = 0; flight < 8; ++flight) {
      const bool client_done = client->Step();
      status = server->Receive(client->Take(), plaintext);
      client->Give(server->output());
      server->Sent(server->output().size());
      if (!status.ok() || (client_done && server->established())) break;
    }
    ERR_clear_error();
    return status;
  }

  static std::string Contents(const std::string& path) {
    std::ifstream file(path);
    return std::string(std::istreambuf_iterator<char>(file), {});
  }

  TestCertificates ca_;
  CertificateFiles server_, client_;
  std::unique_ptr<TlsContext> context_;
};

TEST_F(TlsSessionTest, AClientIsServedBothWays) {
  std::unique_ptr<TlsSession> server = Session(false);
  MemoryClient client(ca_.authority(), nullptr);
  std::string plaintext;
  // Nothing is encrypted before the handshake completes.
  size_t taken = 99;
  ASSERT_TRUE(server->Encrypt("early", &taken).ok());
  EXPECT_EQ(taken, 0u);
  ASSERT_TRUE(Handshake(&client, server.get(), &plaintext).ok());
  EXPECT_TRUE(server->established());
  EXPECT_TRUE(plaintext.empty());
  client.Write("a request");
  ASSERT_TRUE(server->Receive(client.Take(), &plaintext).ok());
  EXPECT_EQ(plaintext, "a request");
  ASSERT_TRUE(server->Encrypt("its reply", &taken).ok());
  EXPECT_EQ(taken, 9u);
  client.Give(server->output());
  server->Sent(server->output().size());
  EXPECT_EQ(client.Read(), "its reply");
  // The client says it closes.
  SSL_shutdown(client.ssl());
  ASSERT_TRUE(server->Receive(client.Take(), &plaintext).ok());
  EXPECT_TRUE(server->peer_closed());
}

TEST_F(TlsSessionTest, EncryptsOnlyABoundedAmountAheadOfTheSocket) {
  std::unique_ptr<TlsSession> server = Session(false);
  MemoryClient client(ca_.authority(), nullptr);
  std::string plaintext;
  ASSERT_TRUE(Handshake(&client, server.get(), &plaintext).ok());
  std::string reply(1u << 20, '\0');
  for (size_t i = 0; i < reply.size(); ++i) reply[i] = static_cast<char>(i);
  size_t encrypted = 0, taken = 0;
  ASSERT_TRUE(server->Encrypt(reply, &taken).ok());
  EXPECT_GT(taken, 0u);
  EXPECT_LT(taken, reply.size());
  // One record (16 KiB and its overhead) beyond the bound at most.
  EXPECT_LT(server->output().size(),
            TlsSession::kCiphertextAheadBytes + (17u << 10));
  // The socket took nothing: nothing more is taken.
  size_t more = 99;
  ASSERT_TRUE(server->Encrypt(reply.substr(taken), &more).ok());
  EXPECT_EQ(more, 0u);
  encrypted += taken;
  std::string received;
  while (encrypted < reply.size()) {
    client.Give(server->output());
    server->Sent(server->output().size());
    received += client.Read();
    ASSERT_TRUE(server->Encrypt(reply.substr(encrypted), &taken).ok());
    ASSERT_GT(taken, 0u);
    encrypted += taken;
  }
  client.Give(server->output());
  server->Sent(server->output().size());
  received += client.Read();
  EXPECT_TRUE(received == reply);
}

TEST_F(TlsSessionTest, APlaintextPeerFailsTheHandshake) {
  std::unique_ptr<TlsSession> server = Session(false);
  std::string plaintext;
  // A client handshake Hello frame, not a ClientHello.
  const Status status =
      server->Receive(std::string("\x4c\0\0\0hello", 9), &plaintext);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("TLS handshake failed"), std::string::npos)
      << status.message();
  EXPECT_FALSE(server->established());
  EXPECT_TRUE(plaintext.empty());
  // Dead: nothing more is taken either way.
  size_t taken = 99;
  EXPECT_TRUE(server->Encrypt("x", &taken).ok());
  EXPECT_EQ(taken, 0u);
  EXPECT_FALSE(server->Receive("more", &plaintext).ok());
}

TEST_F(TlsSessionTest, ACorruptRecordIsRefused) {
  std::unique_ptr<TlsSession> server = Session(false);
  MemoryClient client(ca_.authority(), nullptr);
  std::string plaintext;
  ASSERT_TRUE(Handshake(&client, server.get(), &plaintext).ok());
  client.Write("a request");
  std::string record = client.Take();
  record[record.size() - 3] ^= 0x40;  // inside the authentication tag
  const Status status = server->Receive(record, &plaintext);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("TLS record refused"), std::string::npos)
      << status.message();
  EXPECT_TRUE(plaintext.empty());
  EXPECT_FALSE(server->output().empty());  // the alert telling the client
}

TEST_F(TlsSessionTest, MutualTlsServesOnlyClientsWithACertificateFromTheCa) {
  {
    std::unique_ptr<TlsSession> server = Session(true);
    MemoryClient client(ca_.authority(), &client_);
    std::string plaintext;
    EXPECT_TRUE(Handshake(&client, server.get(), &plaintext).ok());
    EXPECT_TRUE(server->established());
  }
  {
    std::unique_ptr<TlsSession> server = Session(true);
    MemoryClient anonymous(ca_.authority(), nullptr);
    std::string plaintext;
    const Status status = Handshake(&anonymous, server.get(), &plaintext);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("certificate"), std::string::npos)
        << status.message();
    EXPECT_FALSE(server->established());
  }
  {
    CertificateFiles stranger;
    ASSERT_TRUE(ca_.Issue("stranger", &stranger, /*self_signed=*/true).ok());
    std::unique_ptr<TlsSession> server = Session(true);
    MemoryClient client(ca_.authority(), &stranger);
    std::string plaintext;
    const Status status = Handshake(&client, server.get(), &plaintext);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("certificate"), std::string::npos)
        << status.message();
  }
}

TEST_F(TlsSessionTest, TheKeyFileIsPkcs8) {
  EXPECT_EQ(Contents(server_.private_key).rfind("-----BEGIN PRIVATE KEY", 0),
            0u);
}

// Each bad file is named in the error, and nothing crashes.
TEST_F(TlsSessionTest, AMissingOrBrokenFileIsNamed) {
  const std::string garbage = ca_.directory() + "/garbage.pem";
  std::ofstream(garbage) << "not a PEM file\n";
  CertificateFiles other;
  ASSERT_TRUE(ca_.Issue("other", &other).ok());
  const std::string missing = ca_.directory() + "/missing.pem";
  struct Case {
    TlsFiles files;
    std::string expected;
  };
  const Case cases[] = {
      {{missing, server_.private_key, ca_.authority()},
       "cannot read the certificate file " + missing},
      {{garbage, server_.private_key, ca_.authority()},
       "the certificate file " + garbage + " holds no PEM certificate"},
      {{server_.certificate, missing, ca_.authority()},
       "cannot read the private key file " + missing},
      {{server_.certificate, garbage, ca_.authority()},
       "the private key file " + garbage + " holds no"},
      {{server_.certificate, other.private_key, ca_.authority()},
       "does not belong to the certificate in " + server_.certificate},
      {{server_.certificate, server_.private_key, missing},
       "cannot read the trusted CA file " + missing},
      {{server_.certificate, server_.private_key, garbage},
       "the trusted CA file " + garbage + " holds no PEM certificate"},
  };
  for (const Case& bad : cases) {
    std::unique_ptr<TlsContext> context;
    const Status status = TlsContext::Create(bad.files, &context);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(status.message().find(bad.expected), std::string::npos)
        << status.message();
    EXPECT_EQ(context, nullptr);
  }
  std::unique_ptr<TlsContext> context;
  EXPECT_TRUE(TlsContext::Create(Files(true), &context).ok());
}

}  // namespace
}  // namespace kvs::door
