#include "testing/test_certificates.h"

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace kvs::testing {
namespace {

struct Freer {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* certificate) const { X509_free(certificate); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer>;
using Certificate = std::unique_ptr<X509, Freer>;

Status Failed(const std::string& what) {
  char detail[256] = "no detail";
  const unsigned long error = ERR_get_error();
  if (error != 0) ERR_error_string_n(error, detail, sizeof detail);
  ERR_clear_error();
  return Status::Internal("test certificates: " + what + ": " + detail);
}

bool AddExtension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension =
      X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate of `key` for `name`, signed by `issuer_key` in `issuer`'s
// name (both null: by `key` itself); a CA's if `authority`.
Certificate Make(const std::string& name, EVP_PKEY* key, X509* issuer,
                 EVP_PKEY* issuer_key, int serial, bool authority) {
  Certificate certificate(X509_new());
  X509* made = certificate.get();
  if (made == nullptr) return nullptr;
  X509_set_version(made, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(made), serial);
  X509_gmtime_adj(X509_getm_notBefore(made), -3600);
  X509_gmtime_adj(X509_getm_notAfter(made), 24 * 3600);
  X509_set_pubkey(made, key);
  X509_NAME* subject = X509_get_subject_name(made);
  X509_NAME_add_entry_by_txt(
      subject, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509_set_issuer_name(
      made, issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  X509* signer = issuer != nullptr ? issuer : made;
  const bool extended = authority
                            ? AddExtension(made, signer, NID_basic_constraints,
                                           "critical,CA:TRUE") &&
                                  AddExtension(made, signer, NID_key_usage,
                                               "critical,keyCertSign,cRLSign")
                            : AddExtension(made, signer, NID_subject_alt_name,
                                           "IP:127.0.0.1,DNS:localhost") &&
                                  AddExtension(made, signer, NID_ext_key_usage,
                                               "serverAuth,clientAuth");
  if (!extended || X509_sign(made, issuer_key != nullptr ? issuer_key : key,
                             EVP_sha256()) == 0) {
    return nullptr;
  }
  return certificate;
}

Status WriteCertificate(const std::string& path, X509* certificate) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return Status::FromErrno("open " + path, errno);
  const bool written = PEM_write_X509(file, certificate) == 1;
  std::fclose(file);
  return written ? Status::Ok() : Failed("write " + path);
}

Status WriteKey(const std::string& path, EVP_PKEY* key) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return Status::FromErrno("open " + path, errno);
  // OpenSSL 3 writes PKCS#8 ("BEGIN PRIVATE KEY").
  const bool written = PEM_write_PrivateKey(file, key, nullptr, nullptr, 0,
                                            nullptr, nullptr) == 1;
  std::fclose(file);
  return written ? Status::Ok() : Failed("write " + path);
}

}  // namespace

Status TestCertificates::Create(const std::string& base,
                                TestCertificates* made) {
  std::string directory = base + "/kvs-tls-XXXXXX";
  if (::mkdtemp(directory.data()) == nullptr) {
    return Status::FromErrno("mkdtemp " + directory, errno);
  }
  made->directory_ = directory;
  made->authority_ = directory + "/ca.pem";
  made->authority_key_ = directory + "/ca.key";
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return Failed("make the CA's key");
  Certificate certificate =
      Make("KVS test CA", key.get(), nullptr, nullptr, 1, true);
  if (certificate == nullptr) return Failed("make the CA's certificate");
  KVS_RETURN_IF_ERROR(WriteCertificate(made->authority_, certificate.get()));
  return WriteKey(made->authority_key_, key.get());
}

Status TestCertificates::Issue(const std::string& name, CertificateFiles* files,
                               bool self_signed) {
  Certificate authority;
  Key authority_key;
  if (!self_signed) {
    std::FILE* file = std::fopen(authority_.c_str(), "r");
    if (file == nullptr) return Status::FromErrno("open " + authority_, errno);
    authority.reset(PEM_read_X509(file, nullptr, nullptr, nullptr));
    std::fclose(file);
    file = std::fopen(authority_key_.c_str(), "r");
    if (file == nullptr) {
      return Status::FromErrno("open " + authority_key_, errno);
    }
    authority_key.reset(PEM_read_PrivateKey(file, nullptr, nullptr, nullptr));
    std::fclose(file);
    if (authority == nullptr || authority_key == nullptr) {
      return Failed("read the CA");
    }
  }
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return Failed("make the key of " + name);
  Certificate certificate = Make(name, key.get(), authority.get(),
                                 authority_key.get(), ++serial_, false);
  if (certificate == nullptr) return Failed("make the certificate of " + name);
  files->certificate = directory_ + "/" + name + ".pem";
  files->private_key = directory_ + "/" + name + ".key";
  KVS_RETURN_IF_ERROR(WriteCertificate(files->certificate, certificate.get()));
  return WriteKey(files->private_key, key.get());
}

}  // namespace kvs::testing
