#include "btree/leaf_node.h"

#include <cstring>
#include <string>

#include "util/check.h"
#include "util/coding.h"

namespace kvs::btree {

namespace {

namespace format = node_format;
namespace lf = leaf_format;

constexpr size_t entry_prefix_size_bytes =
    lf::kind_size_bytes + lf::key_size_size_bytes;

struct LeafEntry {
  EntryKind kind = EntryKind::kDelete;
  std::string_view key;
  std::string_view inline_bytes;
  uint16_t pointer_index = 0;
  uint32_t record_size_bytes = 0;
};

// Decodes the entry at node[offset, limit), where offset <= limit <=
// node.size(). Returns the offset right after the entry, or 0 when the bytes
// there are not a well-formed entry that ends by `limit`.
size_t DecodeLeafEntry(std::string_view node, size_t offset, size_t limit,
                       LeafEntry* entry) {
  const char* bytes = node.data();
  if (limit - offset < entry_prefix_size_bytes) {
    return 0;
  }
  entry->kind = static_cast<EntryKind>(bytes[offset]);
  const size_t key_size = coding::DecodeFixed16(bytes + offset + 1);
  size_t position = offset + entry_prefix_size_bytes;
  if (key_size > limits::key_size_bytes_max || limit - position < key_size) {
    return 0;
  }
  entry->key = node.substr(position, key_size);
  position += key_size;
  switch (entry->kind) {
    case EntryKind::kPutInline: {
      if (limit - position < lf::value_size_size_bytes) {
        return 0;
      }
      const size_t value_size = coding::DecodeFixed32(bytes + position);
      position += lf::value_size_size_bytes;
      if (value_size > lf::leaf_inline_value_size_bytes_max ||
          limit - position < value_size) {
        return 0;
      }
      entry->inline_bytes = node.substr(position, value_size);
      return position + value_size;
    }
    case EntryKind::kPutInLog:
      if (limit - position <
          lf::pointer_index_size_bytes + lf::record_size_size_bytes) {
        return 0;
      }
      entry->pointer_index = coding::DecodeFixed16(bytes + position);
      entry->record_size_bytes = coding::DecodeFixed32(
          bytes + position + lf::pointer_index_size_bytes);
      return position + lf::pointer_index_size_bytes +
             lf::record_size_size_bytes;
    case EntryKind::kDelete:
      return position;
  }
  return 0;  // unknown kind
}

uint16_t SlotAt(std::string_view node, const NodeHeader& header, size_t i) {
  return coding::DecodeFixed16(node.data() + header.SlotArrayOffset() +
                               i * format::slot_size_bytes);
}

uint64_t PointerAt(std::string_view node, size_t i) {
  return coding::DecodeFixed64(node.data() + format::pointer_array_offset +
                               i * format::pointer_size_bytes);
}

}  // namespace

Status CheckLeafEntry(std::string_view key, const LeafValue& value) {
  if (key.size() > limits::key_size_bytes_max) {
    return Status::InvalidArgument("key of " + std::to_string(key.size()) +
                                   " bytes exceeds the maximum key size");
  }
  switch (value.kind) {
    case EntryKind::kPutInline:
      if (value.inline_bytes.size() > lf::leaf_inline_value_size_bytes_max) {
        return Status::InvalidArgument(
            "inline value of " + std::to_string(value.inline_bytes.size()) +
            " bytes does not fit a leaf; store it in a value log");
      }
      return Status::Ok();
    case EntryKind::kPutInLog:
      if (!IsValidLogPointer(value.log_offset, value.log_record_size_bytes)) {
        return Status::InvalidArgument(
            "log pointer is zero, its record empty, or the record crosses a "
            "segment boundary");
      }
      return Status::Ok();
    case EntryKind::kDelete:
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown entry kind");
}

size_t LeafNodeBuilder::EntrySizeBytes(std::string_view key,
                                       const LeafValue& value) {
  size_t size = format::slot_size_bytes + entry_prefix_size_bytes + key.size();
  if (value.kind == EntryKind::kPutInline) {
    size += lf::value_size_size_bytes + value.inline_bytes.size();
  } else if (value.kind == EntryKind::kPutInLog) {
    size += format::pointer_size_bytes + lf::pointer_index_size_bytes +
            lf::record_size_size_bytes;
  }
  return size;
}

void LeafNodeBuilder::Reset() {
  log_offsets_.clear();
  entry_offsets_.clear();
  entries_.clear();
}

size_t LeafNodeBuilder::used_size_bytes() const {
  return format::header_size_bytes +
         log_offsets_.size() * format::pointer_size_bytes +
         entry_offsets_.size() * format::slot_size_bytes + entries_.size();
}

bool LeafNodeBuilder::Fits(std::string_view key, const LeafValue& value) const {
  return used_size_bytes() + EntrySizeBytes(key, value) <=
         format::leaf_node_size_bytes;
}

std::string_view LeafNodeBuilder::LastKey() const {
  const size_t offset = entry_offsets_.back();
  const size_t key_size = coding::DecodeFixed16(entries_.data() + offset + 1);
  return std::string_view(entries_).substr(offset + entry_prefix_size_bytes,
                                           key_size);
}

void LeafNodeBuilder::Add(std::string_view key, const LeafValue& value) {
  KVS_CHECK(CheckLeafEntry(key, value).ok());
  KVS_CHECK(Fits(key, value));
  KVS_CHECK_MSG(empty() || LastKey() < key, "leaf keys must increase");
  entry_offsets_.push_back(static_cast<uint16_t>(entries_.size()));
  char prefix[entry_prefix_size_bytes];
  prefix[0] = static_cast<char>(value.kind);
  coding::EncodeFixed16(prefix + 1, static_cast<uint16_t>(key.size()));
  entries_.append(prefix, sizeof(prefix));
  entries_.append(key);
  if (value.kind == EntryKind::kPutInline) {
    char size[lf::value_size_size_bytes];
    coding::EncodeFixed32(size,
                          static_cast<uint32_t>(value.inline_bytes.size()));
    entries_.append(size, sizeof(size));
    entries_.append(value.inline_bytes);
  } else if (value.kind == EntryKind::kPutInLog) {
    char reference[lf::pointer_index_size_bytes + lf::record_size_size_bytes];
    coding::EncodeFixed16(reference,
                          static_cast<uint16_t>(log_offsets_.size()));
    coding::EncodeFixed32(reference + lf::pointer_index_size_bytes,
                          value.log_record_size_bytes);
    entries_.append(reference, sizeof(reference));
    log_offsets_.push_back(value.log_offset);
  }
}

std::string_view LeafNodeBuilder::Finish(uint64_t next_leaf_offset) {
  KVS_CHECK(!empty());
  KVS_CHECK(next_leaf_offset == 0 ||
            IsValidNodePointer(next_leaf_offset, format::leaf_node_size_bytes));
  node_.assign(format::leaf_node_size_bytes, '\0');
  NodeHeader header;
  header.type = NodeType::kLeaf;
  header.level = 0;
  header.entry_count = static_cast<uint16_t>(entry_offsets_.size());
  header.pointer_count = static_cast<uint16_t>(log_offsets_.size());
  header.used_size_bytes = static_cast<uint16_t>(used_size_bytes());
  header.next_leaf_offset = next_leaf_offset;
  AssembleNode(header, log_offsets_, entry_offsets_, entries_, node_.data(),
               node_.size());
  return node_;
}

Status LeafNodeView::Parse(std::string_view node, LeafNodeView* view,
                           bool validated) {
  if (!validated) {
    KVS_RETURN_IF_ERROR(ValidateNode(node));
  }
  const NodeHeader header = DecodeNodeHeader(node.data());
  if (header.type != NodeType::kLeaf) {
    return Status::Corruption("expected a leaf, found an index node");
  }
  view->node_ = node;
  view->header_ = header;
  return Status::Ok();
}

std::string_view LeafNodeView::key(size_t index) const {
  KVS_CHECK(index < entry_count());
  const size_t slot = SlotAt(node_, header_, index);
  const size_t key_size = coding::DecodeFixed16(node_.data() + slot + 1);
  return node_.substr(slot + entry_prefix_size_bytes, key_size);
}

LeafValue LeafNodeView::value(size_t index) const {
  KVS_CHECK(index < entry_count());
  LeafEntry entry;
  const size_t end = DecodeLeafEntry(node_, SlotAt(node_, header_, index),
                                     header_.used_size_bytes, &entry);
  KVS_CHECK(end != 0);  // validated by Parse
  switch (entry.kind) {
    case EntryKind::kPutInline:
      return LeafValue::Inline(entry.inline_bytes);
    case EntryKind::kPutInLog:
      return LeafValue::InLog(PointerAt(node_, entry.pointer_index),
                              entry.record_size_bytes);
    case EntryKind::kDelete:
      break;
  }
  return LeafValue::Tombstone();
}

size_t LeafNodeView::LowerBound(std::string_view target) const {
  size_t low = 0;
  size_t high = entry_count();
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (key(middle) < target) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

namespace internal {

Status ValidateLeafEntries(std::string_view node, const NodeHeader& header) {
  if (header.entry_count == 0) {
    return Status::Corruption("leaf has no entries");
  }
  // Builds the message only on failure: validation runs on every read.
  const auto corrupt = [](const char* problem, size_t index) {
    return Status::Corruption(std::string(problem) + " at leaf entry " +
                              std::to_string(index));
  };
  size_t expected_offset = header.EntriesOffset();
  size_t log_entry_count = 0;
  std::string_view previous_key;
  for (size_t i = 0; i < header.entry_count; ++i) {
    if (SlotAt(node, header, i) != expected_offset) {
      return corrupt("slot does not point right after the previous entry", i);
    }
    LeafEntry entry;
    const size_t end =
        DecodeLeafEntry(node, expected_offset, header.used_size_bytes, &entry);
    if (end == 0) {
      return corrupt("malformed entry or entry past the used size", i);
    }
    if (i > 0 && !(previous_key < entry.key)) {
      return corrupt("keys not in strictly increasing order", i);
    }
    if (entry.kind == EntryKind::kPutInLog) {
      if (entry.pointer_index != log_entry_count ||
          log_entry_count >= header.pointer_count) {
        return corrupt("pointer index out of order or range", i);
      }
      if (!IsValidLogPointer(PointerAt(node, log_entry_count),
                             entry.record_size_bytes)) {
        return corrupt("invalid value-log pointer", i);
      }
      ++log_entry_count;
    }
    previous_key = entry.key;
    expected_offset = end;
  }
  if (expected_offset != header.used_size_bytes) {
    return Status::Corruption("leaf entries do not end at its used size");
  }
  if (log_entry_count != header.pointer_count) {
    return Status::Corruption("leaf has pointers that no entry uses");
  }
  return Status::Ok();
}

}  // namespace internal

}  // namespace kvs::btree
