#include "door/client_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "channel/bootstrap_auth.h"
#include "door/client_handshake.h"
#include "util/coding.h"
#include "util/status.h"
#include "util/turns.h"

namespace kvs::door {
namespace {

// Bytes read from one connection in one turn at most: one busy client does
// not starve the shard's others.
constexpr size_t kReadPerTurn = 4u << 20;
constexpr size_t kReadChunk = 256u << 10;

}  // namespace

ClientConnection::ClientConnection(DoorContext* context, shard::Shard* shard,
                                   int socket, std::string peer)
    : context_(context),
      shard_(shard),
      socket_(socket),
      peer_(std::move(peer)) {}

ClientConnection::~ClientConnection() {
  if (state_ != State::kClosed) {
    ::close(socket_);
    context_->counters.connections.fetch_sub(1);
  }
}

void ClientConnection::Begin() {
  if (context_->tls != nullptr) {
    const Status created = TlsSession::Create(*context_->tls, &tls_);
    if (!created.ok()) {
      CountRefusal(std::string(created.message()));
      Close();
      return;
    }
  }
  channel::Challenge challenge;
  challenge.client_proof_required = !context_->options.client_secret.empty();
  challenge.nonce = channel::RandomNonce();
  challenge_nonce_ = challenge.nonce;
  Queue(channel::EncodeChallenge(challenge));
  watched_ = EPOLLIN | EPOLLRDHUP;
  shard_->Watch(socket_, watched_, shared_from_this());
  ScheduleSettle();
  std::weak_ptr<ClientConnection> weak = weak_from_this();
  const auto timeout = context_->options.handshake_timeout;
  shard_->At(shard::Shard::Clock::now() + timeout, [weak, timeout] {
    const std::shared_ptr<ClientConnection> self = weak.lock();
    if (self != nullptr && self->state_ == State::kHandshake) {
      self->Refuse("no handshake within " + std::to_string(timeout.count()) +
                   " ms");
    }
  });
}

void ClientConnection::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  shard_->Unwatch(socket_);
  ::close(socket_);
  context_->counters.connections.fetch_sub(1);
  in_.clear();
  out_.clear();
  tls_.reset();
}

void ClientConnection::OnReady(uint32_t events) {
  if (state_ == State::kClosed) return;
  if ((events & EPOLLERR) != 0) {
    Close();
    return;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0 && !held_ &&
      state_ != State::kRefused) {
    if (!ReadSocket()) {
      Close();  // the client is gone: the replies still to come are dropped
      return;
    }
    TakeFrames();
  } else if ((events & EPOLLHUP) != 0) {
    Close();
    return;
  }
  ScheduleSettle();
}

bool ClientConnection::ReadSocket() {
  thread_local std::string chunk(kReadChunk, '\0');
  size_t taken = 0;
  while (taken < kReadPerTurn) {
    const ssize_t n = ::recv(socket_, chunk.data(), chunk.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    if (in_at_ == in_.size()) {
      in_.clear();
      in_at_ = 0;
    }
    const std::string_view received(chunk.data(), static_cast<size_t>(n));
    if (tls_ == nullptr) {
      in_.append(received);
    } else {
      const Status opened = tls_->Receive(received, &in_);
      if (!opened.ok()) {
        FailTls(opened);
        return true;
      }
      if (tls_->peer_closed()) return false;
    }
    taken += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < chunk.size()) return true;
  }
  return true;
}

void ClientConnection::FailTls(const Status& why) {
  CountRefusal(std::string(why.message()));
  state_ = State::kRefused;  // nothing it sent is executed
  in_.clear();
  in_at_ = 0;
  out_.clear();  // only the session's alert leaves
  out_sent_ = 0;
}

bool ClientConnection::MayTake() const {
  return in_flight_ < context_->options.max_in_flight &&
         OutputWaiting() <= kOutputHigh;
}

void ClientConnection::TakeFrames() {
  while (state_ == State::kHandshake || state_ == State::kOpen) {
    if (!MayTake()) {
      if (!held_ && OutputWaiting() > kOutputHigh) {
        context_->counters.output_stalls.fetch_add(1);
      }
      held_ = true;
      break;
    }
    const size_t available = in_.size() - in_at_;
    if (available < 4) break;
    const size_t size = coding::DecodeFixed32(in_.data() + in_at_);
    if (size > context_->options.max_frame_bytes) {
      context_->counters.malformed.fetch_add(1);
      Close();  // a broken or hostile client: drop it, serve the others
      return;
    }
    if (available < 4 + size) break;
    const std::string_view body =
        std::string_view(in_).substr(in_at_ + 4, size);
    in_at_ += 4 + size;
    if (state_ == State::kHandshake) {
      OnHello(body);
    } else {
      Execute(body);
    }
  }
  if (in_at_ == in_.size()) {
    in_.clear();
    in_at_ = 0;
  } else if (in_at_ > (1u << 20)) {
    in_.erase(0, in_at_);
    in_at_ = 0;
  }
}

void ClientConnection::OnHello(std::string_view body) {
  Hello hello;
  const Status decoded = DecodeHello(body, &hello);
  if (!decoded.ok()) {
    Refuse("the first frame is no handshake Hello: " +
           std::string(decoded.message()));
    return;
  }
  const std::string& secret = context_->options.client_secret;
  if (!secret.empty() && !channel::Verify(hello.proof, secret, kHelloPurpose,
                                          challenge_nonce_, hello.nonce)) {
    Refuse(
        "authentication failed: the client does not hold this cluster's "
        "client secret (wrong or missing --client-secret-file)");
    return;
  }
  state_ = State::kOpen;
  Queue(EncodeAdmission(
      0, "",
      channel::Prove(secret, kAdmitPurpose, hello.nonce, challenge_nonce_)));
}

void ClientConnection::Execute(std::string_view request) {
  ++in_flight_;
  context_->counters.answering.fetch_add(1);
  // Once per turn of this shard: the handler's end of turn (replicated
  // writes leave together, without waking the replication thread).
  thread_local bool end_of_turn_scheduled = false;
  if (!end_of_turn_scheduled) {
    end_of_turn_scheduled = true;
    SetEndsTurns(true);
    AnswerWatcher* watcher = context_->watchers[shard_->index()].get();
    shard_->Defer([watcher] {
      end_of_turn_scheduled = false;
      watcher->EndOfTurn();
    });
  }
  std::shared_ptr<ClientConnection> self = shared_from_this();
  // A client's door: whatever its bytes say, a request here is a client's
  // (no session), never a replication message.
  context_->handler->HandleAsync(
      /*session=*/nullptr, request, [self](std::string reply) {
        shard::Shard* shard = self->shard_;
        if (shard->OnShard()) {
          self->Answer(std::move(reply));  // run to completion: no hop
        } else {
          shard->Post([self, reply = std::move(reply)]() mutable {
            self->Answer(std::move(reply));
          });
        }
      });
}

void ClientConnection::Answer(std::string reply) {
  --in_flight_;
  if (state_ == State::kOpen) {
    Queue(reply);
    context_->counters.requests.fetch_add(1);
    ScheduleSettle();
  }
  context_->counters.answering.fetch_sub(1, std::memory_order_release);
}

void ClientConnection::Refuse(const std::string& why) {
  CountRefusal(why);
  if (tls_ != nullptr && !tls_->established()) {
    Close();  // no Admission can be sent before the TLS handshake completes
    return;
  }
  Queue(EncodeAdmission(static_cast<uint8_t>(Status::Code::kInvalidArgument),
                        "unauthenticated: " + why,
                        std::string(channel::kProofBytes, '\0')));
  state_ = State::kRefused;  // nothing it sent is executed
  in_.clear();
  in_at_ = 0;
  ScheduleSettle();
}

void ClientConnection::CountRefusal(const std::string& why) {
  const uint64_t count = context_->counters.refusals.fetch_add(1) + 1;
  if ((count & (count - 1)) == 0) {  // the 1st, 2nd, 4th...: bounded logging
    std::fprintf(stderr,
                 "WARN kvs client door: refused a client connection from %s: "
                 "%s (%llu refused so far)\n",
                 peer_.c_str(), why.c_str(),
                 static_cast<unsigned long long>(count));
  }
}

void ClientConnection::Queue(std::string_view body) {
  coding::PutFixed32(&out_, static_cast<uint32_t>(body.size()));
  out_.append(body);
}

void ClientConnection::ScheduleSettle() {
  if (settle_scheduled_ || state_ == State::kClosed) return;
  settle_scheduled_ = true;
  shard_->Defer([self = shared_from_this()] { self->Settle(); });
}

void ClientConnection::Settle() {
  settle_scheduled_ = false;
  if (state_ == State::kClosed) return;
  if (!Flush()) {
    Close();
    return;
  }
  if (state_ == State::kRefused) {
    if (tls_ != nullptr && out_sent_ == out_.size()) {
      tls_->Shutdown();  // after the Admission: a close_notify
      if (!Flush()) {
        Close();
        return;
      }
    }
    if (OutputWaiting() == 0) {
      Close();
    } else {
      Watch();
    }
    return;
  }
  const size_t max_in_flight = context_->options.max_in_flight;
  if (held_ && in_flight_ <= max_in_flight / 2 &&
      OutputWaiting() < kOutputLow) {
    held_ = false;
    TakeFrames();  // the frames read before it stopped, in order
    if (state_ == State::kClosed) return;
    if (!Flush()) {
      Close();
      return;
    }
  }
  Watch();
}

bool ClientConnection::Flush() {
  if (tls_ == nullptr) {
    if (!Send(std::string_view(out_).substr(out_sent_), &out_sent_)) {
      return false;
    }
  } else {
    // Encrypts only a bounded amount ahead of the socket: the rest waits
    // as plaintext, counted against the output bound.
    for (;;) {
      size_t taken = 0;
      const Status encrypted =
          tls_->Encrypt(std::string_view(out_).substr(out_sent_), &taken);
      out_sent_ += taken;
      if (!encrypted.ok()) FailTls(encrypted);
      const std::string_view ciphertext = tls_->output();
      if (ciphertext.empty()) break;
      size_t sent = 0;
      if (!Send(ciphertext, &sent)) return false;
      tls_->Sent(sent);
      if (sent < ciphertext.size()) break;  // the socket is full
    }
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  } else if (out_sent_ > (1u << 20)) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
  return true;
}

bool ClientConnection::Send(std::string_view bytes, size_t* sent) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::send(socket_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  *sent += done;
  return true;
}

size_t ClientConnection::OutputWaiting() const {
  return out_.size() - out_sent_ +
         (tls_ != nullptr ? tls_->output().size() : 0);
}

bool ClientConnection::SocketOutputWaiting() const {
  return tls_ != nullptr ? !tls_->output().empty() : out_sent_ < out_.size();
}

void ClientConnection::Watch() {
  uint32_t events = 0;
  if (state_ != State::kRefused && !held_) events |= EPOLLIN | EPOLLRDHUP;
  if (SocketOutputWaiting()) events |= EPOLLOUT;
  if (events != watched_) {
    watched_ = events;
    shard_->Watch(socket_, events, nullptr);
  }
}

}  // namespace kvs::door
