#include "channel/bootstrap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::channel {
namespace {

constexpr uint32_t kHelloMagic = 0x48535654;    // "KVSH" little-endian
constexpr uint32_t kWelcomeMagic = 0x57535654;  // "KVSW"
constexpr uint8_t kBootstrapVersion = 3;
// Bytes after a Hello's address, before its CRC.
constexpr size_t kHelloTailBytes = 24 + 4 + kNonceBytes + kProofBytes;

using Clock = std::chrono::steady_clock;

void PutU8(std::string* out, uint8_t v) {
  out->push_back(static_cast<char>(v));
}
// Appends `bytes` padded with zeros (or cut) to exactly `size` bytes.
void AppendFixed(std::string* out, std::string_view bytes, size_t size) {
  out->append(bytes.substr(0, size));
  out->append(size - std::min(size, bytes.size()), '\0');
}
void Seal(std::string* out) {
  coding::PutFixed32(out, crc32c::Value(out->data(), out->size()));
}

// Waits until `socket` is ready for `events` or the deadline passes.
Status WaitFor(int socket, short events, Clock::time_point deadline,
               const char* what) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) {
      return Status::IoError(std::string("bootstrap: timed out ") + what);
    }
    struct pollfd fd {
      socket, events, 0
    };
    const int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready > 0) return Status::Ok();
    if (ready < 0 && errno != EINTR) {
      return Status::FromErrno(std::string("bootstrap: poll while ") + what,
                               errno);
    }
  }
}

Status ReadExactly(int socket, size_t size, Clock::time_point deadline,
                   std::string* out) {
  out->resize(size);
  size_t done = 0;
  while (done < size) {
    KVS_RETURN_IF_ERROR(WaitFor(socket, POLLIN, deadline, "reading"));
    const ssize_t n = ::recv(socket, out->data() + done, size - done, 0);
    if (n == 0)
      return Status::IoError("bootstrap: the peer closed the connection");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Status::FromErrno("bootstrap: recv", errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// How many bytes the message of `magic` whose first 8 bytes are `head` has
// in all: the fixed part, the variable-size address, the rest and the CRC.
Status MessageBytes(std::string_view head, uint32_t magic, size_t tail_bytes,
                    size_t* total) {
  if (coding::DecodeFixed32(head.data()) != magic) {
    return Status::InvalidArgument("bootstrap: not a KVS fabric peer");
  }
  if (static_cast<uint8_t>(head[4]) != kBootstrapVersion) {
    return Status::InvalidArgument(
        "bootstrap: a peer of protocol version " +
        std::to_string(static_cast<uint8_t>(head[4])) +
        "; this end speaks version " + std::to_string(kBootstrapVersion) +
        " (they run different releases)");
  }
  const uint16_t address_size = coding::DecodeFixed16(head.data() + 6);
  if (address_size > kAddressBytesMax) {
    return Status::InvalidArgument("bootstrap: address of " +
                                   std::to_string(address_size) + " bytes");
  }
  *total = 8 + address_size + tail_bytes + 4;
  return Status::Ok();
}

Status CheckSum(std::string_view message) {
  const size_t body = message.size() - 4;
  if (crc32c::Value(message.data(), body) !=
      coding::DecodeFixed32(message.data() + body)) {
    return Status::Corruption("bootstrap: message fails its checksum");
  }
  return Status::Ok();
}

// Reads one length-checked bootstrap message; verifies magic, version and
// CRC.
Status ReadMessage(int socket, std::chrono::milliseconds timeout,
                   uint32_t magic, size_t tail_bytes, std::string* message) {
  const auto deadline = Clock::now() + timeout;
  std::string head;
  KVS_RETURN_IF_ERROR(ReadExactly(socket, 8, deadline, &head));
  size_t total = 0;
  KVS_RETURN_IF_ERROR(MessageBytes(head, magic, tail_bytes, &total));
  std::string rest;
  KVS_RETURN_IF_ERROR(ReadExactly(socket, total - 8, deadline, &rest));
  *message = head + rest;
  return CheckSum(*message);
}

}  // namespace

std::string EncodeHello(const Hello& hello) {
  std::string out;
  coding::PutFixed32(&out, kHelloMagic);
  PutU8(&out, kBootstrapVersion);
  PutU8(&out, static_cast<uint8_t>(hello.provider));
  coding::PutFixed16(&out, static_cast<uint16_t>(hello.address.size()));
  out += hello.address;
  coding::PutFixed64(&out, hello.reply_buffer.address);
  coding::PutFixed64(&out, hello.reply_buffer.key);
  coding::PutFixed32(&out, static_cast<uint32_t>(hello.reply_buffer.size));
  coding::PutFixed32(&out, hello.request_buffer_bytes);
  PutU8(&out, static_cast<uint8_t>(hello.kind));
  AppendFixed(&out, std::string_view(), 3);
  AppendFixed(&out, hello.nonce, kNonceBytes);
  AppendFixed(&out, hello.proof, kProofBytes);
  Seal(&out);
  return out;
}

std::string EncodeWelcome(const Welcome& welcome) {
  std::string out;
  coding::PutFixed32(&out, kWelcomeMagic);
  PutU8(&out, kBootstrapVersion);
  PutU8(&out, static_cast<uint8_t>(welcome.status.code()));
  const std::string address =
      welcome.status.ok()
          ? welcome.address
          : std::string(welcome.status.message().substr(0, kAddressBytesMax));
  coding::PutFixed16(&out, static_cast<uint16_t>(address.size()));
  out += address;
  coding::PutFixed64(&out, welcome.request_buffer.address);
  coding::PutFixed64(&out, welcome.request_buffer.key);
  coding::PutFixed32(&out, static_cast<uint32_t>(welcome.request_buffer.size));
  coding::PutFixed64(&out, welcome.connection_id);
  AppendFixed(&out, welcome.status.ok() ? welcome.proof : std::string(),
              kProofBytes);
  Seal(&out);
  return out;
}

Status ReadHello(int socket, std::chrono::milliseconds timeout, Hello* hello) {
  std::string m;
  KVS_RETURN_IF_ERROR(
      ReadMessage(socket, timeout, kHelloMagic, kHelloTailBytes, &m));
  return DecodeHello(m, hello);
}

Status HelloBytes(std::string_view head, size_t* total) {
  KVS_CHECK(head.size() >= kHelloHeadBytes);
  return MessageBytes(head, kHelloMagic, kHelloTailBytes, total);
}

Status DecodeHello(std::string_view m, Hello* hello) {
  size_t total = 0;
  if (m.size() < kHelloHeadBytes) {
    return Status::InvalidArgument("bootstrap: a Hello of " +
                                   std::to_string(m.size()) + " bytes");
  }
  KVS_RETURN_IF_ERROR(HelloBytes(m, &total));
  if (m.size() != total) {
    return Status::InvalidArgument("bootstrap: a Hello of " +
                                   std::to_string(m.size()) + " bytes, not " +
                                   std::to_string(total));
  }
  KVS_RETURN_IF_ERROR(CheckSum(m));
  const uint8_t provider = static_cast<uint8_t>(m[5]);
  if (provider > static_cast<uint8_t>(fabric::Provider::kStream)) {
    return Status::InvalidArgument("bootstrap: unknown provider " +
                                   std::to_string(provider));
  }
  hello->provider = static_cast<fabric::Provider>(provider);
  const size_t size = coding::DecodeFixed16(m.data() + 6);
  hello->address = std::string(m.substr(8, size));
  const char* p = m.data() + 8 + size;
  hello->reply_buffer.address = coding::DecodeFixed64(p);
  hello->reply_buffer.key = coding::DecodeFixed64(p + 8);
  hello->reply_buffer.size = coding::DecodeFixed32(p + 16);
  hello->request_buffer_bytes = coding::DecodeFixed32(p + 20);
  const uint8_t kind = static_cast<uint8_t>(p[24]);
  if (kind > static_cast<uint8_t>(ConnectionKind::kPeer) || p[25] != 0 ||
      p[26] != 0 || p[27] != 0) {
    return Status::InvalidArgument("bootstrap: unknown connection kind " +
                                   std::to_string(kind));
  }
  hello->kind = static_cast<ConnectionKind>(kind);
  hello->nonce = std::string(p + 28, kNonceBytes);
  hello->proof = std::string(p + 28 + kNonceBytes, kProofBytes);
  return Status::Ok();
}

Status ReadWelcome(int socket, std::chrono::milliseconds timeout,
                   Welcome* welcome) {
  std::string m;
  KVS_RETURN_IF_ERROR(
      ReadMessage(socket, timeout, kWelcomeMagic, 28 + kProofBytes, &m));
  const uint8_t status = static_cast<uint8_t>(m[5]);
  const size_t size = coding::DecodeFixed16(m.data() + 6);
  const std::string text = m.substr(8, size);
  if (status != 0) {
    welcome->status = Status::FromCode(
        status <= KVS_NOT_ENOUGH_REPLICAS ? static_cast<Status::Code>(status)
                                          : Status::Code::kInternal,
        "the server refused the connection: " + text);
    return Status::Ok();
  }
  welcome->status = Status::Ok();
  welcome->address = text;
  const char* p = m.data() + 8 + size;
  welcome->request_buffer.address = coding::DecodeFixed64(p);
  welcome->request_buffer.key = coding::DecodeFixed64(p + 8);
  welcome->request_buffer.size = coding::DecodeFixed32(p + 16);
  welcome->connection_id = coding::DecodeFixed64(p + 20);
  welcome->proof = std::string(p + 28, kProofBytes);
  return Status::Ok();
}

Status ReadChallenge(int socket, std::chrono::milliseconds timeout,
                     Challenge* challenge) {
  std::string bytes;
  KVS_RETURN_IF_ERROR(
      ReadExactly(socket, kChallengeBytes, Clock::now() + timeout, &bytes));
  return DecodeChallenge(bytes, challenge);
}

Status ClientHandshake(int socket, const std::string& secret,
                       std::chrono::milliseconds timeout, Hello* hello,
                       Welcome* welcome) {
  Challenge challenge;
  KVS_RETURN_IF_ERROR(ReadChallenge(socket, timeout, &challenge));
  const ConnectionKind kind = hello->kind;
  const bool peer = kind == ConnectionKind::kPeer;
  const char* const secret_name = peer ? "cluster secret" : "client secret";
  const char* const flag = peer ? "--secret-file" : "--client-secret-file";
  if (challenge.ProofRequired(kind) && secret.empty()) {
    return Status::InvalidArgument(
        std::string("bootstrap: the server requires the ") + secret_name +
        " and this " + ConnectionKindName(kind) + " has none (" + flag + ")");
  }
  if (!challenge.ProofRequired(kind) && !secret.empty()) {
    return Status::InvalidArgument(
        std::string("bootstrap: the server requires no ") + secret_name +
        ", so it cannot prove it is this cluster's; refusing to connect");
  }
  hello->nonce = RandomNonce();
  hello->proof =
      Prove(secret, HelloPurpose(kind), challenge.nonce, hello->nonce);
  KVS_RETURN_IF_ERROR(WriteAll(socket, EncodeHello(*hello), timeout));
  KVS_RETURN_IF_ERROR(ReadWelcome(socket, timeout, welcome));
  KVS_RETURN_IF_ERROR(welcome->status);
  if (!secret.empty() && !Verify(welcome->proof, secret, WelcomePurpose(kind),
                                 hello->nonce, challenge.nonce)) {
    return Status::InvalidArgument(
        std::string("bootstrap: the server's proof of the ") + secret_name +
        " is wrong");
  }
  return Status::Ok();
}

Status WriteAll(int socket, std::string_view bytes,
                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  size_t done = 0;
  while (done < bytes.size()) {
    KVS_RETURN_IF_ERROR(WaitFor(socket, POLLOUT, deadline, "writing"));
    const ssize_t n =
        ::send(socket, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Status::FromErrno("bootstrap: send", errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

namespace {

Status Resolve(const std::string& host, uint16_t port, bool passive,
               struct addrinfo** result) {
  struct addrinfo hints {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string service = std::to_string(port);
  const int error = ::getaddrinfo(host.empty() ? nullptr : host.c_str(),
                                  service.c_str(), &hints, result);
  if (error != 0) {
    return Status::InvalidArgument("cannot resolve " + host + ": " +
                                   ::gai_strerror(error));
  }
  return Status::Ok();
}

void SetNonBlocking(int socket) {
  ::fcntl(socket, F_SETFL, ::fcntl(socket, F_GETFL) | O_NONBLOCK);
}

}  // namespace

Status Listen(const std::string& host, uint16_t port, int* socket,
              uint16_t* bound_port) {
  struct addrinfo* addresses = nullptr;
  KVS_RETURN_IF_ERROR(Resolve(host, port, true, &addresses));
  Status status = Status::IoError("no address to listen on for " + host);
  for (struct addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      status = Status::FromErrno(
          "listen on " + host + ":" + std::to_string(port), errno);
      ::close(fd);
      continue;
    }
    struct sockaddr_storage bound {};
    socklen_t length = sizeof bound;
    ::getsockname(fd, reinterpret_cast<struct sockaddr*>(&bound), &length);
    *bound_port = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    SetNonBlocking(fd);
    *socket = fd;
    status = Status::Ok();
    break;
  }
  ::freeaddrinfo(addresses);
  return status;
}

Status Connect(const std::string& host, uint16_t port,
               std::chrono::milliseconds timeout, int* socket) {
  struct addrinfo* addresses = nullptr;
  KVS_RETURN_IF_ERROR(Resolve(host, port, false, &addresses));
  const auto deadline = Clock::now() + timeout;
  Status status = Status::IoError("no address for " + host);
  for (struct addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    SetNonBlocking(fd);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      status = Status::FromErrno(
          "connect to " + host + ":" + std::to_string(port), errno);
      ::close(fd);
      continue;
    }
    status = WaitFor(fd, POLLOUT, deadline, "connecting");
    int error = 0;
    socklen_t length = sizeof error;
    if (status.ok() &&
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
        error != 0) {
      status = Status::FromErrno(
          "connect to " + host + ":" + std::to_string(port), error);
    }
    if (!status.ok()) {
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *socket = fd;
    break;
  }
  ::freeaddrinfo(addresses);
  return status;
}

bool PeerClosed(int socket) { return TakeKnocks(socket).closed; }

void Knock(int socket) {
  const char knock = 'k';
  // EAGAIN: knocks are waiting already, one more adds nothing.
  (void)!::send(socket, &knock, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

Knocks TakeKnocks(int socket) {
  Knocks knocks;
  char bytes[256];
  // Bounded: a peer sending without pause is read on the next call.
  for (int reads = 0; reads < 64; ++reads) {
    const ssize_t n = ::recv(socket, bytes, sizeof bytes, MSG_DONTWAIT);
    if (n > 0) {
      knocks.knocked = true;
      continue;
    }
    if (n == 0) {
      knocks.closed = true;
    } else if (errno == EINTR) {
      continue;  // counted: bounded like the reads
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      knocks.closed = true;
    }
    return knocks;
  }
  return knocks;
}

}  // namespace kvs::channel
