#include "channel/client.h"

#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "channel/bootstrap.h"
#include "channel/message_format.h"
#include "channel/stream_client.h"

namespace kvs::channel {
namespace {

using Clock = std::chrono::steady_clock;

// The largest reply the client assembles from parts.
constexpr uint64_t kReplyBytesMax = 64u << 20;

uint32_t RoundToUnit(uint64_t bytes) {
  return static_cast<uint32_t>((bytes + kUnitBytes - 1) / kUnitBytes *
                               kUnitBytes);
}

}  // namespace

struct FabricClient::Outstanding {
  uint64_t request_id = 0;
  uint32_t sequence = 0;  // of the message whose reply is awaited
  RingAllocator::Allocation slot;
  std::optional<uint64_t> request_space;
  Clock::time_point deadline;
  Callback done;
  std::string assembled;  // parts received so far
  // Non-zero while the rest of a reply sent in part is yet to be asked
  // for: the message bytes it needs.
  uint64_t fetch_bytes = 0;
};

FabricClient::~FabricClient() {
  // A graceful goodbye: tell the server (half-close), keep driving progress
  // -- its writes into our memory need it -- until it closes its side,
  // which it does once its last write to us completed; bounded.
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  if (socket_ >= 0) {
    ::shutdown(socket_, SHUT_WR);
    while (endpoint_ != nullptr && !PeerClosed(socket_) &&
           Clock::now() < deadline) {
      endpoint_->Progress();
    }
    ::close(socket_);
  }
  // Our own writes read our staging buffer: let them finish too.
  while (endpoint_ != nullptr && endpoint_->outstanding() > 0 &&
         Clock::now() < deadline) {
    endpoint_->Progress();
  }
}

Status Client::Connect(const ClientOptions& options, const std::string& host,
                       uint16_t port, std::unique_ptr<Client>* client) {
  KVS_RETURN_IF_ERROR(CheckSecret(options.secret));
  if (options.endpoint.provider == fabric::Provider::kStream) {
    return StreamClient::Connect(options, host, port, client);
  }
  return FabricClient::Connect(options, host, port, client);
}

Status FabricClient::Connect(const ClientOptions& options,
                             const std::string& host, uint16_t port,
                             std::unique_ptr<Client>* client) {
  if (options.request_buffer_bytes % kUnitBytes != 0 ||
      options.reply_buffer_bytes % kUnitBytes != 0 ||
      options.request_buffer_bytes < kBufferBytesMin ||
      options.reply_buffer_bytes < kBufferBytesMin ||
      options.request_buffer_bytes > kBufferBytesMax ||
      options.reply_buffer_bytes > kBufferBytesMax) {
    return Status::InvalidArgument(
        "buffer sizes must be multiples of 64 bytes between 4 KiB and 64 MiB");
  }
  std::unique_ptr<FabricClient> connected(new FabricClient());
  connected->options_ = options;
  KVS_RETURN_IF_ERROR(connected->Init(host, port));
  *client = std::move(connected);
  return Status::Ok();
}

Status FabricClient::Init(const std::string& host, uint16_t port) {
  fabric::EndpointOptions endpoint_options = options_.endpoint;
  endpoint_options.wait_fd = options_.wait_fd;
  KVS_RETURN_IF_ERROR(fabric::Endpoint::Open(endpoint_options, &endpoint_));
  // Asked now and then while a post waits for the server's progress: it
  // may be blocked, so knock too.
  endpoint_->SetPeerGoneCheck([this] {
    if (socket_ < 0) return true;
    KnockIfDue(Clock::now());
    return PeerClosed(socket_);
  });
  staging_.Resize(options_.request_buffer_bytes);
  std::memset(staging_.data(), 0, staging_.size());
  replies_.Resize(options_.reply_buffer_bytes);
  std::memset(replies_.data(), 0, replies_.size());
  KVS_RETURN_IF_ERROR(
      endpoint_->Register(staging_.data(), staging_.size(), &staging_region_));
  KVS_RETURN_IF_ERROR(
      endpoint_->Register(replies_.data(), replies_.size(), &replies_region_));
  KVS_RETURN_IF_ERROR(
      channel::Connect(host, port, options_.bootstrap_timeout, &socket_));
  Hello hello;
  hello.kind = options_.kind;
  hello.provider = options_.endpoint.provider;
  hello.address = endpoint_->address();
  hello.reply_buffer = {replies_region_->RemoteAddress(0),
                        replies_region_->key(), replies_.size()};
  hello.request_buffer_bytes = options_.request_buffer_bytes;
  Welcome welcome;
  KVS_RETURN_IF_ERROR(ClientHandshake(
      socket_, options_.secret, options_.bootstrap_timeout, &hello, &welcome));
  connection_id_ = welcome.connection_id;
  if (welcome.request_buffer.size != options_.request_buffer_bytes) {
    return Status::Corruption("the server's request buffer has another size");
  }
  KVS_RETURN_IF_ERROR(endpoint_->AddPeer(welcome.address, &server_));
  server_requests_ = welcome.request_buffer;
  request_ring_ = std::make_unique<RingAllocator>(
      static_cast<uint32_t>(server_requests_.size), kUnitBytes);
  reply_ring_ =
      std::make_unique<RingAllocator>(options_.reply_buffer_bytes, kUnitBytes);
  reply_slot_bytes_ = std::max<uint32_t>(
      2 * kUnitBytes, RoundToUnit(options_.reply_slot_bytes));
  return Status::Ok();
}

std::optional<RingAllocator::Allocation> FabricClient::TakeReplySlot(
    uint32_t bytes) {
  const uint32_t largest =
      reply_ring_->capacity() / 2 / kUnitBytes * kUnitBytes;
  return reply_ring_->Allocate(std::min(
      largest, std::max<uint32_t>(2 * kUnitBytes, RoundToUnit(bytes))));
}

Status FabricClient::SendMessage(const MessageHeader& header,
                                 std::string_view payload,
                                 uint64_t* allocation) {
  // Before posting: a post may wait for the server's progress.
  KnockIfDue(Clock::now());
  const uint32_t bytes = static_cast<uint32_t>(MessageBytes(payload.size()));
  const auto space = request_ring_->Allocate(bytes);
  if (!space) {
    return Status::Busy("the server's request buffer is full");
  }
  // Noted, and acted on in Poll (see writes_done_).
  auto failed = [this](Status status) {
    if (!status.ok() && write_failure_.ok()) write_failure_ = status;
  };
  if (space->wrapped_from) {
    // Tell the server the rest of its buffer is empty: next at offset 0.
    MessageHeader reset;
    reset.kind = MessageKind::kReset;
    reset.sequence = sequence_++;
    char* at = staging_.data() + *space->wrapped_from;
    EncodeMessage(reset, {}, at);
    Status posted =
        endpoint_->PostWrite(server_, at, kHeaderBytes, *staging_region_,
                             server_requests_.address + *space->wrapped_from,
                             server_requests_.key, failed);
    if (!posted.ok()) {
      request_ring_->Release(space->id);
      return BreakOnPostFailure(posted);
    }
    ++stats_.wraps;
  }
  MessageHeader sent = header;
  sent.sequence = sequence_++;
  char* at = staging_.data() + space->offset;
  EncodeMessage(sent, payload, at);
  const Status posted = endpoint_->PostWrite(
      server_, at, bytes, *staging_region_,
      server_requests_.address + space->offset, server_requests_.key, failed);
  if (!posted.ok()) {
    request_ring_->Release(space->id);
    return BreakOnPostFailure(posted);
  }
  *allocation = space->id;
  return Status::Ok();
}

void FabricClient::KnockIfDue(Clock::time_point now) {
  if (now - last_knock_ < kKnockEvery) return;
  last_knock_ = now;
  Knock(socket_);
  ++stats_.knocks;
}

Status FabricClient::Submit(std::string_view request, Callback done) {
  if (!broken_.ok()) return broken_;
  if (MessageBytes(request.size()) > server_requests_.size) {
    return Status::TooLarge("a request of " + std::to_string(request.size()) +
                            " bytes does not fit the " +
                            std::to_string(server_requests_.size) +
                            "-byte request buffer");
  }
  if (outstanding_.size() >= options_.max_outstanding) {
    return Status::Busy("too many outstanding requests");
  }
  auto slot = TakeReplySlot(reply_slot_bytes_);
  if (!slot) return Status::Busy("the reply buffer is full");
  auto entry = std::make_unique<Outstanding>();
  entry->request_id = next_request_id_++;
  entry->slot = *slot;
  MessageHeader header;
  header.kind = MessageKind::kRequest;
  header.request_id = entry->request_id;
  header.reply_offset = slot->offset;
  header.reply_capacity = slot->size;
  uint64_t space = 0;
  const Status sent = SendMessage(header, request, &space);
  if (!sent.ok()) {
    reply_ring_->Release(slot->id);
    return sent;
  }
  entry->sequence = sequence_ - 1;  // SendMessage numbered it last
  entry->request_space = space;
  entry->deadline = Clock::now() + options_.request_timeout;
  entry->done = std::move(done);
  ++stats_.requests;
  outstanding_.emplace(entry->request_id, std::move(entry));
  return Status::Ok();
}

Status FabricClient::BreakOnPostFailure(const Status& posted) {
  // A write the provider would not take (even after retrying for its post
  // timeout) means the server is gone or stuck: not backpressure.
  Break(Status::IoError("the server does not take writes: " +
                        std::string(posted.message())));
  return broken_;
}

void FabricClient::Break(Status status) {
  if (!broken_.ok()) return;
  broken_ = status;
  if (socket_ >= 0) {
    ::close(socket_);
    socket_ = -1;
  }
  auto failed = std::move(outstanding_);
  outstanding_.clear();
  for (auto& [id, entry] : failed) {
    if (entry->done) entry->done(status, {});
  }
}

bool FabricClient::PollOne(Outstanding* request, bool* finished) {
  *finished = false;
  if (request->fetch_bytes != 0) {
    // Ask for the rest of a reply sent in part (retried while full).
    auto slot = TakeReplySlot(static_cast<uint32_t>(request->fetch_bytes));
    if (!slot) return false;
    MessageHeader header;
    header.kind = MessageKind::kFetch;
    header.request_id = request->request_id;
    header.reply_offset = slot->offset;
    header.reply_capacity = slot->size;
    uint64_t space = 0;
    const Status sent = SendMessage(
        header,
        EncodeFetch({request->request_id,
                     static_cast<uint32_t>(request->assembled.size())}),
        &space);
    if (!sent.ok()) {
      reply_ring_->Release(slot->id);
      return false;
    }
    request->slot = *slot;
    request->sequence = sequence_ - 1;
    request->request_space = space;
    request->fetch_bytes = 0;
    ++stats_.fetches;
    return true;
  }
  PollResult result;
  MessageHeader header;
  std::string_view payload;
  char* at = replies_.data() + request->slot.offset;
  const Status status = PollMessage(at, request->slot.size, request->sequence,
                                    &result, &header, &payload);
  if (!status.ok()) {
    Break(status);
    return false;
  }
  if (result != PollResult::kComplete) return false;
  if (header.request_id != request->request_id ||
      (header.kind != MessageKind::kReply &&
       header.kind != MessageKind::kReplyPart) ||
      header.total_bytes > kReplyBytesMax ||
      request->assembled.size() + payload.size() > header.total_bytes) {
    Break(Status::Corruption("a reply that does not match its request"));
    return false;
  }
  // The server consumed the request: its space is free again.
  if (request->request_space) {
    request_ring_->Release(*request->request_space);
    request->request_space.reset();
  }
  if (header.kind == MessageKind::kReplyPart) {
    request->assembled.append(payload);
    ClearMessage(at, header.message_bytes);
    reply_ring_->Release(request->slot.id);
    // Future replies get slots large enough for this one (up to half the
    // buffer, the largest slot); the rest of this one is fetched likewise.
    const uint64_t whole = MessageBytes(header.total_bytes);
    reply_slot_bytes_ = std::max(
        reply_slot_bytes_,
        std::min<uint32_t>(RoundToUnit(whole), reply_ring_->capacity() / 2 /
                                                   kUnitBytes * kUnitBytes));
    request->fetch_bytes = RoundToUnit(
        MessageBytes(header.total_bytes - request->assembled.size()));
    request->deadline = Clock::now() + options_.request_timeout;
    return PollOne(request, finished);
  }
  std::string_view reply = payload;
  if (!request->assembled.empty()) {
    request->assembled.append(payload);
    reply = request->assembled;
  }
  if (reply.size() != header.total_bytes) {
    Break(Status::Corruption("a reply shorter than its announced size"));
    return false;
  }
  ++stats_.replies;
  Callback done = std::move(request->done);
  const uint64_t slot_id = request->slot.id;
  if (done) done(Status::Ok(), reply);
  ClearMessage(at, header.message_bytes);
  reply_ring_->Release(slot_id);
  *finished = true;
  return true;
}

Status Client::WriteRemote(const fabric::RemoteBuffer& target, uint64_t offset,
                           std::string_view bytes,
                           std::function<void(Status)> done) {
  const RemotePiece piece{&target, offset, bytes};
  return WriteRemote(std::span<const RemotePiece>(&piece, 1), std::move(done));
}

Status FabricClient::WriteRemote(std::span<const RemotePiece> pieces,
                                 std::function<void(Status)> done) {
  if (!broken_.ok()) return broken_;
  if (pieces.empty() || pieces.size() > remote_pieces_max()) {
    return Status::InvalidArgument("a remote write of " +
                                   std::to_string(pieces.size()) +
                                   " pieces (this connection takes 1 to " +
                                   std::to_string(remote_pieces_max()) + ")");
  }
  std::vector<fabric::Endpoint::RemoteTarget> targets;
  targets.reserve(pieces.size());
  size_t total = 0;
  for (const RemotePiece& piece : pieces) {
    const fabric::RemoteBuffer& target = *piece.target;
    if (piece.bytes.empty() || piece.offset > target.size ||
        piece.bytes.size() > target.size - piece.offset) {
      return Status::InvalidArgument(
          "a write of " + std::to_string(piece.bytes.size()) + " bytes at " +
          std::to_string(piece.offset) + " does not fit the " +
          std::to_string(target.size) + "-byte remote buffer");
    }
    targets.push_back(
        {target.address + piece.offset, piece.bytes.size(), target.key});
    total += piece.bytes.size();
  }
  if (write_ring_ == nullptr) {
    write_staging_.Resize(options_.write_staging_bytes);
    KVS_RETURN_IF_ERROR(endpoint_->Register(
        write_staging_.data(), write_staging_.size(), &write_staging_region_));
    write_ring_ = std::make_unique<RingAllocator>(options_.write_staging_bytes,
                                                  kUnitBytes);
  }
  if (total > write_ring_->capacity()) {
    return Status::TooLarge("a remote write larger than the staging buffer");
  }
  const auto space = write_ring_->Allocate(RoundToUnit(total));
  if (!space) return Status::Busy("the write staging buffer is full");
  char* const at = write_staging_.data() + space->offset;
  size_t copied = 0;
  for (const RemotePiece& piece : pieces) {
    std::memcpy(at + copied, piece.bytes.data(), piece.bytes.size());
    copied += piece.bytes.size();
  }
  const uint64_t id = space->id;
  const auto now = Clock::now();
  KnockIfDue(now);  // before posting: a post may wait for its progress
  write_deadlines_.emplace(id, now + options_.request_timeout);
  const Status posted = endpoint_->PostWrite(
      server_, at, *write_staging_region_, targets,
      [this, id, done = std::move(done)](Status status) mutable {
        writes_done_.push_back({id, std::move(status), std::move(done)});
      },
      // On one host (shm) a completed write is in the peer's shared memory
      // already; over a network the default completion can come while the
      // bytes are still in our socket buffer (tcp).
      options_.endpoint.provider == fabric::Provider::kShm
          ? fabric::Endpoint::Semantics::kBuffered
          : fabric::Endpoint::Semantics::kDelivered,
      // A full transmit queue is backpressure the writer waits out by
      // posting again later, serving its other peers meanwhile: a peer that
      // stops taking bytes must not hold the writer's thread.
      fabric::Endpoint::Room::kNow);
  if (!posted.ok()) {
    write_ring_->Release(id);
    write_deadlines_.erase(id);
    if (posted.IsBusy()) return posted;
    return BreakOnPostFailure(posted);
  }
  return Status::Ok();
}

size_t FabricClient::Poll() {
  if (!broken_.ok()) return 0;
  endpoint_->Progress();
  // Finished remote writes: the staging space returns, then the owner hears.
  std::vector<FinishedWrite> finished_writes;
  finished_writes.swap(writes_done_);
  for (FinishedWrite& write : finished_writes) {
    write_ring_->Release(write.staging_id);
    write_deadlines_.erase(write.staging_id);
    if (write.done) write.done(write.status);
    if (!write.status.ok()) Break(write.status);
  }
  if (!write_failure_.ok()) Break(write_failure_);
  if (!broken_.ok()) return 0;
  if (++polls_ % 256 == 0 && PeerClosed(socket_)) {
    Break(Status::IoError("the server closed the connection"));
    return 0;
  }
  size_t finished = 0;
  const auto now = Clock::now();
  // Waiting for the server: its progress completes what is in flight.
  if (!outstanding_.empty() || writes_in_flight() > 0) KnockIfDue(now);
  // A remote write is bounded like a request: one the provider never
  // completes would hold its staging space (and, the ring being freed in
  // order, all after it) for ever.
  if (!write_deadlines_.empty() && now > write_deadlines_.begin()->second) {
    Break(Status::IoError("a remote write did not complete within " +
                          std::to_string(options_.request_timeout.count()) +
                          " ms: the peer is unresponsive; connection closed"));
    return finished;
  }
  std::vector<uint64_t> done;
  for (auto& [id, request] : outstanding_) {
    bool complete = false;
    PollOne(request.get(), &complete);
    if (!broken_.ok()) return finished;
    if (complete) {
      done.push_back(id);
    } else if (now > request->deadline) {
      Break(Status::IoError(
          "no reply within " +
          std::to_string(options_.request_timeout.count()) +
          " ms: the server is unresponsive; connection closed"));
      return finished;
    }
  }
  for (const uint64_t id : done) outstanding_.erase(id);
  finished += done.size();
  return finished;
}

Status Client::Call(std::string_view request, std::string* reply) {
  bool done = false;
  Status result;
  const auto deadline = Clock::now() + request_timeout();
  for (;;) {
    const Status submitted =
        Submit(request, [&](Status status, std::string_view bytes) {
          result = status;
          if (status.ok()) reply->assign(bytes);
          done = true;
        });
    if (submitted.ok()) break;
    if (!submitted.IsBusy() || Clock::now() > deadline) return submitted;
    Poll();
  }
  while (!done) {
    const size_t finished = Poll();
    if (done) break;
    if (!health().ok()) return health();
    if (finished == 0) AwaitArrivals();
  }
  return result;
}

void FabricClient::AwaitArrivals() {
  sched_yield();  // let the threads we wait for run on a busy machine
}

std::optional<std::chrono::steady_clock::time_point>
FabricClient::oldest_unanswered() const {
  // Both maps are keyed in posting order; each entry's deadline is its
  // posting time plus the request timeout.
  std::optional<Clock::time_point> oldest;
  if (!write_deadlines_.empty()) oldest = write_deadlines_.begin()->second;
  if (!outstanding_.empty()) {
    const Clock::time_point deadline = outstanding_.begin()->second->deadline;
    if (!oldest || deadline < *oldest) oldest = deadline;
  }
  if (oldest) *oldest -= options_.request_timeout;
  return oldest;
}

ClientStats FabricClient::stats() const {
  ClientStats stats = stats_;
  stats.reply_slot_bytes = reply_slot_bytes_;
  return stats;
}

}  // namespace kvs::channel
