#include "channel/stream_client.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "channel/bootstrap.h"

namespace kvs::channel {

Status StreamClient::Connect(const ClientOptions& options,
                             const std::string& host, uint16_t port,
                             std::unique_ptr<Client>* client) {
  std::unique_ptr<StreamClient> connected(new StreamClient());
  connected->options_ = options;
  int socket = -1;
  KVS_RETURN_IF_ERROR(
      channel::Connect(host, port, options.bootstrap_timeout, &socket));
  connected->socket_ = socket;
  Hello hello;
  hello.kind = options.kind;
  hello.provider = fabric::Provider::kStream;
  Welcome welcome;
  KVS_RETURN_IF_ERROR(ClientHandshake(
      socket, options.secret, options.bootstrap_timeout, &hello, &welcome));
  connected->connection_id_ = welcome.connection_id;
  const int flags = ::fcntl(socket, F_GETFL, 0);
  const int one = 1;
  if (flags < 0 || ::fcntl(socket, F_SETFL, flags | O_NONBLOCK) < 0 ||
      ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) {
    return Status::FromErrno("stream: socket options", errno);
  }
  *client = std::move(connected);
  return Status::Ok();
}

StreamClient::~StreamClient() {
  if (socket_ >= 0) ::close(socket_);
}

bool StreamClient::HasRoom(size_t bytes) const {
  const size_t backlog = out_.size() - out_sent_;
  return backlog == 0 || backlog + bytes <= options_.write_staging_bytes;
}

Status StreamClient::Submit(std::string_view request, Callback done) {
  if (!broken_.ok()) return broken_;
  // The bound a fabric connection's request buffer sets, kept alike.
  if (request.size() > options_.request_buffer_bytes) {
    return Status::FromCode(Status::Code::kTooLarge,
                            "a request of " + std::to_string(request.size()) +
                                " bytes is above the connection's " +
                                std::to_string(options_.request_buffer_bytes));
  }
  if (outstanding_.size() >= options_.max_outstanding ||
      !HasRoom(kFrameHeaderBytes + request.size())) {
    return Status::Busy("the connection is full");
  }
  const uint64_t id = next_request_id_++;
  AppendFrame(FrameType::kMessage, id, request, &out_);
  outstanding_[id] = {std::move(done), Clock::now()};
  ++stats_.requests;
  // Taken: a connection that fails while it goes out fails it through
  // `done`, at the next Poll.
  Flush();
  return Status::Ok();
}

Status StreamClient::WriteRemote(std::span<const RemotePiece> pieces,
                                 std::function<void(Status)> done) {
  if (!broken_.ok()) return broken_;
  if (pieces.empty() || pieces.size() > kPiecesMax) {
    return Status::InvalidArgument("a remote write has 1 to " +
                                   std::to_string(kPiecesMax) + " pieces");
  }
  size_t bytes = 0;
  for (const RemotePiece& piece : pieces) {
    if (piece.offset > piece.target->size ||
        piece.bytes.size() > piece.target->size - piece.offset) {
      return Status::InvalidArgument("a remote write outside its buffer");
    }
    bytes += kFrameHeaderBytes + kWriteHeadBytes + piece.bytes.size();
  }
  if (!HasRoom(bytes)) return Status::Busy("the connection is full");
  for (const RemotePiece& piece : pieces) {
    AppendWrite(next_write_++, piece.target->key, piece.offset, piece.bytes,
                &out_);
  }
  writes_[next_write_ - 1] = {std::move(done), Clock::now()};
  Flush();  // as Submit: a failure now is told through `done`
  return Status::Ok();
}

void StreamClient::Flush() {
  while (broken_.ok() && out_sent_ < out_.size()) {
    const ssize_t n = ::send(socket_, out_.data() + out_sent_,
                             out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Break(Status::FromErrno("stream: the server's connection failed",
                              n < 0 ? errno : ECONNRESET));
      return;
    }
    out_sent_ += static_cast<size_t>(n);
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  } else if (out_sent_ > (1u << 20)) {
    out_.erase(0, out_sent_);  // bounded copying: at most once per MiB sent
    out_sent_ = 0;
  }
}

size_t StreamClient::Receive() {
  size_t finished = 0;
  char chunk[64 << 10];
  for (;;) {
    const ssize_t n = ::recv(socket_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Break(n == 0 ? Status::IoError("the server closed the connection")
                   : Status::FromErrno("stream: receive", errno));
      return finished;
    }
    in_.append(chunk, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof chunk) break;
  }
  size_t at = 0;
  while (broken_.ok() && in_.size() - at >= kFrameHeaderBytes) {
    FrameHeader header;
    const Status decoded = DecodeFrameHeader(std::string_view(in_).substr(at),
                                             /*server=*/false, &header);
    if (!decoded.ok()) {
      Break(Status::Corruption("stream: " + std::string(decoded.message())));
      return finished;
    }
    if (in_.size() - at < kFrameHeaderBytes + header.payload_bytes) break;
    finished +=
        HandleFrame(header, std::string_view(in_).substr(at + kFrameHeaderBytes,
                                                         header.payload_bytes));
    at += kFrameHeaderBytes + header.payload_bytes;
  }
  in_.erase(0, at);
  return finished;
}

size_t StreamClient::HandleFrame(const FrameHeader& header,
                                 std::string_view payload) {
  if (header.type == FrameType::kWritten) {
    size_t finished = 0;
    while (!writes_.empty() && writes_.begin()->first <= header.id) {
      std::function<void(Status)> done =
          std::move(writes_.begin()->second.done);
      writes_.erase(writes_.begin());
      if (done) done(Status::Ok());
      ++finished;
    }
    return finished;
  }
  const auto it = outstanding_.find(header.id);
  if (it == outstanding_.end()) {
    Break(Status::Corruption("stream: a reply to no request (" +
                             std::to_string(header.id) + ")"));
    return 0;
  }
  Callback done = std::move(it->second.done);
  outstanding_.erase(it);
  ++stats_.replies;
  if (done) done(Status::Ok(), payload);
  return 1;
}

size_t StreamClient::Poll() {
  size_t finished = 0;
  if (broken_.ok()) {
    Flush();
    finished += Receive();
    const std::optional<Clock::time_point> oldest = oldest_unanswered();
    if (broken_.ok() && oldest &&
        Clock::now() - *oldest > options_.request_timeout) {
      Break(Status::IoError(
          "no reply within " +
          std::to_string(options_.request_timeout.count()) +
          " ms: the server is unresponsive; connection closed"));
    }
  }
  for (auto& done : std::exchange(failed_requests_, {})) {
    if (done) done(broken_, {});
    ++finished;
  }
  for (auto& done : std::exchange(failed_writes_, {})) {
    if (done) done(broken_);
    ++finished;
  }
  return finished;
}

bool StreamClient::TryWait() {
  Flush();
  // Every whole frame was taken at the last Poll: only a backlog to send
  // (the socket full) needs this side before the server's next bytes.
  return !broken_.ok() || out_sent_ == out_.size();
}

void StreamClient::AwaitArrivals() {
  struct pollfd ready {
    socket_, static_cast<short>(POLLIN | (TryWait() ? 0 : POLLOUT)), 0
  };
  ::poll(&ready, 1, 10);  // bounded: timeouts are checked by Poll
}

std::optional<std::chrono::steady_clock::time_point>
StreamClient::oldest_unanswered() const {
  std::optional<Clock::time_point> oldest;
  if (!writes_.empty()) oldest = writes_.begin()->second.posted;
  if (!outstanding_.empty()) {
    const Clock::time_point posted = outstanding_.begin()->second.posted;
    if (!oldest || posted < *oldest) oldest = posted;
  }
  return oldest;
}

void StreamClient::Break(Status status) {
  if (!broken_.ok()) return;
  broken_ = std::move(status);
  ::shutdown(socket_, SHUT_RDWR);
  for (auto& [sequence, write] : writes_) {
    failed_writes_.push_back(std::move(write.done));
  }
  writes_.clear();
  for (auto& [id, request] : outstanding_) {
    failed_requests_.push_back(std::move(request.done));
  }
  outstanding_.clear();
}

}  // namespace kvs::channel
