#include "door/tls_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/check.h"

namespace kvs::door {
namespace {

// The most plaintext one TLS record carries: Encrypt writes at most this
// much at a time, and Receive decrypts into a buffer this large.
constexpr size_t kRecordBytes = 16u << 10;

// OpenSSL's errors queued on this thread, in one line; empties the queue
// (OpenSSL keeps at most 16).
std::string OpenSslErrors() {
  std::string text;
  for (unsigned long error = ERR_get_error(); error != 0;
       error = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(error);
    char code[256];
    if (reason == nullptr) {
      ERR_error_string_n(error, code, sizeof code);
      reason = code;
    }
    if (!text.empty()) text += "; ";
    text += reason;
  }
  return text.empty() ? "no detail from OpenSSL" : text;
}

// An error unless `path` names a file this process can open.
Status Readable(const char* what, const std::string& path) {
  if (path.empty()) {
    return Status::InvalidArgument(std::string("TLS: no ") + what +
                                   " file is given");
  }
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    return Status::InvalidArgument(std::string("TLS: cannot read the ") + what +
                                   " file " + path + ": " +
                                   std::strerror(errno));
  }
  std::fclose(file);
  return Status::Ok();
}

// OpenSSL asks for a passphrase when a key is encrypted; by default it
// would prompt on the terminal. The door takes unencrypted keys only.
int NoPassphrase(char*, int, int, void*) { return 0; }

}  // namespace

Status TlsContext::Create(const TlsFiles& files,
                          std::unique_ptr<TlsContext>* context) {
  KVS_RETURN_IF_ERROR(Readable("certificate", files.certificate_path));
  KVS_RETURN_IF_ERROR(Readable("private key", files.private_key_path));
  KVS_RETURN_IF_ERROR(Readable("trusted CA", files.trusted_ca_path));
  ERR_clear_error();
  SSL_CTX* ssl_context = SSL_CTX_new(TLS_server_method());
  if (ssl_context == nullptr) {
    return Status::Internal("TLS: cannot create a context: " + OpenSslErrors());
  }
  std::unique_ptr<TlsContext> made(new TlsContext(ssl_context));
  SSL_CTX_set_default_passwd_cb(ssl_context, NoPassphrase);
  if (SSL_CTX_set_min_proto_version(ssl_context, TLS1_2_VERSION) != 1) {
    return Status::Internal("TLS: cannot require TLS 1.2: " + OpenSslErrors());
  }
  // No renegotiation (a client could make the server work at will), and no
  // resumption: no state is shared between connections or shards.
  SSL_CTX_set_options(ssl_context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
  SSL_CTX_set_num_tickets(ssl_context, 0);
  SSL_CTX_set_session_cache_mode(ssl_context, SSL_SESS_CACHE_OFF);
  // An idle connection gives back its record buffers (tens of KiB each).
  SSL_CTX_set_mode(ssl_context, SSL_MODE_RELEASE_BUFFERS);

  const std::string& certificate = files.certificate_path;
  const std::string& key = files.private_key_path;
  const std::string& authority = files.trusted_ca_path;
  if (SSL_CTX_use_certificate_chain_file(ssl_context, certificate.c_str()) !=
      1) {
    return Status::InvalidArgument("TLS: the certificate file " + certificate +
                                   " holds no PEM certificate (" +
                                   OpenSslErrors() + ")");
  }
  // Read apart from the certificate, so that a key that is no PEM and a
  // key of another certificate are told apart.
  EVP_PKEY* private_key = nullptr;
  if (BIO* file = BIO_new_file(key.c_str(), "r"); file != nullptr) {
    private_key = PEM_read_bio_PrivateKey(file, nullptr, NoPassphrase, nullptr);
    BIO_free(file);
  }
  if (private_key == nullptr) {
    return Status::InvalidArgument("TLS: the private key file " + key +
                                   " holds no unencrypted PEM private key (" +
                                   OpenSslErrors() + ")");
  }
  const bool matches =
      X509_check_private_key(SSL_CTX_get0_certificate(ssl_context),
                             private_key) == 1;
  const bool used =
      matches && SSL_CTX_use_PrivateKey(ssl_context, private_key) == 1;
  EVP_PKEY_free(private_key);
  if (!matches) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS: the private key in " + key +
                                   " does not belong to the certificate in " +
                                   certificate);
  }
  if (!used) {
    return Status::InvalidArgument("TLS: cannot use the private key in " + key +
                                   " (" + OpenSslErrors() + ")");
  }
  // The CA is read whether or not client certificates are required, so a
  // broken file is reported at start rather than when mutual TLS is
  // switched on.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(authority.c_str());
  if (names == nullptr ||
      SSL_CTX_load_verify_file(ssl_context, authority.c_str()) != 1) {
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    return Status::InvalidArgument("TLS: the trusted CA file " + authority +
                                   " holds no PEM certificate (" +
                                   OpenSslErrors() + ")");
  }
  // Told to the client, so that it picks a certificate this CA signed.
  SSL_CTX_set_client_CA_list(ssl_context, names);
  if (files.require_client_auth) {
    SSL_CTX_set_verify(ssl_context,
                       SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  }
  ERR_clear_error();
  *context = std::move(made);
  return Status::Ok();
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

Status TlsSession::Create(const TlsContext& context,
                          std::unique_ptr<TlsSession>* session) {
  ERR_clear_error();
  SSL* ssl = SSL_new(context.context_);
  BIO* input = BIO_new(BIO_s_mem());
  BIO* output = BIO_new(BIO_s_mem());
  if (ssl == nullptr || input == nullptr || output == nullptr) {
    BIO_free(input);
    BIO_free(output);
    SSL_free(ssl);
    return Status::Internal("TLS: cannot create a session: " + OpenSslErrors());
  }
  // Empty means "wait for more", not the end of the stream.
  BIO_set_mem_eof_return(input, -1);
  BIO_set_mem_eof_return(output, -1);
  SSL_set_bio(ssl, input, output);  // the session owns both now
  SSL_set_accept_state(ssl);
  session->reset(new TlsSession(ssl, input, output));
  return Status::Ok();
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

Status TlsSession::Receive(std::string_view ciphertext,
                           std::string* plaintext) {
  if (failed_) return Status::InvalidArgument("TLS: the session failed");
  ERR_clear_error();
  size_t buffered = 0;
  while (buffered < ciphertext.size()) {
    size_t written = 0;
    if (BIO_write_ex(input_, ciphertext.data() + buffered,
                     ciphertext.size() - buffered, &written) != 1) {
      failed_ = true;
      return Status::Internal("TLS: cannot buffer what was received: " +
                              OpenSslErrors());
    }
    buffered += written;
  }
  thread_local char buffer[kRecordBytes];
  Status status;
  while (!peer_closed_) {
    if (!established_) {
      const int result = SSL_do_handshake(ssl_);
      if (result == 1) {
        established_ = true;
        continue;
      }
      const int error = SSL_get_error(ssl_, result);
      if (error == SSL_ERROR_WANT_READ) break;
      status = Fail("handshake failed", error);
      break;
    }
    size_t got = 0;
    const int result = SSL_read_ex(ssl_, buffer, sizeof buffer, &got);
    if (result == 1) {
      plaintext->append(buffer, got);
      continue;
    }
    const int error = SSL_get_error(ssl_, result);
    if (error == SSL_ERROR_WANT_READ) break;
    if (error == SSL_ERROR_ZERO_RETURN) {
      peer_closed_ = true;
      break;
    }
    status = Fail("record refused", error);
    break;
  }
  TakeOutput();  // handshake messages, a key update's answer, an alert
  return status;
}

Status TlsSession::Encrypt(std::string_view plaintext, size_t* taken) {
  *taken = 0;
  if (!established_ || failed_ || shut_down_) return Status::Ok();
  ERR_clear_error();
  while (*taken < plaintext.size() && output().size() < kCiphertextAheadBytes) {
    const size_t chunk = std::min(plaintext.size() - *taken, kRecordBytes);
    size_t written = 0;
    const int result =
        SSL_write_ex(ssl_, plaintext.data() + *taken, chunk, &written);
    if (result != 1) {
      Status status = Fail("cannot encrypt", SSL_get_error(ssl_, result));
      TakeOutput();
      return status;
    }
    *taken += written;
    TakeOutput();
  }
  return Status::Ok();
}

void TlsSession::Shutdown() {
  if (!established_ || failed_ || shut_down_) return;
  shut_down_ = true;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);  // queues close_notify; the peer's is not awaited
  ERR_clear_error();
  TakeOutput();
}

void TlsSession::Sent(size_t bytes) {
  KVS_CHECK(bytes <= output_.size() - output_sent_);
  output_sent_ += bytes;
  if (output_sent_ == output_.size()) {
    output_.clear();
    output_sent_ = 0;
  } else if (output_sent_ >= kCiphertextAheadBytes) {
    output_.erase(0, output_sent_);
    output_sent_ = 0;
  }
}

void TlsSession::TakeOutput() {
  const size_t pending = BIO_ctrl_pending(output_bio_);
  if (pending == 0) return;
  const size_t at = output_.size();
  output_.resize(at + pending);
  size_t got = 0;
  (void)BIO_read_ex(output_bio_, output_.data() + at, pending, &got);
  output_.resize(at + got);
}

Status TlsSession::Fail(std::string_view what, int error) {
  failed_ = true;
  std::string why = OpenSslErrors();
  if (error == SSL_ERROR_SYSCALL) {
    why = "the stream ended inside a record";
  }
  const long verified = SSL_get_verify_result(ssl_);
  if (verified != X509_V_OK) {
    why += std::string(" (certificate: ") +
           X509_verify_cert_error_string(verified) + ")";
  }
  return Status::InvalidArgument("TLS " + std::string(what) + ": " + why);
}

}  // namespace kvs::door
