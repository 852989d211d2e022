#include "door/answer_watcher.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

namespace kvs::door {

AnswerWatcher::~AnswerWatcher() {
  if (copy_ >= 0) ::close(copy_);
}

void AnswerWatcher::EndOfTurn() {
  const channel::RequestHandler::AnswerWatch watch =
      handler_->EndOfTurn(/*may_watch=*/true);
  if (watch.fd < 0) return;
  if (copy_ < 0 || watch.source != source_) {
    if (copy_ >= 0) {
      shard_->Unwatch(copy_);
      ::close(copy_);
      copy_ = -1;
    }
    // Copied while `watch.owner` keeps the descriptor open: the copy stays
    // valid (and watched) whatever becomes of its owner.
    copy_ = ::fcntl(watch.fd, F_DUPFD_CLOEXEC, 0);
    if (copy_ < 0) {
      handler_->AnswersArrived();  // cannot watch: the handler's thread does
      return;
    }
    source_ = watch.source;
  }
  ++watches_;
  // One shot: armed again only by the next end of turn that leaves writes
  // in flight.
  shard_->Watch(copy_, EPOLLIN | EPOLLONESHOT, shared_from_this());
}

void AnswerWatcher::OnReady(uint32_t events) {
  (void)events;
  ++arrivals_;
  handler_->AnswersArrived();
  EndOfTurn();
}

}  // namespace kvs::door
