#include "lsm/level.h"

#include <algorithm>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

constexpr uint64_t kDescriptorVersion = 1;

}  // namespace

std::string LevelDescriptor::Encode() const {
  std::string out;
  coding::PutVarint64(&out, kDescriptorVersion);
  coding::PutVarint64(&out, root);
  coding::PutVarint64(&out, entries);
  coding::PutVarint64(&out, kv_bytes);
  coding::PutVarint64List(&out, index_segments);
  coding::PutVarint64(&out, bloom_bytes);
  coding::PutVarint64List(&out, bloom_chunks);
  coding::PutVarint64List(&out, medium_segments);
  return out;
}

Status LevelDescriptor::Decode(std::string_view encoded,
                               LevelDescriptor* descriptor) {
  LevelDescriptor result;
  uint64_t version = 0;
  std::string_view input = encoded;
  const bool ok =
      coding::GetVarint64(&input, &version) && version == kDescriptorVersion &&
      coding::GetVarint64(&input, &result.root) &&
      coding::GetVarint64(&input, &result.entries) &&
      coding::GetVarint64(&input, &result.kv_bytes) &&
      coding::GetVarint64List(&input, &result.index_segments) &&
      coding::GetVarint64(&input, &result.bloom_bytes) &&
      coding::GetVarint64List(&input, &result.bloom_chunks) &&
      coding::GetVarint64List(&input, &result.medium_segments) && input.empty();
  if (!ok) {
    return Status::Corruption("malformed level descriptor");
  }
  if (result.bloom_bytes >
      result.bloom_chunks.size() * limits::segment_size_bytes) {
    return Status::Corruption("level's Bloom filter exceeds its chunks");
  }
  *descriptor = std::move(result);
  return Status::Ok();
}

std::vector<uint64_t> LevelDescriptor::AllSegments() const {
  std::vector<uint64_t> all = index_segments;
  all.insert(all.end(), medium_segments.begin(), medium_segments.end());
  return all;
}

Level::Level(btree::NodeSource* nodes, LevelDescriptor descriptor)
    : descriptor_(std::move(descriptor)), tree_(nodes, descriptor_.root) {}

Status Level::Open(io::File* file, btree::NodeSource* nodes,
                   LevelDescriptor descriptor, std::shared_ptr<Level>* level) {
  std::shared_ptr<Level> opened(new Level(nodes, std::move(descriptor)));
  const LevelDescriptor& d = opened->descriptor_;
  if (d.bloom_bytes > 0) {
    io::AlignedBuffer buffer(limits::segment_size_bytes);
    std::string& bytes = opened->bloom_bytes_;
    bytes.reserve(d.bloom_bytes);
    for (uint64_t chunk : d.bloom_chunks) {
      const uint64_t remaining = d.bloom_bytes - bytes.size();
      const size_t length =
          io::AlignedBuffer::RoundUp(std::min(remaining, buffer.size()));
      if (alloc::OffsetInSegment(chunk) + length > limits::segment_size_bytes) {
        return Status::Corruption("Bloom filter chunk crosses a segment");
      }
      KVS_RETURN_IF_ERROR(file->Read(chunk, length, buffer.data()));
      bytes.append(buffer.data(),
                   std::min<uint64_t>(remaining, limits::segment_size_bytes));
    }
    KVS_RETURN_IF_ERROR(btree::BloomFilterReader::Open(bytes, &opened->bloom_));
  }
  *level = std::move(opened);
  return Status::Ok();
}

bool Level::IsMediumSegment(uint64_t segment) const {
  const auto& medium = descriptor_.medium_segments;
  return std::find(medium.begin(), medium.end(), segment) != medium.end();
}

}  // namespace kvs::lsm
