// TLS for the client door (docs/OPERATIONS.md "Security"), with OpenSSL.
//
// A TlsContext is the server's side of TLS, configured once from PEM files
// when the door starts: its certificate chain and private key, and the CA
// that client certificates must chain to (checked only when client
// certificates are required: mutual TLS). TLS 1.2 at least; no session
// resumption (no cache, no tickets) and no renegotiation.
//
// A TlsSession runs TLS for one connection over memory buffers, never over
// the socket: the connection (door/client_connection.h) keeps its own
// non-blocking recv and send. It hands the session the ciphertext it read
// (Receive) and gets back the plaintext, and hands it plaintext to send
// (Encrypt) and sends the ciphertext the session holds (output, Sent).
// Plaintext handed before the handshake completes is not taken: it waits
// with the connection. Encrypt takes plaintext only while less than
// kCiphertextAheadBytes of ciphertext wait for the socket, so replies the
// client does not read stay with the connection, counted against its
// output bound, rather than in the session.
//
// Thread safety: a TlsContext is immutable once created, and sessions of
// it may be created on any thread (OpenSSL counts the references: the
// context's state lives as long as its last session). A TlsSession is
// used by one thread at a time (its connection's shard).

#ifndef KVS_DOOR_TLS_SESSION_H_
#define KVS_DOOR_TLS_SESSION_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

// OpenSSL's types, so that this header does not pull in <openssl/ssl.h>.
struct ssl_ctx_st;
struct ssl_st;
struct bio_st;

namespace kvs::door {

// Where the door's TLS material lies; all PEM files.
struct TlsFiles {
  std::string certificate_path;  // the server's certificate chain, leaf first
  std::string private_key_path;  // its private key (PKCS#8, unencrypted)
  std::string trusted_ca_path;   // the CA client certificates chain to
  // Mutual TLS: a client without a certificate from the CA is refused.
  bool require_client_auth = false;

  // Whether TLS is configured (a certificate is named).
  bool enabled() const { return !certificate_path.empty(); }
};

class TlsContext {
 public:
  // Reads `files`. An error (InvalidArgument) names the file that is
  // missing, unreadable or holds no PEM certificate or key, or says that
  // the key does not belong to the certificate.
  static Status Create(const TlsFiles& files,
                       std::unique_ptr<TlsContext>* context);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

 private:
  friend class TlsSession;
  explicit TlsContext(ssl_ctx_st* context) : context_(context) {}

  ssl_ctx_st* const context_;  // owned: one reference
};

class TlsSession {
 public:
  // Encrypt takes no more plaintext while this much ciphertext waits: a few
  // records (16 KiB each), enough to keep a socket busy between turns.
  static constexpr size_t kCiphertextAheadBytes = 64u << 10;

  // The server's side of one connection's TLS, waiting for the ClientHello.
  // An error only if OpenSSL is out of memory.
  static Status Create(const TlsContext& context,
                       std::unique_ptr<TlsSession>* session);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Takes `ciphertext` the peer sent (untrusted): runs the handshake, and
  // appends the plaintext it decrypts to *plaintext. An error (a failed
  // handshake: a peer that speaks no TLS or presents no valid certificate;
  // or a bad record) says why; the session is then dead, and the
  // connection should send output() (an alert telling the peer) and close.
  Status Receive(std::string_view ciphertext, std::string* plaintext);
  // Encrypts a prefix of `plaintext` while less than kCiphertextAheadBytes
  // of ciphertext wait, and sets *taken to its length: nothing before the
  // handshake completes or once the session is dead or shut down.
  Status Encrypt(std::string_view plaintext, size_t* taken);
  // Queues a close_notify (the last thing this side sends), if the
  // handshake completed and the session is alive. Idempotent.
  void Shutdown();

  // Ciphertext waiting for the socket: handshake messages, records, alerts.
  std::string_view output() const {
    return std::string_view(output_).substr(output_sent_);
  }
  // The socket took the first `bytes` of output().
  void Sent(size_t bytes);

  // Whether the handshake completed: plaintext flows both ways.
  bool established() const { return established_; }
  // Whether the peer said it closes (a close_notify).
  bool peer_closed() const { return peer_closed_; }

 private:
  TlsSession(ssl_st* ssl, bio_st* input, bio_st* output_bio)
      : ssl_(ssl), input_(input), output_bio_(output_bio) {}
  // Moves what OpenSSL wrote into output_.
  void TakeOutput();
  // Marks the session dead after SSL_get_error gave `error`; the Status
  // says why (from OpenSSL's error queue, which it empties).
  Status Fail(std::string_view what, int error);

  ssl_st* const ssl_;         // owned; owns both BIOs
  bio_st* const input_;       // ciphertext received, not yet decrypted
  bio_st* const output_bio_;  // ciphertext OpenSSL wrote, not yet taken
  std::string output_;
  size_t output_sent_ = 0;
  bool established_ = false;
  bool peer_closed_ = false;
  bool failed_ = false;
  bool shut_down_ = false;
};

}  // namespace kvs::door

#endif  // KVS_DOOR_TLS_SESSION_H_
