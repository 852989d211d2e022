// Engine::SplitRegion: one region becomes two that share its segments.
//
// The catalog change is one metadata batch (the commit point): the
// daughters get copies of every catalog entry that describes the parent's
// data -- its levels (draining ones too), its compacted LSN, both its logs'
// chains and the large log's GC state -- under their own prefixes, plus an
// origin entry (bounds, ancestors); every segment those entries name gets
// one more reference (the parent's goes to one daughter, the Share to the
// other); the parent's entries and name go. Nothing is merged first: the
// parent's L0s go to the daughters in memory (lsm::Region::PrepareSplit,
// OpenDaughter), and its write-ahead log, which holds them durably, is
// theirs until each has merged its share (a daughter opened after a crash
// replays it, keeping its own keys). Merging them before the commit once
// cost a split 60-250 ms of unavailability: it rewrites L1, however small
// the L0 (docs/BENCHMARKS.md, "Where a split's unavailable time goes").
//
// A Send-Index backup's replica splits the same way (Tebis's backups hold
// no L0): each daughter gets its installed levels and their hashes, its
// compacted LSN and its copies of the primary's small, large and medium log
// segments (a reference each: the small copies hold the writes of the L0s
// the primary's daughters took, so a daughter replica holds every write of
// its range the parent acknowledged, and may be promoted before its stream
// caught up; AdoptReplica moves shared small copies to segments of their
// own, and a replay keeps to the region's bounds); the daughters' markers
// name the lineage the primary's daughters go on with
// (lsm::Region::DaughterIncarnation). So the daughters' streams resume from
// what the backup holds: their catch-up ships the logs' end records (the
// split wrote them after the parent's stream detached); the index of each
// daughter's merge of its L0 follows as any merge's does, then the trims
// of the small copies.

#include <set>

#include "engine/engine.h"
#include "engine/engine_catalog.h"
#include "replication/log_mirror.h"
#include "replication/replica_adoption.h"
#include "util/coding.h"

namespace kvs::engine {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

Status CheckDaughterName(std::string_view name) {
  if (name.empty() || name.size() > kRegionNameBytesMax) {
    return Status::InvalidArgument("region names are 1 to 255 bytes");
  }
  return Status::Ok();
}

}  // namespace

bool Engine::HoldsReplica(uint64_t id) const {
  const std::string prefix = lsm::Region::CatalogPrefix(id);
  return replication::HoldsReplica(*volume_, id) ||
         !volume_->CatalogScan(prefix + "logmap/").empty();
}

Status Engine::BuildSplitBatch(std::string_view name, uint64_t id,
                               const lsm::RegionOrigin& origin,
                               std::string_view split_key,
                               std::string_view lower, std::string_view upper,
                               alloc::MetadataBatch* batch, uint64_t* lower_id,
                               uint64_t* upper_id) const {
  const auto next = volume_->CatalogGet(kNextRegionKey);
  *lower_id = next ? coding::DecodeFixed64(next->data()) : 1;
  *upper_id = *lower_id + 1;
  batch->Put(kNextRegionKey, coding::Fixed64String(*lower_id + 2));
  batch->Delete(NameKey(name));
  batch->Put(NameKey(lower), coding::Fixed64String(*lower_id));
  batch->Put(NameKey(upper), coding::Fixed64String(*upper_id));
  lsm::RegionOrigin lower_origin{origin.bounds.Below(split_key),
                                 origin.ancestors};
  lower_origin.ancestors.push_back(id);
  lsm::RegionOrigin upper_origin{origin.bounds.AtOrAbove(split_key),
                                 lower_origin.ancestors};
  batch->Put(lsm::Region::OriginCatalogKey(*lower_id), lower_origin.Encode());
  batch->Put(lsm::Region::OriginCatalogKey(*upper_id), upper_origin.Encode());

  const std::string prefix = lsm::Region::CatalogPrefix(id);
  const std::string lower_prefix = lsm::Region::CatalogPrefix(*lower_id);
  const std::string upper_prefix = lsm::Region::CatalogPrefix(*upper_id);
  std::set<uint64_t> shared;
  for (const auto& [key, value] : volume_->CatalogScan(prefix)) {
    const std::string rest = key.substr(prefix.size());
    batch->Delete(key);
    bool copied = true;
    if (rest == "replica") {
      // The daughters mirror the lineages the primary's daughters take.
      const uint64_t lineage =
          value.size() == 8 ? coding::DecodeFixed64(value.data()) : 0;
      batch->Put(lower_prefix + rest,
                 coding::Fixed64String(
                     lsm::Region::DaughterIncarnation(lineage, false)));
      batch->Put(upper_prefix + rest,
                 coding::Fixed64String(
                     lsm::Region::DaughterIncarnation(lineage, true)));
      copied = false;
    } else if (StartsWith(rest, "logmap/")) {
      replication::MirroredSegment copy;
      if (!replication::DecodeLogMapEntry(value, &copy)) {
        return Status::Corruption("malformed catalog entry " + key);
      }
      shared.insert(copy.backup_segment);
    } else if (StartsWith(rest, "log/small/") ||
               StartsWith(rest, "log/large/")) {
      if (value.size() != 8) {
        return Status::Corruption("malformed catalog entry " + key);
      }
      shared.insert(coding::DecodeFixed64(value.data()));
    } else if (StartsWith(rest, "level/") || StartsWith(rest, "draining/")) {
      lsm::LevelDescriptor level;
      KVS_RETURN_IF_ERROR(lsm::LevelDescriptor::Decode(value, &level));
      for (const uint64_t segment : level.AllSegments()) {
        shared.insert(segment);
      }
    } else if (rest == "origin") {
      copied = false;  // each daughter has its own, above
    } else if (rest != "state" && !StartsWith(rest, "gc/") &&
               !StartsWith(rest, "sealed/") &&
               !StartsWith(rest, "replica-level/")) {
      // Anything else is a catalog this build does not know.
      return Status::Corruption("region " + std::string(name) +
                                ": unknown catalog entry " + key);
    }
    if (copied) {
      batch->Put(lower_prefix + rest, value);
      batch->Put(upper_prefix + rest, value);
    }
  }
  for (const uint64_t segment : shared) {
    batch->Share(segment);
  }
  return Status::Ok();
}

Status Engine::SplitRegion(std::string_view name, std::string_view split_key,
                           std::string_view lower, std::string_view upper,
                           lsm::Region** lower_region,
                           lsm::Region** upper_region) {
  *lower_region = nullptr;
  *upper_region = nullptr;
  KVS_RETURN_IF_ERROR(CheckDaughterName(lower));
  KVS_RETURN_IF_ERROR(CheckDaughterName(upper));
  if (lower == upper || lower == name || upper == name) {
    return Status::InvalidArgument(
        "a split's daughters need two new, different names");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  settled_.wait(lock, [&] {
    return changing_.find(name) == changing_.end() &&
           changing_.find(lower) == changing_.end() &&
           changing_.find(upper) == changing_.end();
  });
  const auto id_entry = volume_->CatalogGet(NameKey(name));
  if (!id_entry.has_value() || id_entry->size() != 8) {
    return Status::NotFound("no region named '" + std::string(name) + "'");
  }
  for (const std::string_view daughter : {lower, upper}) {
    if (volume_->CatalogGet(NameKey(daughter)).has_value()) {
      return Status::InvalidArgument("region '" + std::string(daughter) +
                                     "' already exists");
    }
  }
  const uint64_t id = coding::DecodeFixed64(id_entry->data());
  const bool replica = HoldsReplica(id);
  std::unique_ptr<lsm::Region> parent = BeginChange(name);
  BeginChange(lower);
  BeginChange(upper);
  lock.unlock();
  const auto end_changes = [&](std::unique_ptr<lsm::Region> kept,
                               std::unique_ptr<lsm::Region> low,
                               std::unique_ptr<lsm::Region> high) {
    EndChange(name, std::move(kept));
    EndChange(lower, std::move(low));
    EndChange(upper, std::move(high));
  };
  if (parent == nullptr) {
    const Status opened = lsm::Region::Open(Context(), std::string(name), id,
                                            options_.region, &parent);
    if (!opened.ok()) {
      end_changes(nullptr, nullptr, nullptr);
      return opened;
    }
  }
  if (!parent->bounds().SplitsAt(split_key)) {
    end_changes(std::move(parent), nullptr, nullptr);
    return Status::InvalidArgument(
        "split key outside region '" + std::string(name) +
        "' or at its lower bound: both daughters would not hold keys");
  }
  // A replica's region object holds no L0 of its own.
  lsm::Region::SplitHandoff handoff;
  const Status prepared =
      replica ? Status::Ok() : parent->PrepareSplit(&handoff);
  if (!prepared.ok()) {
    end_changes(std::move(parent), nullptr, nullptr);
    return prepared;
  }
  // The budget's bytes of the parent's L0s that no daughter took.
  const auto release_handoff = [&] {
    l0_budget_.Release(handoff.Accounted());
    handoff.tables.clear();
  };
  const uint64_t incarnation = parent->incarnation();
  const lsm::RegionOrigin origin{parent->bounds(), parent->ancestors()};
  parent.reset();  // closed: what the catalog names is all there is
  alloc::MetadataBatch batch;
  uint64_t lower_id = 0, upper_id = 0;
  Status split = BuildSplitBatch(name, id, origin, split_key, lower, upper,
                                 &batch, &lower_id, &upper_id);
  if (split.ok()) split = volume_->Commit(batch);
  if (!split.ok()) {
    // Nothing changed: the region opens again as it was (its L0s replayed
    // from its logs).
    release_handoff();
    const Status reopened = lsm::Region::Open(Context(), std::string(name), id,
                                              options_.region, &parent);
    end_changes(std::move(parent), nullptr, nullptr);
    return split.ok() ? reopened : split;
  }
  std::unique_ptr<lsm::Region> low, high;
  const auto open = [&](std::string_view daughter, uint64_t daughter_id,
                        bool is_upper, std::unique_ptr<lsm::Region>* region) {
    return replica ? lsm::Region::Open(Context(), std::string(daughter),
                                       daughter_id, options_.region, region)
                   : lsm::Region::OpenDaughter(Context(), std::string(daughter),
                                               daughter_id, options_.region,
                                               &handoff, is_upper, region);
  };
  Status opened = open(lower, lower_id, false, &low);
  if (opened.ok()) opened = open(upper, upper_id, true, &high);
  // A daughter that did not open replays the logs when opened again.
  release_handoff();
  if (!replica) {
    // Their logs and levels are the parent's, which grow only from there.
    if (low != nullptr) {
      low->InheritIncarnation(
          lsm::Region::DaughterIncarnation(incarnation, false));
    }
    if (high != nullptr) {
      high->InheritIncarnation(
          lsm::Region::DaughterIncarnation(incarnation, true));
    }
  }
  *lower_region = low.get();
  *upper_region = high.get();
  end_changes(nullptr, std::move(low), std::move(high));
  return opened;
}

}  // namespace kvs::engine
