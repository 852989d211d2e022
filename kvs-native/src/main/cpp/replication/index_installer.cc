#include "replication/index_installer.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "btree/node_format.h"
#include "btree/pointer_rewrite.h"
#include "io/aligned_buffer.h"
#include "lsm/node_cache.h"
#include "lsm/region.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

namespace format = btree::node_format;

size_t AlignUp(size_t size) {
  return (size + limits::io_alignment_bytes - 1) / limits::io_alignment_bytes *
         limits::io_alignment_bytes;
}

// The size of the well-formed node at node[0..available), or 0 if the bytes
// there are not one (the Bloom filter, or zeros, follows the nodes).
size_t NodeAt(const char* node, size_t available) {
  if (available < format::header_size_bytes ||
      coding::DecodeFixed32(node + format::magic_offset) != format::magic) {
    return 0;
  }
  const auto type = static_cast<uint8_t>(node[format::node_type_offset]);
  if (type != static_cast<uint8_t>(btree::NodeType::kLeaf) &&
      type != static_cast<uint8_t>(btree::NodeType::kIndex)) {
    return 0;
  }
  const size_t size = btree::NodeSizeBytes(static_cast<btree::NodeType>(type));
  if (size > available ||
      !btree::ValidateNode(std::string_view(node, size)).ok()) {
    return 0;
  }
  return size;
}

}  // namespace

IndexInstaller::IndexInstaller(alloc::Volume* volume, uint64_t region_id,
                               LogMaps logs)
    : volume_(volume), region_id_(region_id), logs_(logs) {}

IndexInstaller::~IndexInstaller() { Abandon(); }

uint64_t PrimaryLevelHash(const lsm::LevelDescriptor& primary) {
  const std::string encoded = primary.Encode();
  return Hash64(encoded.data(), encoded.size());
}

namespace {

// Where an installed level's PrimaryLevelHash is kept: the replica's own
// bookkeeping (a promotion drops it).
std::string HashPrefix(uint64_t region_id) {
  return lsm::Region::CatalogPrefix(region_id) + "replica-level/";
}

std::string HashKey(uint64_t region_id, size_t level) {
  char digits[3];
  std::snprintf(digits, sizeof(digits), "%02zu", level + 1);
  return HashPrefix(region_id) + digits;
}

}  // namespace

Status IndexInstaller::Open(alloc::Volume* volume, uint64_t region_id,
                            LogMaps logs,
                            std::unique_ptr<IndexInstaller>* installer) {
  std::unique_ptr<IndexInstaller> opened(
      new IndexInstaller(volume, region_id, logs));
  const std::string prefix = lsm::Region::CatalogPrefix(region_id) + "level/";
  for (const auto& [key, value] : volume->CatalogScan(prefix)) {
    const std::string digits = key.substr(prefix.size());
    const int number = std::atoi(digits.c_str());
    lsm::LevelDescriptor descriptor;
    if (digits.size() != 2 || number < 1 ||
        !lsm::LevelDescriptor::Decode(value, &descriptor).ok()) {
      return Status::Corruption("installed level " + key + " is damaged");
    }
    opened->levels_[static_cast<size_t>(number - 1)] = std::move(descriptor);
  }
  const std::string draining =
      lsm::Region::CatalogPrefix(region_id) + "draining/";
  for (const auto& [key, value] : volume->CatalogScan(draining)) {
    const std::string digits = key.substr(draining.size());
    const size_t number = std::strtoul(digits.c_str(), nullptr, 10);
    lsm::LevelDescriptor descriptor;
    if (digits.size() != 2 || !lsm::Region::IsDrainingLevel(number) ||
        !lsm::LevelDescriptor::Decode(value, &descriptor).ok()) {
      return Status::Corruption("installed draining level " + key +
                                " is damaged");
    }
    opened->levels_[number] = std::move(descriptor);
  }
  const std::string hashes = HashPrefix(region_id);
  for (const auto& [key, value] : volume->CatalogScan(hashes)) {
    const int number = std::atoi(key.substr(hashes.size()).c_str());
    if (value.size() == 8 && number >= 1 &&
        opened->levels_.count(static_cast<size_t>(number - 1)) != 0) {
      opened->primary_hashes_[static_cast<size_t>(number - 1)] =
          coding::DecodeFixed64(value.data());
    }
  }
  const auto state =
      volume->CatalogGet(lsm::Region::StateCatalogKey(region_id));
  if (state.has_value()) {
    if (state->size() != 8) {
      return Status::Corruption("the installed levels' LSN is damaged");
    }
    opened->compacted_lsn_ = coding::DecodeFixed64(state->data());
  }
  *installer = std::move(opened);
  return Status::Ok();
}

Status IndexInstaller::Clear() {
  Abandon();
  alloc::MetadataBatch batch;
  for (const auto& [level, descriptor] : levels_) {
    for (const uint64_t segment : descriptor.index_segments) {
      batch.Free(segment);
    }
    batch.Delete(lsm::Region::LevelCatalogKey(region_id_, level));
  }
  for (const auto& [key, value] :
       volume_->CatalogScan(HashPrefix(region_id_))) {
    batch.Delete(key);
  }
  batch.Delete(lsm::Region::StateCatalogKey(region_id_));
  KVS_RETURN_IF_ERROR(volume_->Commit(batch));
  levels_.clear();
  primary_hashes_.clear();
  compacted_lsn_ = 0;
  return Status::Ok();
}

void IndexInstaller::Abandon(size_t level) {
  const auto it = pending_.find(level);
  if (it == pending_.end()) return;
  for (const auto& [primary, backup] : it->second.index_map) {
    volume_->Unreserve(backup);
  }
  pending_.erase(it);
}

void IndexInstaller::Abandon() {
  while (!pending_.empty()) Abandon(pending_.begin()->first);
}

uint64_t IndexInstaller::NodesEnd(const Pending& pending, uint64_t primary) {
  const auto it = pending.layouts.find(primary);
  return it == pending.layouts.end() ? 0 : it->second.nodes_end;
}

Status IndexInstaller::IndexSegment(Pending& pending, uint64_t primary,
                                    uint64_t* backup) {
  const auto it = pending.index_map.find(primary);
  if (it != pending.index_map.end()) {
    *backup = it->second;
    return Status::Ok();
  }
  KVS_RETURN_IF_ERROR(volume_->Reserve(backup));
  pending.index_map[primary] = *backup;
  return Status::Ok();
}

Status IndexInstaller::TranslateIndexOffset(Pending& pending,
                                            uint64_t primary_offset,
                                            uint64_t* backup) {
  uint64_t segment = 0;
  KVS_RETURN_IF_ERROR(
      IndexSegment(pending, alloc::SegmentOf(primary_offset), &segment));
  *backup =
      alloc::DeviceOffset(segment, alloc::OffsetInSegment(primary_offset));
  return Status::Ok();
}

Status IndexInstaller::TranslateLogOffset(uint64_t primary_offset,
                                          uint64_t* backup) const {
  Status status = Status::NotFound("no log copies");
  for (const LogMirror* mirror : {logs_.large, logs_.medium}) {
    if (mirror == nullptr) continue;
    status = mirror->Translate(primary_offset, backup);
    if (!status.IsNotFound()) return status;
  }
  return Status::NotFound("a value pointer into segment " +
                          std::to_string(alloc::SegmentOf(primary_offset)) +
                          ", of which this backup has no log copy");
}

Status IndexInstaller::ReceiveSegment(size_t level, uint64_t primary_segment,
                                      std::string_view bytes) {
  if (bytes.empty() || bytes.size() > limits::segment_size_bytes) {
    return Status::InvalidArgument("a shipped index segment of " +
                                   std::to_string(bytes.size()) + " bytes");
  }
  Pending& pending = pending_[level];
  if (pending.received.count(primary_segment) != 0) {
    return Status::InvalidArgument("index segment " +
                                   std::to_string(primary_segment) +
                                   " shipped twice in one compaction");
  }
  // Written whole, zeros after the shipped bytes, as the primary writes its
  // index segments: nothing of the segment's earlier use may follow the
  // nodes, or a promoted backup's catch-up would ship it as part of them.
  const size_t size = limits::segment_size_bytes;
  io::AlignedBuffer segment(size);
  std::memset(segment.data(), 0, size);
  std::memcpy(segment.data(), bytes.data(), bytes.size());
  // Nodes are read from the segment as written, zeros after the shipped
  // bytes: a catch-up ships a segment without the zero blocks that end it
  // (Region::ReadSegment), which may be the end of its last node -- a sparse
  // root whose level's filter went to the next segment (the elastic
  // benchmark: a root with 192 nonzero bytes of 8 KiB, and every stream of
  // two daughters refused with "the root is not a shipped node").
  size_t offset = 0;
  while (const size_t node_size =
             NodeAt(segment.data() + offset, size - offset)) {
    char* node = segment.data() + offset;
    const btree::NodeHeader header = btree::DecodeNodeHeader(node);
    const bool leaf = header.type == btree::NodeType::kLeaf;
    // Pointers come in array order, then a leaf's next leaf.
    size_t index = 0;
    const Status rewritten = btree::RewriteNodePointers(
        node, node_size, [&](uint64_t old_offset, uint64_t* new_offset) {
          const bool value_pointer = leaf && index < header.pointer_count;
          ++index;
          return value_pointer
                     ? TranslateLogOffset(old_offset, new_offset)
                     : TranslateIndexOffset(pending, old_offset, new_offset);
        });
    if (!rewritten.ok()) {
      Abandon(level);
      return Status::InvalidArgument(
          "index segment " + std::to_string(primary_segment) + ", node at " +
          std::to_string(offset) + ": " + rewritten.ToString());
    }
    stats_.pointers += index;
    ++stats_.nodes;
    offset += node_size;
  }
  uint64_t backup = 0;
  Status status = IndexSegment(pending, primary_segment, &backup);
  if (status.ok()) {
    status = volume_->file()->Write(alloc::DeviceOffset(backup, 0),
                                    std::string_view(segment.data(), size));
  }
  if (!status.ok()) {
    Abandon(level);
    return status;
  }
  pending.received.insert(primary_segment);
  size_t data_end = bytes.size();
  while (data_end > offset && bytes[data_end - 1] == '\0') --data_end;
  pending.layouts[primary_segment] = {offset, data_end};
  ++stats_.segments;
  return Status::Ok();
}

Status IndexInstaller::Install(size_t level,
                               const lsm::LevelDescriptor& primary,
                               std::optional<size_t> emptied,
                               uint64_t compacted_lsn,
                               lsm::LevelDescriptor* installed) {
  if (emptied.has_value() && !primary.empty() && pending_.count(level) == 0 &&
      levels_.count(level) == 0 && primary_hashes_.count(*emptied) != 0 &&
      primary_hashes_.at(*emptied) == PrimaryLevelHash(primary)) {
    // The level it empties, under another number: a rename.
    return Move(*emptied, level, compacted_lsn, installed);
  }
  auto reject = [this, level](const std::string& why) {
    Abandon(level);
    return Status::InvalidArgument("cannot install the shipped level: " + why);
  };
  Pending& pending = pending_[level];
  lsm::LevelDescriptor translated = primary;
  if (!primary.empty()) {
    const std::set<uint64_t> own(primary.index_segments.begin(),
                                 primary.index_segments.end());
    for (const uint64_t segment : own) {
      if (pending.received.count(segment) == 0) {
        return reject("index segment " + std::to_string(segment) +
                      " never arrived");
      }
    }
    for (const auto& [segment, backup] : pending.index_map) {
      if (own.count(segment) == 0) {
        return reject("a node points into segment " + std::to_string(segment) +
                      ", which is not the level's");
      }
    }
    auto inside_nodes = [&](uint64_t offset) {
      return alloc::OffsetInSegment(offset) <
             NodesEnd(pending, alloc::SegmentOf(offset));
    };
    if (!inside_nodes(primary.root)) {
      return reject("the root is not a shipped node");
    }
    KVS_RETURN_IF_ERROR(
        TranslateIndexOffset(pending, primary.root, &translated.root));
    translated.index_segments.clear();
    for (const uint64_t segment : primary.index_segments) {
      translated.index_segments.push_back(pending.index_map.at(segment));
    }
    // Every byte of a shipped segment is a rewritten node, a Bloom filter
    // chunk right after the nodes (WriteBlob: one chunk per 2 MiB of the
    // filter), or zero: anything else (a damaged node) is refused.
    std::map<uint64_t, uint64_t> expected_end;
    for (const auto& [segment, layout] : pending.layouts) {
      expected_end[segment] = layout.nodes_end;
    }
    translated.bloom_chunks.clear();
    for (size_t i = 0; i < primary.bloom_chunks.size(); ++i) {
      const uint64_t chunk = primary.bloom_chunks[i];
      const uint64_t segment = alloc::SegmentOf(chunk);
      const uint64_t start = i * limits::segment_size_bytes;
      if (own.count(segment) == 0 || start >= primary.bloom_bytes ||
          alloc::OffsetInSegment(chunk) != NodesEnd(pending, segment)) {
        return reject("a Bloom filter chunk is not right after the nodes");
      }
      expected_end[segment] += AlignUp(std::min<uint64_t>(
          limits::segment_size_bytes, primary.bloom_bytes - start));
      uint64_t backup = 0;
      KVS_RETURN_IF_ERROR(TranslateIndexOffset(pending, chunk, &backup));
      translated.bloom_chunks.push_back(backup);
    }
    for (const auto& [segment, layout] : pending.layouts) {
      if (layout.data_end > expected_end[segment]) {
        return reject("segment " + std::to_string(segment) +
                      " holds bytes that are neither nodes nor the filter "
                      "(at " +
                      std::to_string(expected_end[segment]) + ")");
      }
    }
    translated.medium_segments.clear();
    const auto medium = logs_.medium != nullptr
                            ? logs_.medium->segments()
                            : std::map<uint64_t, MirroredSegment>();
    for (const uint64_t segment : primary.medium_segments) {
      const auto it = medium.find(segment);
      if (it == medium.end()) {
        return reject("no copy of medium-log segment " +
                      std::to_string(segment));
      }
      translated.medium_segments.push_back(it->second.backup_segment);
    }
  } else if (!pending.index_map.empty()) {
    return reject("segments shipped for an empty level");
  }
  if (!translated.empty() && translated.bloom_bytes > 0) {
    // The filter as the backup would load it (Level::Open validates it);
    // nodes are read only later, and were validated when rewritten.
    lsm::NodeCache no_nodes(volume_->file(), 0);
    std::shared_ptr<lsm::Level> level_check;
    const Status filter =
        lsm::Level::Open(volume_->file(), &no_nodes, translated, &level_check);
    if (!filter.ok()) return reject("its Bloom filter: " + filter.ToString());
  }
  // The new segments are durable before the catalog names them.
  Status status = volume_->file()->Sync();
  alloc::MetadataBatch batch;
  for (const auto& [segment, backup] : pending.index_map)
    batch.Allocate(backup);
  std::vector<size_t> replaced = {level};
  if (emptied.has_value()) replaced.push_back(*emptied);
  for (const size_t old : replaced) {
    const auto it = levels_.find(old);
    if (it == levels_.end()) continue;
    for (const uint64_t segment : it->second.index_segments) {
      batch.Free(segment);
    }
    if (old != level || translated.empty()) {
      batch.Delete(lsm::Region::LevelCatalogKey(region_id_, old));
      batch.Delete(HashKey(region_id_, old));
    }
  }
  if (!translated.empty()) {
    batch.Put(lsm::Region::LevelCatalogKey(region_id_, level),
              translated.Encode());
    batch.Put(HashKey(region_id_, level),
              coding::Fixed64String(PrimaryLevelHash(primary)));
  }
  batch.Put(lsm::Region::StateCatalogKey(region_id_),
            coding::Fixed64String(compacted_lsn));
  if (status.ok()) status = volume_->Commit(batch);
  if (!status.ok()) {
    Abandon(level);
    return status;
  }
  pending_.erase(level);  // committed: no longer ours to return
  for (const size_t old : replaced) {
    levels_.erase(old);
    primary_hashes_.erase(old);
  }
  if (!translated.empty()) {
    levels_[level] = translated;
    primary_hashes_[level] = PrimaryLevelHash(primary);
  }
  compacted_lsn_ = compacted_lsn;
  ++stats_.levels;
  if (installed != nullptr) *installed = translated;
  return Status::Ok();
}

Status IndexInstaller::Move(size_t from, size_t to, uint64_t compacted_lsn,
                            lsm::LevelDescriptor* installed) {
  const lsm::LevelDescriptor moved = levels_.at(from);
  const uint64_t hash = primary_hashes_.at(from);
  alloc::MetadataBatch batch;
  batch.Delete(lsm::Region::LevelCatalogKey(region_id_, from));
  batch.Delete(HashKey(region_id_, from));
  batch.Put(lsm::Region::LevelCatalogKey(region_id_, to), moved.Encode());
  batch.Put(HashKey(region_id_, to), coding::Fixed64String(hash));
  batch.Put(lsm::Region::StateCatalogKey(region_id_),
            coding::Fixed64String(compacted_lsn));
  KVS_RETURN_IF_ERROR(volume_->Commit(batch));
  levels_.erase(from);
  primary_hashes_.erase(from);
  levels_[to] = moved;
  primary_hashes_[to] = hash;
  compacted_lsn_ = compacted_lsn;
  ++stats_.levels;
  if (installed != nullptr) *installed = moved;
  return Status::Ok();
}

}  // namespace kvs::replication
