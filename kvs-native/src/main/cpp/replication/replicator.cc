#include "replication/replicator.h"

#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "replication/index_installer.h"
#include "replication/replicator_stream.h"
#include "util/hash.h"
#include "util/thread_name.h"
#include "util/turns.h"

namespace kvs::replication {
namespace {

using Clock = std::chrono::steady_clock;

// How long the replication thread naps while backups complete its writes.
constexpr std::chrono::microseconds kWaitNap{20};
// How long it blocks at most on its connections' arrivals (WaitForArrivals):
// as often as clients knock (channel::kKnockEvery), so an arrival
// fi_trywait missed, here or at a backup, costs no more than there.
constexpr std::chrono::microseconds kArrivalWait = channel::kKnockEvery;
constexpr std::chrono::milliseconds kIdleWait{100};
// How long it blocks at most on connections that never miss a wake-up
// (Client::wakes_reliably): only the timeouts need it to look.
constexpr std::chrono::milliseconds kReliableArrivalWait{10};
// Turns a Drive takes at most while they make progress.
constexpr int kDriveTurnsMax = 4;
// The least a message waits for room in a transmit queue (PeerFor).
constexpr std::chrono::milliseconds kMessageRoomWaitMin{2'000};
// A joining backup may get its stream's OPEN before it opened the region
// (a split's daughters are opened on every member at once): refused so
// (not held there, or at an older epoch), the OPEN is sent again this long
// after, for at most kOpenRetryWindow from the stream's start.
constexpr std::chrono::milliseconds kOpenRetryDelay{2};
constexpr std::chrono::milliseconds kOpenRetryWindow{2'000};

// Whether a backup refused an OPEN only because it has not opened the
// region at this epoch yet.
bool RefusedForNow(const Status& status) {
  return status.code() == Status::Code::kWrongRegion ||
         status.code() == Status::Code::kStaleEpoch;
}

}  // namespace

// The ticket of the last Send-Index event this thread queued.
thread_local uint64_t last_queued_ticket = 0;

size_t Replicator::Group::Stripe(std::string_view key) {
  return Hash64(key.data(), key.size()) % kStripes;
}

namespace {
std::atomic<uint64_t> next_replicator_id{1};
}  // namespace

Replicator::Replicator(ReplicatorOptions options)
    : options_(std::move(options)),
      answer_set_(options_.endpoint.provider == fabric::Provider::kStream
                      ? ::epoll_create1(EPOLL_CLOEXEC)
                      : -1),
      id_(next_replicator_id.fetch_add(1)),
      thread_([this] {
        SetThreadName(kThreadReplication);
        Run();
      }),
      catch_up_reader_([this] { ReadCatchUps(); }),
      connector_([this] { ConnectPeers(); }) {}

Replicator::~Replicator() {
  CloseAll();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    NotifyWorkLocked();
    ++catch_up_generation_;
    catch_up_work_.notify_all();
    dial_work_.notify_all();
  }
  thread_.join();
  catch_up_reader_.join();
  connector_.join();  // after an attempt under way: bounded by its timeouts
  if (work_fd_ >= 0) ::close(work_fd_);
  // A watcher may hold a copy of it (door/answer_watcher.h): the set lives
  // on, empty once the connections are closed.
  if (answer_set_ >= 0) ::close(answer_set_);
}

void Replicator::AnswerSetAddLocked(Peer* peer) {
  if (answer_set_ < 0 || peer->in_answer_set ||
      !peer->client->wakes_reliably()) {
    return;
  }
  struct epoll_event watch {};
  watch.events = EPOLLIN;
  watch.data.fd = peer->client->wait_fd();
  if (::epoll_ctl(answer_set_, EPOLL_CTL_ADD, watch.data.fd, &watch) == 0) {
    peer->in_answer_set = true;
  }
}

void Replicator::AnswerSetRemoveLocked(Peer* peer) {
  if (!peer->in_answer_set) return;
  (void)::epoll_ctl(answer_set_, EPOLL_CTL_DEL, peer->client->wait_fd(),
                    nullptr);
  peer->in_answer_set = false;
}

void Replicator::NotifyWorkLocked() {
  ++work_generation_;
  work_.notify_all();
  if (polling_ && work_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(work_fd_, &one, sizeof one);
  }
}

bool Replicator::WaitForArrivals(
    const std::vector<std::shared_ptr<Peer>>& peers, uint64_t seen) {
  if (work_fd_ < 0) return false;
  std::vector<struct pollfd> watched;
  bool reliable = true;
  // A shard watches the connections for their answers (Drive): this
  // thread looks only at its bound, for the timeouts.
  const bool watcher = answer_watched_.load(std::memory_order_acquire);
  {
    // The connections are used under the turn's lock only (Drive).
    std::lock_guard<std::mutex> turn(turn_mutex_);
    for (const auto& peer : peers) {
      if (!peer->client->health().ok()) continue;
      if (watcher && peer->in_answer_set) continue;
      const int fd = peer->client->wait_fd();
      if (fd < 0) return false;
      // Something arrived already: progress it now.
      if (!peer->client->TryWait()) return true;
      watched.push_back({fd, POLLIN, 0});
      reliable &= peer->client->wakes_reliably();
    }
  }
  watched.push_back({work_fd_, POLLIN, 0});
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (work_generation_ != seen || !running_) return true;
    polling_ = true;
  }
  // Sockets that wake reliably (the stream transport) need no knock-sized
  // bound: the wait ends on an arrival or new work, and at least every
  // kReliableArrivalWait for the timeouts.
  const auto wait =
      reliable ? std::chrono::microseconds(kReliableArrivalWait) : kArrivalWait;
  const struct timespec bound {
    static_cast<time_t>(wait.count() / 1'000'000),
        static_cast<long>(wait.count() % 1'000'000) * 1000
  };
  ::ppoll(watched.data(), watched.size(), &bound, nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  polling_ = false;
  uint64_t drained;
  (void)!::read(work_fd_, &drained, sizeof drained);
  return true;
}

std::shared_ptr<Replicator::Group> Replicator::Find(uint64_t region_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = groups_.find(region_id);
  return it == groups_.end() ? nullptr : it->second;
}

void Replicator::ForgetLocked(const std::shared_ptr<Group>& group) {
  const auto it = groups_.find(group->region_id);
  if (it != groups_.end() && it->second == group) groups_.erase(it);
  const auto engine = by_engine_region_.find(group->engine_region_id);
  if (engine != by_engine_region_.end() && engine->second == group) {
    by_engine_region_.erase(engine);
  }
  send_index_groups_.store(by_engine_region_.size());
}

void Replicator::CloseAll() {
  std::vector<uint64_t> regions;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [region_id, group] : groups_) regions.push_back(region_id);
  }
  for (const uint64_t region_id : regions) (void)Close(region_id);
}

void Replicator::Abandon(uint64_t region_id, const std::string& why) {
  std::shared_ptr<Group> group;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = groups_.find(region_id);
    if (it == groups_.end()) return;
    group = it->second;
    ForgetLocked(group);
  }
  {
    std::lock_guard<std::mutex> order(group->order);  // no write in between
    std::lock_guard<std::mutex> lock(group->mutex);
    group->ended = Status::Closed(why);
    for (const auto& stream : group->streams) {
      if (stream->failure.ok()) stream->failure = group->ended;
      stream->state = Stream::State::kFailed;
    }
    // The streams hold the group: let go of them (the replication thread
    // pumps only the streams of groups it finds).
    group->streams.clear();
    group->changed.notify_all();
  }
  Settle(group.get(), /*ending=*/true);
}

void Replicator::Open(uint64_t region_id, uint64_t epoch,
                      std::vector<BackupTarget> backups, ReplicationMode mode,
                      lsm::Region* region, size_t min_replicas,
                      std::string stream_key) {
  std::shared_ptr<Group> group = Find(region_id);
  if (group != nullptr &&
      (group->mode != mode ||
       (mode == ReplicationMode::kSendIndex && group->region != region))) {
    // Another region object (a promotion reopened it) or mode: nothing of
    // the old streams applies.
    Abandon(region_id,
            "the region is reopened at epoch " + std::to_string(epoch));
    group = nullptr;
  }
  if (group == nullptr) {
    group = std::make_shared<Group>();
    group->region_id = region_id;
    group->mode = mode;
    group->region = region;
    group->engine_region_id =
        mode == ReplicationMode::kSendIndex ? region->id() : 0;
    group->volume =
        mode == ReplicationMode::kSendIndex ? region->volume() : nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    groups_[region_id] = group;
    if (mode == ReplicationMode::kSendIndex) {
      by_engine_region_[group->engine_region_id] = group;
      send_index_groups_.store(by_engine_region_.size());
    }
  }
  {
    std::lock_guard<std::mutex> order(group->order);  // no write in between
    // A target not joining is required (in sync, kept or new): with none,
    // the writes waiting may be held by this primary alone.
    if (std::all_of(
            backups.begin(), backups.end(),
            [](const BackupTarget& target) { return target.joining; })) {
      SyncWaitersLeftAlone(group.get(), region);
    }
    std::lock_guard<std::mutex> lock(group->mutex);
    std::vector<std::shared_ptr<Stream>> streams;
    for (BackupTarget& target : backups) {
      std::shared_ptr<Stream> kept;
      if (!target.joining) {
        for (const auto& stream : group->streams) {
          if (stream->target.Name() == target.Name() && stream->Healthy()) {
            kept = stream;
          }
        }
      }
      if (kept != nullptr) {
        kept->required = true;  // in sync: it carries on at the new epoch
        // The master counts it in sync now (it may have joined under this
        // primary): from now on it makes a write durable.
        kept->counted_in_sync = true;
        streams.push_back(std::move(kept));
        continue;
      }
      auto stream = std::make_shared<Stream>(group, std::move(target));
      stream->required = !stream->target.joining;
      stream->counted_in_sync = !stream->target.joining;
      if (mode == ReplicationMode::kBuildIndex) {
        stream->caught_up = true;  // no catch-up: from the start
        stream->first_ticket = group->next_ticket;
      } else {
        // Caught up once its OPEN says what the backup holds (CatchUp, on
        // the catch-up reader's thread).
        stream->needs_catch_up = true;
      }
      streams.push_back(std::move(stream));
    }
    for (const auto& stream : group->streams) {
      if (std::find(streams.begin(), streams.end(), stream) == streams.end()) {
        if (stream->failure.ok()) {
          stream->failure = Status::Closed(
              "the backup left the group at epoch " + std::to_string(epoch));
        }
        stream->state = Stream::State::kClosed;
      }
    }
    group->streams = std::move(streams);
    group->epoch = epoch;
    group->stream_key = std::move(stream_key);
    group->min_replicas = std::max<size_t>(1, min_replicas);
    group->closing = false;
    group->changed.notify_all();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  NotifyWorkLocked();
  ++catch_up_generation_;  // new streams may need a catch-up
  catch_up_work_.notify_all();
}

void Replicator::CatchUp(const std::shared_ptr<Group>& group,
                         const std::shared_ptr<Stream>& stream) {
  // What the backup holds of the region's lineage (its OPEN reply).
  std::map<std::pair<log::LogKind, uint64_t>, HeldCopy> copies;
  std::map<uint32_t, uint64_t> levels;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    for (const HeldCopy& copy : stream->held.copies) {
      copies[{copy.kind, copy.primary_segment}] = copy;
    }
    for (const HeldLevel& level : stream->held.levels) {
      levels[level.level] = level.primary_hash;
    }
  }
  // The region's state by reference, gathered under its locks (no device
  // reads) and queued in `then`, still under them: what the backup holds
  // is left out, so the catch-up sends only what it lacks.
  struct LogSegment {
    log::LogKind kind;
    uint64_t chain_index, segment, bytes;
  };
  struct Level {
    size_t number;
    lsm::LevelDescriptor descriptor;
    uint64_t compacted_lsn;
    std::vector<LogSegment> medium;
    std::vector<uint64_t> index;
  };
  std::vector<LogSegment> logs;
  std::vector<Level> reported_levels;
  std::vector<LogSegment> pending_medium;
  std::vector<uint64_t> pending_index;
  uint64_t region_compacted_lsn = 0;
  lsm::StateVisitor visitor;
  visitor.compacted = [&](uint64_t lsn) { region_compacted_lsn = lsn; };
  visitor.log_segment = [&](log::LogKind kind, uint64_t chain_index,
                            uint64_t segment, uint64_t bytes) {
    if (kind == log::LogKind::kMedium) {
      pending_medium.push_back({kind, chain_index, segment, bytes});
    } else {
      logs.push_back({kind, chain_index, segment, bytes});
    }
  };
  visitor.index_segment = [&](uint64_t segment) {
    pending_index.push_back(segment);
  };
  visitor.level = [&](size_t level, const lsm::LevelDescriptor& descriptor,
                      uint64_t compacted_lsn) {
    reported_levels.push_back({level, descriptor, compacted_lsn,
                               std::move(pending_medium),
                               std::move(pending_index)});
    pending_medium.clear();
    pending_index.clear();
  };
  std::vector<uint64_t> needed;
  const auto queue_all = [&] {
    std::lock_guard<std::mutex> lock(group->mutex);
    const auto push = [&](Stream::Event&& event) {
      stream->Push(std::move(event), group->next_ticket++);
    };
    // Levels the backup holds as the primary does, and the medium segments
    // they name: kept.
    std::set<size_t> matched;
    std::set<uint64_t> medium_kept, medium_live;
    for (const Level& level : reported_levels) {
      const auto held = levels.find(static_cast<uint32_t>(level.number));
      if (held != levels.end() &&
          held->second == PrimaryLevelHash(level.descriptor)) {
        matched.insert(level.number);
        for (const LogSegment& medium : level.medium) {
          medium_kept.insert(medium.segment);
        }
      }
      for (const LogSegment& medium : level.medium) {
        medium_live.insert(medium.segment);
      }
    }
    std::set<std::pair<log::LogKind, uint64_t>> live;
    for (const LogSegment& log : logs) {
      live.insert({log.kind, log.segment});
      const auto held = copies.find({log.kind, log.segment});
      const bool same =
          held != copies.end() && held->second.chain_index == log.chain_index;
      if (same && held->second.sealed) {
        continue;  // the backup holds it whole (sealed copies never change)
      }
      // A shorter copy of the same segment is extended in place (within an
      // incarnation a copy is a prefix of the primary's segment): only the
      // bytes from the block its copy ends in go (LogMirror::Persist); once
      // they landed a FLUSH-TAIL has the backup fill its buffer with the
      // copy before them, and the stream is caught up only after (a
      // promotion reads a buffer only from its segment header on).
      const bool resumes = same && held->second.bytes <= log.bytes;
      Stream::Event bytes = Stream::Event::Unloaded(
          Stream::Event::Type::kLogBytes, log.kind, log.chain_index,
          log.segment, log.bytes, resumes);
      if (resumes && log.bytes > 0) {
        // At least its last block goes (the FLUSH-TAIL that seals the copy
        // follows bytes that landed).
        const uint64_t from =
            std::min<uint64_t>(held->second.bytes, log.bytes - 1);
        bytes.offset =
            from / limits::io_alignment_bytes * limits::io_alignment_bytes;
      }
      push(std::move(bytes));
      needed.push_back(log.segment);
    }
    for (const Level& level : reported_levels) {
      if (matched.count(level.number) != 0) continue;
      for (const LogSegment& medium : level.medium) {
        if (medium_kept.count(medium.segment) != 0) continue;
        push(Stream::Event::Unloaded(Stream::Event::Type::kLogBytes,
                                     medium.kind, medium.chain_index,
                                     medium.segment, medium.bytes));
        needed.push_back(medium.segment);
      }
      for (const uint64_t segment : level.index) {
        Stream::Event shipped = Stream::Event::Unloaded(
            Stream::Event::Type::kIndexSegment, log::LogKind::kSmall, 0,
            segment, limits::segment_size_bytes);
        shipped.level = level.number;
        push(std::move(shipped));
        needed.push_back(segment);
      }
      push(Stream::Event::InstallLevel(level.number, level.descriptor,
                                       std::nullopt, level.compacted_lsn));
    }
    // What the backup holds and the primary no longer has goes: levels,
    // then copies (the removed levels may have named them). Each removal
    // carries the region's compacted LSN, which the backup records as its
    // own: a removal that carried 0 (as it once did) left a backup in sync
    // whose levels held every write to LSN N believing they held none, so a
    // promotion replayed its log copies from LSN 1, found it long freed,
    // and dropped every write past the levels (the session-6 chaos profile's
    // verify: "441 in 2 levels, 0 past them, 18885 dropped to LSN 0").
    bool installs = matched.size() < reported_levels.size();
    const auto reported = [&](size_t number) {
      return std::any_of(
          reported_levels.begin(), reported_levels.end(),
          [number](const Level& level) { return level.number == number; });
    };
    for (const auto& held : levels) {
      if (!reported(held.first)) {
        push(Stream::Event::InstallLevel(held.first, lsm::LevelDescriptor{},
                                         std::nullopt, region_compacted_lsn));
        installs = true;
      }
    }
    // No install carries the LSN, yet the primary's logs were compacted to
    // it (its levels all matched, or it has none: every key deleted and the
    // tombstones merged away): an empty install of a level neither side
    // holds tells the backup, which would otherwise keep an older LSN (0 if
    // new), replay its copies from there if promoted, find it freed, and
    // drop every write past it.
    if (!installs && region_compacted_lsn > 0) {
      size_t free_level = 0;
      while (reported(free_level) ||
             levels.count(static_cast<uint32_t>(free_level)) != 0) {
        ++free_level;
      }
      push(Stream::Event::InstallLevel(free_level, lsm::LevelDescriptor{},
                                       std::nullopt, region_compacted_lsn));
    }
    std::vector<TrimmedCopy> stale;
    for (const auto& [key, copy] : copies) {
      const bool kept = copy.kind == log::LogKind::kMedium
                            ? medium_live.count(copy.primary_segment) != 0
                            : live.count(key) != 0;
      if (!kept)
        stale.push_back({copy.kind, copy.primary_segment, copy.chain_index});
    }
    for (size_t at = 0; at < stale.size(); at += kTrimSegmentsMax) {
      Stream::Event trim;
      trim.type = Stream::Event::Type::kTrim;
      trim.trimmed.assign(
          stale.begin() + static_cast<long>(at),
          stale.begin() +
              static_cast<long>(std::min(stale.size(), at + kTrimSegmentsMax)));
      push(std::move(trim));
    }
    stream->live = true;
    stream->catch_up_ticket = group->next_ticket - 1;
  };
  auto pins = std::make_shared<CatchUpPins>();
  std::vector<uint64_t> pinned;
  const Status reported =
      group->region->ReportState(visitor, queue_all, &pinned);
  if (!reported.ok()) {
    Fail(stream.get(), Status::IoError("catch-up of region " +
                                       std::to_string(group->region_id) + ": " +
                                       reported.ToString()));
    return;
  }
  // Only what is sent stays pinned.
  std::multiset<uint64_t> keep(needed.begin(), needed.end());
  std::vector<uint64_t> unneeded;
  for (const uint64_t segment : pinned) {
    const auto it = keep.find(segment);
    if (it != keep.end()) {
      keep.erase(it);
      pins->segments.push_back(segment);
    } else {
      unneeded.push_back(segment);
    }
  }
  group->volume->Unpin(unneeded);
  pins->volume = group->volume;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    if (!stream->to_load.empty()) stream->pins = pins;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  NotifyWorkLocked();
}

void Replicator::ReadCatchUps() {
  SetThreadName(kThreadCatchUpReader);
  while (true) {
    // One event per stream per round: streams share the device fairly.
    std::vector<std::shared_ptr<Group>> groups;
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!running_) return;
      seen = catch_up_generation_;
      for (const auto& [region_id, group] : groups_) groups.push_back(group);
    }
    // A group's mutex is never taken under mutex_ (the replication thread
    // takes mutex_ under a group's).
    std::vector<std::pair<std::shared_ptr<Group>, std::shared_ptr<Stream>>>
        reports;
    for (const auto& group : groups) {
      std::lock_guard<std::mutex> group_lock(group->mutex);
      for (const auto& stream : group->streams) {
        if (stream->needs_catch_up && stream->opened && stream->Healthy()) {
          stream->needs_catch_up = false;
          reports.emplace_back(group, stream);
        }
      }
    }
    // New streams' catch-ups first (each holds its region's writers off
    // for a moment).
    for (const auto& [group, stream] : reports) CatchUp(group, stream);
    std::vector<std::shared_ptr<Stream>> streams;
    for (const auto& group : groups) {
      std::lock_guard<std::mutex> group_lock(group->mutex);
      for (const auto& stream : group->streams) {
        if (!stream->to_load.empty() && stream->Healthy() &&
            stream->loaded_bytes < limits::catch_up_read_ahead_bytes) {
          streams.push_back(stream);
        }
      }
    }
    if (streams.empty()) {
      // Streams still loading wait for the replication thread to send what
      // was read ahead (it does not wake this thread): look again soon.
      const bool loading = std::any_of(
          groups.begin(), groups.end(), [](const std::shared_ptr<Group>& g) {
            std::lock_guard<std::mutex> group_lock(g->mutex);
            return std::any_of(g->streams.begin(), g->streams.end(),
                               [](const std::shared_ptr<Stream>& stream) {
                                 return !stream->to_load.empty() &&
                                        stream->Healthy();
                               });
          });
      std::unique_lock<std::mutex> lock(mutex_);
      catch_up_work_.wait_for(
          lock, loading ? std::chrono::milliseconds(5) : kIdleWait,
          [&] { return catch_up_generation_ != seen || !running_; });
      continue;
    }
    for (const auto& stream : streams) {
      Group* group = stream->group.get();
      Stream::Event* event;
      {
        std::lock_guard<std::mutex> lock(group->mutex);
        if (stream->to_load.empty() || !stream->Healthy()) continue;
        event = stream->to_load.front();
      }
      // The event stays put: only the replication thread pops events, and
      // never an unloaded one; its segment is pinned.
      std::string bytes;
      const Status read = lsm::Region::ReadSegment(
          group->volume, event->segment, event->offset, event->load_bytes,
          event->type == Stream::Event::Type::kIndexSegment, &bytes);
      std::shared_ptr<CatchUpPins> done;
      uint64_t ahead = 0;
      const uint64_t read_bytes = bytes.size();
      const bool log_bytes = event->type == Stream::Event::Type::kLogBytes &&
                             event->kind != log::LogKind::kMedium;
      {
        std::lock_guard<std::mutex> lock(group->mutex);
        if (read.ok()) {
          stream->loaded_bytes += bytes.size();
          ahead = stream->loaded_bytes;
          stream->queued_bytes += bytes.size();
          event->bytes = std::move(bytes);
          event->unloaded = false;
          stream->to_load.pop_front();
          if (stream->to_load.empty()) done = std::move(stream->pins);
        }
      }
      if (!read.ok()) {
        Fail(stream.get(), Status::IoError("catch-up read of segment " +
                                           std::to_string(event->segment) +
                                           ": " + read.ToString()));
      }
      done.reset();  // every segment read: unpinned
      std::lock_guard<std::mutex> lock(mutex_);
      if (read.ok()) {
        stats_.catch_up_bytes += read_bytes;
        if (log_bytes) stats_.catch_up_log_bytes += read_bytes;
        stats_.catch_up_ahead_peak_bytes =
            std::max(stats_.catch_up_ahead_peak_bytes, ahead);
      }
      NotifyWorkLocked();
    }
  }
}

std::vector<BackupState> Replicator::BackupStates(uint64_t region_id) const {
  const std::shared_ptr<Group> group = Find(region_id);
  std::vector<BackupState> states;
  if (group == nullptr) return states;
  std::lock_guard<std::mutex> lock(group->mutex);
  for (const auto& stream : group->streams) {
    states.push_back(stream->InSync()     ? BackupState::kInSync
                     : !stream->Healthy() ? BackupState::kFailed
                                          : BackupState::kCatchingUp);
  }
  return states;
}

std::vector<BackupLag> Replicator::BackupLags(uint64_t region_id) const {
  const std::shared_ptr<Group> group = Find(region_id);
  std::vector<BackupLag> lags;
  if (group == nullptr) return lags;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(group->mutex);
  const uint64_t applied = group->next_ticket - 1;
  for (const auto& stream : group->streams) {
    BackupLag lag;
    lag.queued_bytes = stream->queued_bytes;
    lag.writes =
        applied > stream->done_ticket ? applied - stream->done_ticket : 0;
    // Waiters are in ticket order: the first one past what the backup
    // holds is the oldest waiting for it. It began a timeout before its
    // deadline.
    for (const Group::Waiter& waiter : group->waiters) {
      if (waiter.ticket > stream->done_ticket) {
        const auto began = waiter.deadline - options_.timeout;
        if (now > began) {
          lag.oldest_wait =
              std::chrono::duration_cast<std::chrono::nanoseconds>(now - began);
        }
        break;
      }
    }
    lags.push_back(lag);
  }
  return lags;
}

std::vector<std::string> Replicator::BackupFailures(uint64_t region_id) const {
  const std::shared_ptr<Group> group = Find(region_id);
  std::vector<std::string> failures;
  if (group == nullptr) return failures;
  std::lock_guard<std::mutex> lock(group->mutex);
  for (const auto& stream : group->streams) {
    failures.emplace_back(stream->failure.ok()
                              ? std::string()
                              : std::string(stream->failure.message()));
  }
  return failures;
}

bool Replicator::Replicates(uint64_t region_id) const {
  return Find(region_id) != nullptr;
}

Status Replicator::Close(uint64_t region_id) {
  const std::shared_ptr<Group> group = Find(region_id);
  if (group == nullptr) return Status::Ok();
  Status result;
  {
    std::lock_guard<std::mutex> order(group->order);  // no write in between
    std::unique_lock<std::mutex> lock(group->mutex);
    group->closing = true;
    {
      std::lock_guard<std::mutex> work_lock(mutex_);
      NotifyWorkLocked();
    }
    const bool done =
        group->changed.wait_until(lock, Clock::now() + options_.timeout, [&] {
          return std::all_of(group->streams.begin(), group->streams.end(),
                             [](const std::shared_ptr<Stream>& stream) {
                               return !stream->Healthy();
                             });
        });
    if (!done) {
      result =
          Status::IoError("region " + std::to_string(region_id) +
                          ": backups did not take the last records in time");
    } else {
      for (const auto& stream : group->streams) {
        if (!stream->failure.ok() && result.ok()) result = stream->failure;
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ForgetLocked(group);
  }
  // Writes the backups took before the streams closed completed
  // normally; the rest end with the group.
  Settle(group.get(), /*ending=*/false);
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    group->ended = Status::Closed("region " + std::to_string(region_id) +
                                  " is closed here");
    for (const auto& stream : group->streams) {
      stream->state = stream->failure.ok() ? Stream::State::kClosed
                                           : Stream::State::kFailed;
    }
    group->streams.clear();
    group->changed.notify_all();
  }
  Settle(group.get(), /*ending=*/true);
  return result;
}

void Replicator::Write(uint64_t region_id, const Record& record,
                       lsm::Region* region,
                       const std::function<Status()>& apply, WriteDone done) {
  WriteUnit(
      region_id, std::span<const std::string_view>(&record.key, 1), region,
      [&](std::vector<Record>* out, bool* wrote) {
        out->push_back(record);
        *wrote = true;
        return apply();
      },
      std::move(done));
}

void Replicator::WriteBatch(uint64_t region_id,
                            const std::vector<Record>& records,
                            lsm::Region* region,
                            const std::function<Status()>& apply,
                            WriteDone done) {
  std::vector<std::string_view> keys;
  keys.reserve(records.size());
  for (const Record& record : records) keys.push_back(record.key);
  WriteUnit(
      region_id, keys, region,
      [&](std::vector<Record>* out, bool* wrote) {
        *out = records;
        // One unit on every stream: a backup applies it whole or not at all.
        for (size_t i = 0; i + 1 < out->size(); ++i) {
          (*out)[i].continues_batch = true;
        }
        out->back().continues_batch = false;
        *wrote = true;
        return apply();
      },
      std::move(done));
}

void Replicator::WriteDecided(uint64_t region_id, std::string_view key,
                              lsm::Region* region, const Decide& decide,
                              WriteDone done) {
  WriteUnit(
      region_id, std::span<const std::string_view>(&key, 1), region,
      [&](std::vector<Record>* out, bool* wrote) {
        out->emplace_back();
        return decide(&out->back(), wrote);
      },
      std::move(done));
}

void Replicator::WriteUnit(uint64_t region_id,
                           std::span<const std::string_view> keys,
                           lsm::Region* region, const DecideUnit& decide,
                           WriteDone done) {
  const std::shared_ptr<Group> group = Find(region_id);
  if (group == nullptr) {
    // The caller's placement replicates the region, yet no group does here
    // (never opened, or closed meanwhile): applying it would acknowledge a
    // write no backup holds, whatever the minimum of replicas says.
    done(Status::FromCode(Status::Code::kNotEnoughReplicas,
                          "region " + std::to_string(region_id) +
                              " has no replication group here; nothing was "
                              "written"));
    return;
  }
  // The stripes of the keys the unit writes, each once: a single write's in
  // place (nothing allocated on the path of every put), a batch's sorted.
  size_t one_stripe = 0;
  uint64_t one_before = 0;
  std::span<size_t> stripes(&one_stripe, 1);
  std::span<uint64_t> before(&one_before, 1);
  std::vector<size_t> batch_stripes;
  std::vector<uint64_t> batch_before;
  if (keys.size() == 1) {
    one_stripe = Group::Stripe(keys[0]);
  } else {
    for (std::string_view key : keys) {
      batch_stripes.push_back(Group::Stripe(key));
    }
    std::sort(batch_stripes.begin(), batch_stripes.end());
    batch_stripes.erase(std::unique(batch_stripes.begin(), batch_stripes.end()),
                        batch_stripes.end());
    batch_before.resize(batch_stripes.size());
    stripes = batch_stripes;
    before = batch_before;
  }
  // Each stripe back at what it was before, or at `ticket` if later.
  auto settle_stripes = [&](uint64_t ticket) {
    for (size_t i = 0; i < stripes.size(); ++i) {
      group->stripes[stripes[i]].store(std::max(before[i], ticket));
    }
  };
  bool alone = false;  // held by no backup: acknowledged once on disk
  bool wrote = true;
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> order(group->order);
    {
      std::lock_guard<std::mutex> lock(group->mutex);
      Status refused = group->ended;
      if (refused.ok() && group->closing) {
        refused = Status::Closed("region " + std::to_string(region_id) +
                                 " is closing");
      }
      size_t in_sync = 1;  // this primary
      for (const auto& stream : group->streams) in_sync += stream->InSync();
      if (refused.ok() && in_sync < group->min_replicas) {
        refused = Status::FromCode(
            Status::Code::kNotEnoughReplicas,
            "region " + std::to_string(region_id) + " has " +
                std::to_string(in_sync) +
                " replicas in sync, fewer than its minimum of " +
                std::to_string(group->min_replicas) + "; nothing was written");
      }
      if (!refused.ok()) {
        done(refused);
        return;
      }
    }
    for (size_t i = 0; i < stripes.size(); ++i) {
      before[i] = group->stripes[stripes[i]].load();
      group->stripes[stripes[i]].store(Group::kApplying);
    }
    group->applied_to = region;
    uint64_t ticket = 0;
    if (group->mode == ReplicationMode::kSendIndex) {
      // The region's log appends are queued as it makes them (Queue, on
      // this thread): wait for the last of them.
      last_queued_ticket = 0;
      const Status applied = decide(&records, &wrote);
      ticket = last_queued_ticket;
      if (!applied.ok()) {
        settle_stripes(ticket);
        done(applied);
        return;
      }
      if (!wrote) settle_stripes(ticket);
    } else {
      const Status applied = decide(&records, &wrote);
      if (!applied.ok() || !wrote) settle_stripes(0);
      if (!applied.ok()) {
        done(applied);
        return;
      }
    }
    if (!wrote) {
      // Nothing written: answered as a read of `key` is, below.
    } else if (group->mode != ReplicationMode::kSendIndex) {
      std::string bytes;
      for (const Record& record : records) EncodeRecord(record, &bytes);
      std::lock_guard<std::mutex> lock(group->mutex);
      ticket = group->next_ticket++;
      for (const auto& stream : group->streams) {
        if (!stream->Healthy() || !HasRoom(stream.get())) continue;
        stream->queued_bytes += bytes.size();
        stream->queue.push_back({ticket, bytes});
      }
    }
    if (wrote) {
      settle_stripes(ticket);
      // Registered in ticket order (under `order`); a write the group holds
      // already (every required backup has it, or there is none) completes
      // at once.
      std::unique_lock<std::mutex> lock(group->mutex);
      std::optional<Status> held =
          Held(*group, ticket, /*count_replicas=*/true, "write");
      if (!held.has_value() && AloneLocked(*group)) {
        // The backups it waits for are joining ones whose catch-up ended: the
        // master does not count them in sync yet, so were this primary to
        // fail now it would promote none of them -- the write must be on this
        // primary's disk before it is acknowledged too. Under `order` (no
        // later write registers meanwhile); this lasts until the master opens
        // the region here again with those backups in sync.
        lock.unlock();
        const Status synced =
            region != nullptr ? region->Sync()
                              : Status::IoError("no region to sync was given");
        if (!synced.ok()) {
          done(Status::IoError(
              "region " + std::to_string(region_id) +
              ": no backup the master counts in sync holds the write and it "
              "did not reach this primary's disk (" +
              std::string(synced.message()) + "); its outcome is unknown"));
          return;
        }
        lock.lock();
        held = Held(*group, ticket, /*count_replicas=*/true, "write");
        if (!held.has_value()) {
          group->waiters.push_back(
              {ticket, Clock::now() + options_.timeout, std::move(done), true});
        } else {
          lock.unlock();
          done(*held);
          return;
        }
      } else if (!held.has_value()) {
        group->waiters.push_back(
            {ticket, Clock::now() + options_.timeout, std::move(done), false});
      } else {
        alone = held->ok() && AloneLocked(*group);
        if (!alone) {
          lock.unlock();
          done(*held);
          return;
        }
      }
    }
  }
  if (!wrote) {
    // Answered as a read of `key`: once what the decision read is held by
    // every required backup, or on this primary's disk when none is.
    if (Alone(region_id)) {
      const Status synced =
          region != nullptr ? region->Sync()
                            : Status::IoError("no region to sync was given");
      if (!synced.ok()) {
        done(Status::IoError("region " + std::to_string(region_id) +
                             ": no backup holds its writes and syncing them "
                             "failed: " +
                             std::string(synced.message())));
        return;
      }
    }
    AwaitReadAsync(region_id,
                   std::vector<std::string_view>(keys.begin(), keys.end()),
                   std::move(done));
    return;
  }
  if (alone) {
    // Only this primary holds the write: acknowledged once on its disk.
    // Outside the group's locks, so that concurrent writers share a sync.
    const Status synced = region != nullptr
                              ? region->Sync()
                              : Status::IoError("no region to sync was given");
    done(synced.ok() ? synced
                     : Status::IoError(
                           "region " + std::to_string(region_id) +
                           ": no backup holds the write and it did not reach "
                           "this primary's disk (" +
                           std::string(synced.message()) +
                           "); its outcome is unknown"));
    return;
  }
  if (EndsTurns()) {
    return;  // its thread drives the streams at the end of its turn (Drive)
  }
  std::lock_guard<std::mutex> lock(mutex_);
  NotifyWorkLocked();
}

bool Replicator::Alone(uint64_t region_id) const {
  const std::shared_ptr<Group> group = Find(region_id);
  if (group == nullptr) return false;
  std::lock_guard<std::mutex> lock(group->mutex);
  return AloneLocked(*group);
}

bool Replicator::AloneLocked(const Group& group) {
  for (const auto& stream : group.streams) {
    // A joining backup whose catch-up ended is required (writes wait for
    // it) but makes nothing durable: the master promotes only backups it
    // counts in sync.
    if (stream->required && stream->counted_in_sync) return false;
  }
  return true;
}

void Replicator::SyncWaitersLeftAlone(Group* group, lsm::Region* region) {
  lsm::Region* applied_to = nullptr;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    const bool pending = std::any_of(
        group->waiters.begin(), group->waiters.end(),
        [](const Group::Waiter& waiter) { return !waiter.on_disk; });
    if (!pending) return;
    applied_to = group->applied_to;
  }
  // Under `order`, so every write applied is in the region's log buffers,
  // and no other comes meanwhile. Writes applied to another region object
  // (one this reopen replaces) cannot be synced here: they stay not on
  // disk, and Settle ends them with their outcome unknown.
  if (region == nullptr || applied_to != region || !region->Sync().ok()) {
    return;
  }
  std::lock_guard<std::mutex> lock(group->mutex);
  for (Group::Waiter& waiter : group->waiters) waiter.on_disk = true;
}

void Replicator::AwaitReadAsync(
    uint64_t region_id, std::optional<std::vector<std::string_view>> keys,
    std::function<void(Status)> done) {
  const std::shared_ptr<Group> group = Find(region_id);
  if (group == nullptr) {
    done(Status::Ok());
    return;
  }
  uint64_t ticket = 0;
  if (keys.has_value()) {
    for (const std::string_view key : *keys) {
      std::atomic<uint64_t>& stripe = group->stripes[Group::Stripe(key)];
      uint64_t seen = stripe.load();
      if (seen == Group::kApplying) {
        // A write to the stripe is applying: the read may have seen it.
        std::lock_guard<std::mutex> order(group->order);
        seen = stripe.load();
      }
      ticket = std::max(ticket, seen);
    }
  } else {
    std::lock_guard<std::mutex> lock(group->mutex);
    ticket = group->next_ticket - 1;
  }
  if (ticket == 0) {
    done(Status::Ok());
    return;
  }
  std::optional<Status> held;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    held = Held(*group, ticket, /*count_replicas=*/false, "write a read saw");
    if (!held.has_value()) {
      group->read_waiters.push_back(
          {ticket, Clock::now() + options_.timeout, std::move(done)});
      return;
    }
  }
  // Not answered: the client retries (the region changes hands, or its
  // backups catch up meanwhile).
  done(held->ok() ? *held : Status::Busy(held->message()));
}

std::optional<Status> Replicator::Held(const Group& group, uint64_t ticket,
                                       bool count_replicas, const char* what) {
  size_t holding = 1;  // this primary
  for (const auto& stream : group.streams) {
    if (!stream->required) continue;
    if (count_replicas && ticket < stream->first_ticket) {
      // Queued before this backup's stream began: it will never hold it.
      return Status::IoError(
          "region " + std::to_string(group.region_id) + ": the " + what +
          " was not replicated to " + stream->target.Name() +
          " before its stream was replaced (its outcome is unknown)");
    }
    const bool up = stream->state == Stream::State::kReady ||
                    stream->state == Stream::State::kClosed;
    if (!up || !stream->failure.ok() || !stream->caught_up ||
        stream->done_ticket < ticket) {
      if (!group.ended.ok()) return group.ended;
      return std::nullopt;
    }
    ++holding;
  }
  if (count_replicas && holding < group.min_replicas) {
    return Status::IoError(
        "region " + std::to_string(group.region_id) + ": the " + what +
        " is held by " + std::to_string(holding) +
        " replicas, fewer than the minimum of " +
        std::to_string(group.min_replicas) + " (its outcome is unknown)");
  }
  return Status::Ok();
}

Status Replicator::TimedOut(const Group& group, uint64_t ticket,
                            const char* what) const {
  std::string why;
  for (const auto& stream : group.streams) {
    if (!stream->required) continue;
    why += "; " + stream->target.Name() + ": " +
           (!stream->failure.ok() ? std::string(stream->failure.message())
            : !stream->caught_up
                ? std::string("catching up")
                : "holds up to " + std::to_string(stream->done_ticket) +
                      " of " + std::to_string(ticket));
  }
  return Status::IoError("region " + std::to_string(group.region_id) +
                         ": backups did not take the " + what + " within " +
                         std::to_string(options_.timeout.count()) + " ms" +
                         why);
}

void Replicator::Settle(Group* group, bool ending) {
  std::vector<std::pair<WriteDone, Status>> settled;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    if (group->waiters.empty() && group->read_waiters.empty()) return;
    const auto now = Clock::now();
    if (!ending) FailStalledLocked(group, now);
    // Reads first: they wait for writes held already or settled below.
    std::vector<Group::ReadWaiter> reading;
    for (Group::ReadWaiter& read : group->read_waiters) {
      std::optional<Status> held =
          Held(*group, read.ticket,
               /*count_replicas=*/false, "write a read saw");
      if (!held.has_value() && (ending || read.deadline <= now)) {
        held = ending && !group->ended.ok()
                   ? group->ended
                   : TimedOut(*group, read.ticket, "write a read saw");
      }
      if (!held.has_value()) {
        reading.push_back(std::move(read));
        continue;
      }
      settled.emplace_back(std::move(read.done),
                           held->ok() ? *held : Status::Busy(held->message()));
    }
    group->read_waiters.swap(reading);
    while (!group->waiters.empty()) {
      Group::Waiter& front = group->waiters.front();
      std::optional<Status> held =
          Held(*group, front.ticket, /*count_replicas=*/true, "write");
      if (!held.has_value() && (ending || front.deadline <= now)) {
        held = ending && !group->ended.ok()
                   ? group->ended
                   : TimedOut(*group, front.ticket, "write");
      }
      // Later writes wait at least as long (tickets and deadlines rise).
      if (!held.has_value()) break;
      if (held->ok() && !front.on_disk && AloneLocked(*group)) {
        // No backup holds it now, nor the primary's disk (the reopen that
        // left it alone could not sync it).
        held = Status::IoError(
            "region " + std::to_string(group->region_id) +
            ": the group changed to one where no backup holds the write, "
            "and it was not synced here");
      }
      Status outcome = std::move(*held);
      if (!outcome.ok() && outcome.code() != Status::Code::kIoError) {
        // Applied here, so never a status a client would retry on.
        outcome = Status::IoError(std::string(outcome.message()) +
                                  " (the write applied here; its outcome is "
                                  "unknown)");
      }
      settled.emplace_back(std::move(front.done), std::move(outcome));
      group->waiters.pop_front();
    }
  }
  for (auto& [done, outcome] : settled) done(outcome);
}

void Replicator::FailStalledLocked(Group* group, Clock::time_point now) {
  for (const auto& stream : group->streams) {
    if (!stream->required || !stream->failure.ok()) continue;
    // Waiters are in ticket order: the first one past what the backup holds
    // is the oldest waiting for it; it began a timeout before its deadline.
    std::optional<Clock::time_point> oldest;  // deadline of the oldest wait
    for (const Group::Waiter& waiter : group->waiters) {
      // Held, or never to be held by this stream (Held fails it).
      if (waiter.ticket <= stream->done_ticket ||
          waiter.ticket < stream->first_ticket) {
        continue;
      }
      oldest = waiter.deadline;
      break;
    }
    // Reads too (in arrival order; their tickets need not rise): a read may
    // wait for a write that no longer does (it timed out).
    for (const Group::ReadWaiter& read : group->read_waiters) {
      if (read.ticket <= stream->done_ticket) continue;
      if (!oldest || read.deadline < *oldest) oldest = read.deadline;
      break;
    }
    if (!oldest) continue;
    // Counted from the stream's start at the latest: a stream made when the
    // master reopened the region after its backup's last one stalled has a
    // stall timeout of its own to catch up (counting from the oldest write
    // failed every new stream at once, and reopened the region at every
    // pass until that write timed out: 300 epochs in 30 s in a CI run).
    const auto waited =
        now - std::max(*oldest - options_.timeout, stream->created);
    if (waited >= options_.stall_timeout && BackupStalled(*stream, now)) {
      FailStalled(stream.get(), waited);
    }
  }
}

bool Replicator::BackupStalled(const Stream& stream,
                               Clock::time_point now) const {
  const Clock::time_point turn_began{
      Clock::duration(turn_began_ns_.load(std::memory_order_acquire))};
  // A turn normally takes micro- to milliseconds: one this old was held up,
  // and what it saw of the backups is stale.
  if (now - turn_began >= options_.stall_timeout / 2) return false;
  if (!stream.unanswered_since.has_value()) return true;
  return now - *stream.unanswered_since >= options_.stall_timeout;
}

void Replicator::FailStalled(Stream* stream, Clock::duration waited) {
  Group* group = stream->group.get();
  stream->failure = Status::IoError(
      "region " + std::to_string(group->region_id) + " replication to " +
      stream->target.Name() + " failed: it took no write for " +
      std::to_string(
          std::chrono::duration_cast<std::chrono::milliseconds>(waited)
              .count()) +
      " ms (stall timeout " + std::to_string(options_.stall_timeout.count()) +
      " ms)");
  stream_failures_.fetch_add(1, std::memory_order_relaxed);
  stream->state = Stream::State::kFailed;
  group->changed.notify_all();
}

ReplicatorStats Replicator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ReplicatorStats stats = stats_;
  stats.stream_failures = stream_failures_.load(std::memory_order_relaxed);
  stats.open_retries = open_retries_.load(std::memory_order_relaxed);
  return stats;
}

std::shared_ptr<Replicator::Peer> Replicator::PeerFor(Stream* stream,
                                                      Status* status) {
  const std::string name = stream->target.Name();
  *status = Status::Ok();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = peers_.find(name);
  if (it != peers_.end() && it->second->client->health().ok()) {
    stream->dial_awaited = 0;
    return it->second;
  }
  Dialing& dial = dialing_[name];
  if (stream->dial_awaited != 0 && dial.done >= stream->dial_awaited) {
    // The attempt it waited for ended without a healthy connection.
    *status = dial.failure.ok()
                  ? Status::IoError("backup " + name +
                                    ": its new connection broke at once")
                  : dial.failure;
    stream->dial_awaited = 0;
    return nullptr;
  }
  if (stream->dial_awaited == 0) {
    if (dial.asked <= dial.done) {  // none under way
      dial.target = stream->target;
      dial.asked = ++dial_attempts_;
      dial_work_.notify_all();
    }
    stream->dial_awaited = dial.asked;
  }
  return nullptr;
}

void Replicator::ConnectPeers() {
  SetThreadName(kThreadConnector);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    const auto asked =
        std::find_if(dialing_.begin(), dialing_.end(), [](const auto& entry) {
          return entry.second.asked > entry.second.done;
        });
    if (!running_) return;
    if (asked == dialing_.end()) {
      dial_work_.wait(lock);
      continue;
    }
    const std::string name = asked->first;
    const BackupTarget target = asked->second.target;
    const uint64_t attempt = asked->second.asked;
    lock.unlock();
    Status status;
    std::shared_ptr<Peer> peer = Dial(target, &status);
    lock.lock();
    Dialing& dial = dialing_[name];  // never erased: still there
    if (peer != nullptr) {
      const auto replaced = peers_.find(name);
      if (replaced != peers_.end()) {
        AnswerSetRemoveLocked(replaced->second.get());
      }
      AnswerSetAddLocked(peer.get());
      peers_[name] = std::move(peer);
    }
    dial.failure = status;
    dial.done = attempt;
    NotifyWorkLocked();
  }
}

std::shared_ptr<Replicator::Peer> Replicator::Dial(const BackupTarget& target,
                                                   Status* status) {
  const std::string name = target.Name();
  channel::ClientOptions client_options;
  client_options.endpoint = options_.endpoint;
  // Messages wait for room in a full transmit queue for the stall timeout
  // at most, then break the connection (a backup that took no bytes that
  // long is stalled) -- but at least kMessageRoomWaitMin: a new
  // connection's queue refuses posts until it is established (tcp;ofi_rxm
  // connects on the first post), which a slow machine may take a while
  // over. One-sided writes never wait (Client::WriteRemote).
  client_options.endpoint.post_timeout = std::chrono::duration_cast<
      decltype(client_options.endpoint.post_timeout)>(
      std::min<std::chrono::milliseconds>(
          options_.timeout, std::max<std::chrono::milliseconds>(
                                options_.stall_timeout, kMessageRoomWaitMin)));
  client_options.request_timeout = options_.timeout;
  // Over tcp the thread blocks until a backup answers (WaitForArrivals).
  client_options.wait_fd = true;
  client_options.kind = channel::ConnectionKind::kPeer;
  client_options.secret = options_.secret;
  auto peer = std::make_shared<Peer>();
  peer->name = name;
  *status = channel::Client::Connect(client_options, target.host, target.port,
                                     &peer->client);
  if (!status->ok()) {
    *status = Status::IoError(
        "backup " + name + " unreachable: " + std::string(status->message()));
    return nullptr;
  }
  return peer;
}

bool Replicator::HasRoom(Stream* stream) const {
  if (stream->queued_bytes <= options_.stream_queued_bytes_max) return true;
  // The backup cannot keep up (or never answers): its stream fails, and
  // its writes wait for the master to mark it joining, rather than queue
  // without bound.
  Group* group = stream->group.get();
  stream->failure = Status::IoError(
      "region " + std::to_string(group->region_id) + " replication to " +
      stream->target.Name() + " failed: more than " +
      std::to_string(options_.stream_queued_bytes_max) +
      " bytes queued for it");
  stream->state = Stream::State::kFailed;
  group->changed.notify_all();
  return false;
}

void Replicator::Fail(Stream* stream, const Status& status) {
  Group* group = stream->group.get();
  std::lock_guard<std::mutex> lock(group->mutex);
  if (stream->failure.ok()) {
    stream->failure = Status::IoError(
        "region " + std::to_string(group->region_id) + " replication to " +
        stream->target.Name() + " failed: " + std::string(status.message()));
    stream_failures_.fetch_add(1, std::memory_order_relaxed);
  }
  stream->state = Stream::State::kFailed;
  group->changed.notify_all();
}

bool Replicator::Turn(bool driven, bool* waiting,
                      std::vector<std::shared_ptr<Peer>>* peers,
                      uint64_t* seen) {
  std::vector<std::shared_ptr<Group>> groups;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    *seen = work_generation_;
    for (const auto& [region_id, group] : groups_) groups.push_back(group);
    for (const auto& [name, peer] : peers_) {
      // A broken connection stays readable (its end): out of the answer
      // set, or a watcher would wake for it again and again.
      if (peer->in_answer_set && !peer->client->health().ok()) {
        AnswerSetRemoveLocked(peer.get());
      }
      peers->push_back(peer);
    }
  }
  turn_began_ns_.store(Clock::now().time_since_epoch().count(),
                       std::memory_order_release);
  std::vector<std::shared_ptr<Stream>> streams;
  for (const auto& group : groups) {
    std::lock_guard<std::mutex> lock(group->mutex);
    streams.insert(streams.end(), group->streams.begin(), group->streams.end());
    // What each backup left unanswered as of the last turn's poll, for
    // the stall timeout (BackupStalled).
    for (const auto& stream : group->streams) {
      stream->unanswered_since = std::nullopt;
      if (stream->peer != nullptr && stream->peer->client->health().ok()) {
        stream->unanswered_since = stream->peer->client->oldest_unanswered();
      }
    }
  }
  bool busy = false;
  bool left = false;  // a stream to connect, left to the replication thread
  *waiting = false;   // for backups to complete writes or answer
  for (const auto& stream : streams) {
    if (driven && !Connected(*stream)) {
      // Connecting and opening streams is the replication thread's work.
      left = true;
      continue;
    }
    busy |= Pump(stream.get());
    // An OPEN to send again shortly: looked at again within the wait for
    // arrivals, not the idle wait.
    if (!driven) *waiting |= stream->open_retry_at.has_value();
  }
  if (left) {
    std::lock_guard<std::mutex> lock(mutex_);
    NotifyWorkLocked();
  }
  busy |= PostBatches(streams);
  for (const auto& peer : *peers) {
    if (peer->client->health().ok()) {
      busy |= peer->client->Poll() > 0;
      *waiting |= peer->client->outstanding() > 0 ||
                  peer->client->writes_in_flight() > 0;
    }
  }
  // Writes whose backups completed (or that timed out) answer now.
  for (const auto& group : groups) Settle(group.get(), /*ending=*/false);
  return busy;
}

bool Replicator::Drive(bool may_watch) {
  std::unique_lock<std::mutex> turn(turn_mutex_, std::try_to_lock);
  if (!turn.owns_lock()) {
    // The replication thread is in a turn: it takes one more.
    std::lock_guard<std::mutex> lock(mutex_);
    NotifyWorkLocked();
    return false;
  }
  {
    // Only connections whose sends never wait (the stream transport): a
    // fabric connection's message may wait for room in its queue.
    std::lock_guard<std::mutex> lock(mutex_);
    bool reliable = true;
    for (const auto& [name, peer] : peers_) {
      reliable &= peer->client->wakes_reliably();
    }
    if (!reliable) {
      NotifyWorkLocked();
      return false;
    }
  }
  drives_.fetch_add(1, std::memory_order_relaxed);
  // A few turns while they make progress (what the backups answered at
  // once, a catch-up's next segment); the replication thread does the rest.
  bool waiting = false;
  bool more = false;  // the last turn still made progress: work is left
  for (int i = 0; i < kDriveTurnsMax; ++i) {
    std::vector<std::shared_ptr<Peer>> peers;
    uint64_t seen = 0;
    more = Turn(/*driven=*/true, &waiting, &peers, &seen);
    if (!more) break;
  }
  turn.unlock();
  if (more) {
    // A catch-up's next segments, a long queue: the thread's work.
    std::lock_guard<std::mutex> lock(mutex_);
    NotifyWorkLocked();
  }
  if (!waiting) return false;
  // The caller watches for the answers, unless another caller does.
  bool watches = false;
  bool watched = false;
  if (may_watch && answer_set_ >= 0) {
    bool expected = false;
    watches = answer_watched_.compare_exchange_strong(
        expected, true, std::memory_order_acq_rel);
    watched = watches || expected;
  }
  // A shard takes the answers: the thread is not woken for them (at one
  // write in flight, its turn would hold the lock the answering shard
  // needs). It still looks for the timeouts (within kReliableArrivalWait
  // while it waits in its loop, kIdleWait while idle), and streams to
  // connect or open woke it (Turn), as did work left above.
  if (watched) return watches;
  // Writes are in flight: unless the replication thread already waits on
  // the connections, it is told (idle, it wakes; between turns, it looks
  // again).
  std::lock_guard<std::mutex> lock(mutex_);
  if (!polling_) {
    ++work_generation_;
    work_.notify_all();
  }
  return watches;
}

bool Replicator::Connected(const Stream& stream) {
  std::lock_guard<std::mutex> lock(stream.group->mutex);
  return stream.state != Stream::State::kConnecting &&
         stream.state != Stream::State::kOpening;
}

void Replicator::Run() {
  // Naps must be short: the default 50 us timer slack would stretch them.
  ::prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!running_) return;
      probes_answered_ = probes_asked_;
    }
    bool waiting = false;
    std::vector<std::shared_ptr<Peer>> peers;
    uint64_t seen = 0;
    bool busy;
    {
      std::lock_guard<std::mutex> turn(turn_mutex_);
      busy = Turn(/*driven=*/false, &waiting, &peers, &seen);
    }
    if (busy) continue;
    if (waiting) {
      // The backups' progress, not ours, completes what is in flight: give
      // them the core (with fewer cores than spinning threads, yielding
      // kept it from them) until their answers arrive (tcp: the
      // connections' wait fds), or look again shortly (shm).
      if (!WaitForArrivals(peers, seen)) std::this_thread::sleep_for(kWaitNap);
      continue;
    }
    // Idle: new work notifies; the wait bounds how late a write's timeout
    // is noticed.
    std::unique_lock<std::mutex> lock(mutex_);
    work_.wait_for(lock, kIdleWait,
                   [&] { return work_generation_ != seen || !running_; });
  }
}

bool Replicator::Probe() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || probes_answered_ != probes_asked_) return false;
  ++probes_asked_;
  NotifyWorkLocked();
  return true;
}

bool Replicator::SendToBackup(Stream* stream, const std::string& message,
                              const std::string& what, size_t* pending,
                              std::unique_lock<std::mutex>* lock) {
  Peer* peer = stream->peer.get();
  *pending += 1;
  const Status submitted = peer->client->Submit(
      message, [this, weak = stream->weak_from_this(), peer, pending, what](
                   Status status, std::string_view reply) {
        // A stream gone meanwhile (closed, replaced) cares no more; a
        // strong reference here would keep it, and through its peer this
        // callback, alive for ever.
        const std::shared_ptr<Stream> owner = weak.lock();
        if (owner == nullptr) return;
        Stream* const live = owner.get();
        ControlReply decoded;
        if (status.ok()) status = DecodeControlReply(reply, &decoded);
        if (status.ok()) status = decoded.status;
        if (!status.ok()) {
          Fail(live, Status::IoError("backup " + peer->name + " refused " +
                                     what + ": " + status.ToString()));
          return;
        }
        std::lock_guard<std::mutex> reply_lock(live->group->mutex);
        --*pending;
        UpdateSync(live);
        live->group->changed.notify_all();
      });
  if (!submitted.ok()) {
    lock->unlock();
    Fail(stream,
         Status::IoError("backup " + peer->name + ": " + submitted.ToString()));
    return false;
  }
  return true;
}

bool Replicator::SendFlush(Stream* stream, std::unique_lock<std::mutex>* lock) {
  std::string flush;
  EncodeControl(
      {ControlType::kFlush, stream->group->region_id, stream->group->epoch,
       static_cast<uint32_t>(stream->filling),
       static_cast<uint32_t>(stream->offset), stream->sequence, std::string()},
      &flush);
  if (!SendToBackup(stream, flush, "FLUSH", &stream->flush_pending, lock)) {
    return false;
  }
  std::lock_guard<std::mutex> stats_lock(mutex_);
  ++stats_.flushes;
  return true;
}

bool Replicator::Connect(Stream* stream) {
  Group* group = stream->group.get();
  Stream::State state;
  uint64_t epoch;
  std::string stream_key;
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    state = stream->state;
    epoch = group->epoch;
    stream_key = group->stream_key;
  }
  const size_t buffers =
      group->mode == ReplicationMode::kSendIndex ? kSendIndexBuffers : kBuffers;
  if (stream->open_retry_at.has_value()) {
    if (Clock::now() < *stream->open_retry_at) return false;
    stream->open_retry_at.reset();
  }
  if (state == Stream::State::kOpening) {
    if (stream->open_pending) return false;
    std::lock_guard<std::mutex> lock(group->mutex);
    if (stream->state == Stream::State::kOpening) {
      stream->state = Stream::State::kReady;
      UpdateSync(stream);
      group->changed.notify_all();
    }
    return true;
  }
  if (stream->peer == nullptr) {
    Status status;
    stream->peer = PeerFor(stream, &status);
    if (stream->peer == nullptr) {
      if (!status.ok()) Fail(stream, status);
      return false;  // still connecting: the connector tells when done
    }
  }
  Peer* peer = stream->peer.get();
  if (!peer->client->health().ok()) {
    Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                 peer->client->health().ToString()));
    return false;
  }
  // The region's earlier stream on this connection still has writes in
  // flight into the buffers this OPEN will reuse: wait for them (a write
  // never completed breaks the connection within the timeout).
  const auto writing = peer->writes_in_flight.find(group->region_id);
  if (writing != peer->writes_in_flight.end() && writing->second > 0) {
    return false;
  }
  // OPEN's buffer field names the mode, its sequence the lineage of the
  // region (replication_format.h).
  Control control{ControlType::kOpen,
                  group->region_id,
                  epoch,
                  static_cast<uint32_t>(group->mode),
                  0,
                  group->mode == ReplicationMode::kSendIndex
                      ? group->region->incarnation()
                      : 0,
                  std::string()};
  // Only the group's primary holds the key: the backup takes the stream
  // from this connection alone.
  control.proof = OpenProof(control, stream_key, peer->client->connection_id());
  std::string open;
  EncodeControl(control, &open);
  stream->open_pending = true;
  const Status submitted = peer->client->Submit(
      open, [this, weak = stream->weak_from_this(), peer, buffers](
                Status status, std::string_view reply) {
        // A stream gone meanwhile cares no more (see SendToBackup).
        const std::shared_ptr<Stream> owner = weak.lock();
        if (owner == nullptr) return;
        Stream* const live = owner.get();
        ControlReply decoded;
        if (status.ok()) status = DecodeControlReply(reply, &decoded);
        if (status.ok()) status = decoded.status;
        if (status.ok() && decoded.buffers.size() != buffers) {
          status = Status::Corruption(
              "OPEN reply with " + std::to_string(decoded.buffers.size()) +
              " buffers, not " + std::to_string(buffers));
        }
        if (!status.ok() && RefusedForNow(status) && live->target.joining &&
            Clock::now() < live->created + kOpenRetryWindow) {
          live->open_pending = false;
          live->open_retry_at = Clock::now() + kOpenRetryDelay;
          {
            std::lock_guard<std::mutex> lock(live->group->mutex);
            if (live->state == Stream::State::kOpening) {
              live->state = Stream::State::kConnecting;
            }
          }
          open_retries_.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        if (!status.ok()) {
          Fail(live, Status::IoError("backup " + peer->name +
                                     " refused OPEN: " + status.ToString()));
          return;
        }
        live->buffers = decoded.buffers;
        live->open_pending = false;
        {
          std::lock_guard<std::mutex> opened_lock(live->group->mutex);
          live->held = std::move(decoded);
          live->opened = true;
        }
        std::lock_guard<std::mutex> lock(mutex_);  // its catch-up may start
        ++catch_up_generation_;
        catch_up_work_.notify_all();
      });
  if (!submitted.ok()) {
    Fail(stream,
         Status::IoError("backup " + peer->name + ": " + submitted.ToString()));
    return false;
  }
  std::lock_guard<std::mutex> lock(group->mutex);
  if (stream->state == Stream::State::kConnecting) {
    stream->state = Stream::State::kOpening;
  }
  return true;
}

void Replicator::Landed(Peer* peer, const std::vector<PostedBatch>& posted,
                        const Status& status) {
  --peer->posts_in_flight;
  for (const PostedBatch& each : posted) {
    const auto writing = peer->writes_in_flight.find(each.region_id);
    if (writing != peer->writes_in_flight.end() && --writing->second == 0) {
      peer->writes_in_flight.erase(writing);
    }
    const std::shared_ptr<Stream> owner = each.stream.lock();
    if (owner == nullptr) continue;
    Stream* const live = owner.get();
    if (!status.ok()) {
      Fail(live, Status::IoError("write to backup " + peer->name +
                                 " failed: " + status.ToString()));
      continue;
    }
    std::lock_guard<std::mutex> done_lock(live->group->mutex);
    each.batch->landed = true;
    while (!live->batches.empty() && live->batches.front()->landed) {
      const Stream::Batch& landed = *live->batches.front();
      if (live->group->mode == ReplicationMode::kSendIndex &&
          landed.lane < kSendIndexLogs) {
        Stream::LogState& log = live->logs[landed.lane];
        --log.batches;
        log.landed =
            std::max<uint64_t>(log.landed, landed.offset + landed.bytes.size());
      }
      live->batches.pop_front();
    }
    live->done_ticket = live->FirstTicketPending() - 1;
    UpdateSync(live);
    live->group->changed.notify_all();
  }
}

bool Replicator::PostBatches(
    const std::vector<std::shared_ptr<Stream>>& streams) {
  // The batches not posted yet of ready streams, by backup server, each
  // stream's in order.
  std::vector<std::pair<Peer*, std::vector<PostedBatch>>> by_peer;
  for (const auto& stream : streams) {
    Peer* const peer = stream->peer.get();
    if (peer == nullptr) continue;
    std::lock_guard<std::mutex> lock(stream->group->mutex);
    if (stream->state != Stream::State::kReady || !stream->failure.ok()) {
      continue;
    }
    for (const auto& batch : stream->batches) {
      if (batch->posted) continue;
      auto it = std::find_if(by_peer.begin(), by_peer.end(),
                             [peer](const auto& e) { return e.first == peer; });
      if (it == by_peer.end()) {
        by_peer.emplace_back(peer, std::vector<PostedBatch>{});
        it = by_peer.end() - 1;
      }
      it->second.push_back({stream, batch, stream->group->region_id});
    }
  }
  bool progressed = false;
  std::vector<channel::Client::RemotePiece> pieces;
  for (auto& [backup, batches] : by_peer) {
    Peer* const peer = backup;  // a structured binding is not capturable
    const size_t per_post = peer->client->remote_pieces_max();
    for (size_t at = 0; at < batches.size();) {
      // Full: they go together once a write completes.
      if (peer->posts_in_flight >= options_.posts_in_flight_max) break;
      // Small batches go together; a large one (a catch-up's segment) alone.
      size_t count = 1;
      uint64_t bytes = batches[at].batch->bytes.size();
      while (count < per_post && at + count < batches.size() &&
             bytes + batches[at + count].batch->bytes.size() <=
                 options_.batch_bytes_max) {
        bytes += batches[at + count].batch->bytes.size();
        ++count;
      }
      std::vector<PostedBatch> posted(
          batches.begin() + static_cast<long>(at),
          batches.begin() + static_cast<long>(at + count));
      pieces.clear();
      for (const PostedBatch& each : posted) {
        const std::shared_ptr<Stream> stream = each.stream.lock();
        pieces.push_back({&stream->buffers[each.batch->buffer],
                          each.batch->offset, each.batch->bytes});
      }
      const Status status = peer->client->WriteRemote(
          pieces, [this, peer, posted](Status outcome) {
            Landed(peer, posted, outcome);
          });
      if (status.IsBusy()) break;  // a full staging buffer: later
      if (!status.ok()) {
        for (const PostedBatch& each : posted) {
          if (const auto stream = each.stream.lock()) {
            Fail(stream.get(), Status::IoError("backup " + peer->name + ": " +
                                               status.ToString()));
          }
        }
        at += count;
        continue;
      }
      ++peer->posts_in_flight;
      for (const PostedBatch& each : posted) {
        const std::shared_ptr<Stream> stream = each.stream.lock();
        std::lock_guard<std::mutex> lock(stream->group->mutex);
        each.batch->posted = true;
        ++peer->writes_in_flight[each.region_id];
      }
      progressed = true;
      at += count;
      std::lock_guard<std::mutex> stats_lock(mutex_);
      ++stats_.writes;
      stats_.batches += count;
    }
  }
  return progressed;
}

bool Replicator::Pump(Stream* stream) {
  Stream::State state;
  {
    std::lock_guard<std::mutex> lock(stream->group->mutex);
    state = stream->state;
  }
  switch (state) {
    case Stream::State::kClosed:
    case Stream::State::kFailed:
      return false;
    case Stream::State::kConnecting:
    case Stream::State::kOpening:
      return Connect(stream);
    case Stream::State::kReady:
      break;
  }
  if (!stream->peer->client->health().ok()) {
    Fail(stream, Status::IoError("backup " + stream->peer->name + ": " +
                                 stream->peer->client->health().ToString()));
    return false;
  }
  return stream->group->mode == ReplicationMode::kSendIndex
             ? PumpSendIndex(stream)
             : PumpBuildIndex(stream);
}

bool Replicator::PumpBuildIndex(Stream* stream) {
  Group* group = stream->group.get();
  bool progressed = false;
  std::unique_lock<std::mutex> lock(group->mutex);
  // Batch what is queued (PostBatches posts it after the pass).
  for (bool batched = true; batched;) {
    batched = false;
    while (!stream->queue.empty()) {
      const size_t next = stream->queue.front().bytes.size();
      if (stream->offset + next > kBufferBytes) {
        if (stream->flush_pending > 0 || !stream->batches.empty()) break;
        // Hand the full buffer over; fill the other one.
        if (!SendFlush(stream, &lock)) return false;
        ++stream->sequence;
        stream->filling = (stream->filling + 1) % kBuffers;
        stream->offset = 0;
        progressed = true;
        continue;
      }
      auto batch = std::make_shared<Stream::Batch>();
      batch->buffer = stream->filling;
      batch->offset = stream->offset;
      batch->first_ticket = stream->queue.front().ticket;
      uint64_t records = 0;
      while (!stream->queue.empty()) {
        Stream::Queued& queued = stream->queue.front();
        if (stream->offset + batch->bytes.size() + queued.bytes.size() >
                kBufferBytes ||
            (!batch->bytes.empty() &&
             batch->bytes.size() + queued.bytes.size() >
                 options_.batch_bytes_max)) {
          break;
        }
        batch->bytes += queued.bytes;
        batch->last_ticket = queued.ticket;
        stream->queued_bytes -=
            std::min<uint64_t>(stream->queued_bytes, queued.bytes.size());
        stream->queue.pop_front();
        ++records;
      }
      stream->offset += batch->bytes.size();
      stream->batches.push_back(batch);
      {
        std::lock_guard<std::mutex> stats_lock(mutex_);
        stats_.records += records;
        stats_.bytes += batch->bytes.size();
      }
      progressed = true;
      batched = true;
    }
  }
  if (group->closing && stream->queue.empty() && stream->batches.empty() &&
      stream->flush_pending == 0) {
    if (stream->offset > 0) {
      // The last, partial buffer: the backup applies it.
      if (!SendFlush(stream, &lock)) return false;
      ++stream->sequence;
      stream->offset = 0;
      return true;
    }
    stream->state = Stream::State::kClosed;
    group->changed.notify_all();
    return true;
  }
  return progressed;
}

}  // namespace kvs::replication
