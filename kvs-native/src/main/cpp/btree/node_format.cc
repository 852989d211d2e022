#include "btree/node_format.h"

#include <cstring>
#include <string>

#include "alloc/device_offset.h"
#include "btree/index_node.h"
#include "btree/leaf_node.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::btree {

namespace format = node_format;

NodeHeader DecodeNodeHeader(const char* node) {
  NodeHeader header;
  header.type = static_cast<NodeType>(node[format::node_type_offset]);
  header.level = static_cast<uint8_t>(node[format::level_offset]);
  header.entry_count = coding::DecodeFixed16(node + format::entry_count_offset);
  header.pointer_count =
      coding::DecodeFixed16(node + format::pointer_count_offset);
  header.used_size_bytes =
      coding::DecodeFixed16(node + format::used_size_offset);
  header.next_leaf_offset =
      coding::DecodeFixed64(node + format::next_leaf_offset);
  return header;
}

void EncodeNodeHeader(const NodeHeader& header, char* node) {
  std::memset(node + format::checksummed_offset, 0,
              format::header_size_bytes - format::checksummed_offset);
  coding::EncodeFixed32(node + format::magic_offset, format::magic);
  node[format::node_type_offset] = static_cast<char>(header.type);
  node[format::version_offset] = static_cast<char>(format::version);
  node[format::level_offset] = static_cast<char>(header.level);
  coding::EncodeFixed16(node + format::entry_count_offset, header.entry_count);
  coding::EncodeFixed16(node + format::pointer_count_offset,
                        header.pointer_count);
  coding::EncodeFixed16(node + format::used_size_offset,
                        header.used_size_bytes);
  coding::EncodeFixed64(node + format::next_leaf_offset,
                        header.next_leaf_offset);
}

uint32_t ComputeNodeChecksum(const char* node, size_t size) {
  KVS_CHECK(size >= format::header_size_bytes);
  return crc32c::Mask(crc32c::Value(node + format::checksummed_offset,
                                    size - format::checksummed_offset));
}

void AssembleNode(const NodeHeader& header,
                  const std::vector<uint64_t>& pointers,
                  const std::vector<uint16_t>& entry_offsets,
                  std::string_view entries, char* node, size_t size) {
  EncodeNodeHeader(header, node);
  for (size_t i = 0; i < pointers.size(); ++i) {
    coding::EncodeFixed64(
        node + format::pointer_array_offset + i * format::pointer_size_bytes,
        pointers[i]);
  }
  const size_t entries_offset = header.EntriesOffset();
  for (size_t i = 0; i < entry_offsets.size(); ++i) {
    coding::EncodeFixed16(
        node + header.SlotArrayOffset() + i * format::slot_size_bytes,
        static_cast<uint16_t>(entries_offset + entry_offsets[i]));
  }
  std::memcpy(node + entries_offset, entries.data(), entries.size());
  SealNode(node, size);
}

void SealNode(char* node, size_t size) {
  coding::EncodeFixed32(node + format::checksum_offset,
                        ComputeNodeChecksum(node, size));
}

bool IsValidNodePointer(uint64_t offset, size_t node_size_bytes) {
  return offset != 0 && offset % limits::io_alignment_bytes == 0 &&
         alloc::OffsetInSegment(offset) + node_size_bytes <=
             limits::segment_size_bytes;
}

bool IsValidLogPointer(uint64_t offset, uint64_t record_size_bytes) {
  return offset != 0 && record_size_bytes != 0 &&
         record_size_bytes <= limits::segment_size_bytes &&
         alloc::OffsetInSegment(offset) + record_size_bytes <=
             limits::segment_size_bytes;
}

Status ValidateNode(std::string_view node) {
  const size_t size = node.size();
  if (size != format::leaf_node_size_bytes &&
      size != format::index_node_size_bytes) {
    return Status::Corruption("node has " + std::to_string(size) +
                              " bytes: neither a leaf nor an index node size");
  }
  const char* bytes = node.data();
  if (coding::DecodeFixed32(bytes + format::checksum_offset) !=
      ComputeNodeChecksum(bytes, size)) {
    return Status::Corruption("node checksum mismatch");
  }
  if (coding::DecodeFixed32(bytes + format::magic_offset) != format::magic) {
    return Status::Corruption("node has a bad magic number");
  }
  const auto version = static_cast<uint8_t>(bytes[format::version_offset]);
  if (version != format::version) {
    return Status::Corruption("node has unsupported format version " +
                              std::to_string(version));
  }
  const NodeHeader header = DecodeNodeHeader(bytes);
  if (header.type != NodeType::kLeaf && header.type != NodeType::kIndex) {
    return Status::Corruption("node has unknown type " +
                              std::to_string(static_cast<int>(header.type)));
  }
  if (NodeSizeBytes(header.type) != size) {
    return Status::Corruption("node type does not match its size");
  }
  if (bytes[format::reserved_byte_offset] != 0 ||
      std::string_view(bytes + format::reserved_offset,
                       format::reserved_size_bytes) !=
          std::string_view("\0\0\0\0\0\0", format::reserved_size_bytes)) {
    return Status::Corruption("node has non-zero reserved header bytes");
  }
  if (header.type == NodeType::kLeaf
          ? header.level != 0
          : (header.level == 0 || header.level >= format::tree_height_max)) {
    return Status::Corruption("node has impossible level " +
                              std::to_string(header.level));
  }
  if (header.used_size_bytes < header.EntriesOffset() ||
      header.used_size_bytes > size) {
    return Status::Corruption(
        "node's used size " + std::to_string(header.used_size_bytes) +
        " cannot hold its pointers and slots or exceeds the node");
  }
  for (size_t i = header.used_size_bytes; i < size; ++i) {
    if (bytes[i] != 0) {
      return Status::Corruption("node has non-zero bytes after its used size");
    }
  }
  if (header.type == NodeType::kIndex) {
    if (header.next_leaf_offset != 0) {
      return Status::Corruption("index node has a next-leaf pointer");
    }
    return internal::ValidateIndexEntries(node, header);
  }
  if (header.next_leaf_offset != 0 &&
      !IsValidNodePointer(header.next_leaf_offset,
                          format::leaf_node_size_bytes)) {
    return Status::Corruption("leaf has an invalid next-leaf pointer");
  }
  return internal::ValidateLeafEntries(node, header);
}

}  // namespace kvs::btree
