// Throwaway TLS certificates for tests, made with OpenSSL's APIs (no
// `openssl` command needed): a CA, and certificates it signs (P-256, valid
// a day, for 127.0.0.1 and localhost, for servers and clients alike), all
// written as PEM files into a fresh temporary directory. The Java tests'
// io.kvs.core.security.ThrowawayCertificates makes the same with the
// command. Never for production: the CA's key lies next to them.
//
// Thread safety: one thread at a time.

#ifndef KVS_TESTING_TEST_CERTIFICATES_H_
#define KVS_TESTING_TEST_CERTIFICATES_H_

#include <string>

#include "util/status.h"

namespace kvs::testing {

// The files of one certificate.
struct CertificateFiles {
  std::string certificate;  // PEM
  std::string private_key;  // PEM, PKCS#8, unencrypted
};

class TestCertificates {
 public:
  // A new CA in a new directory under `base` (a test's temporary
  // directory).
  static Status Create(const std::string& base, TestCertificates* made);

  // The CA's certificate (PEM).
  const std::string& authority() const { return authority_; }
  const std::string& directory() const { return directory_; }
  // Makes a certificate for `name`, signed by the CA (or, if `self_signed`,
  // by its own key: one the CA never vouched for).
  Status Issue(const std::string& name, CertificateFiles* files,
               bool self_signed = false);

 private:
  std::string directory_;
  std::string authority_;
  std::string authority_key_;
  int serial_ = 1;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_TEST_CERTIFICATES_H_
