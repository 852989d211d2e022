#include "btree/node_format.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"
#include "btree/index_node.h"
#include "btree/leaf_node.h"
#include "util/coding.h"

namespace kvs::btree {
namespace {

namespace format = node_format;

// A leaf with every entry kind, keys with \x00 and \xff, and two log
// pointers, pointing at a next leaf.
std::string MakeLeaf() {
  LeafNodeBuilder builder;
  builder.Add(std::string_view("", 0), LeafValue::Inline("empty key"));
  builder.Add(std::string_view("\x00", 1), LeafValue::Tombstone());
  builder.Add("a", LeafValue::InLog(alloc::DeviceOffset(9, 100), 300));
  builder.Add("ab", LeafValue::Inline(std::string_view("v\x00\xff", 3)));
  builder.Add("b", LeafValue::InLog(alloc::DeviceOffset(10, 0), 1));
  builder.Add("\xff\xff", LeafValue::Inline(""));
  return std::string(builder.Finish(alloc::DeviceOffset(3, 8192)));
}

std::string MakeIndex() {
  IndexNodeBuilder builder;
  builder.Reset(2);
  builder.AddFirstChild(alloc::DeviceOffset(5, 0));
  builder.AddChild("b", alloc::DeviceOffset(5, 16384));
  builder.AddChild(std::string_view("b\x00", 2), alloc::DeviceOffset(6, 0));
  builder.AddChild("\xff", alloc::DeviceOffset(7, 32768));
  return std::string(builder.Finish());
}

// Changes a node field and recomputes the checksum, so that the check
// behind the checksum is what must catch the change.
std::string Resealed(std::string node, size_t offset, std::string_view bytes) {
  node.replace(offset, bytes.size(), bytes);
  SealNode(node.data(), node.size());
  return node;
}

std::string Fixed16(uint16_t value) {
  std::string bytes(2, '\0');
  coding::EncodeFixed16(bytes.data(), value);
  return bytes;
}

std::string Fixed64(uint64_t value) {
  std::string bytes(8, '\0');
  coding::EncodeFixed64(bytes.data(), value);
  return bytes;
}

void ExpectCorruption(const std::string& node, std::string_view words) {
  const Status status = ValidateNode(node);
  EXPECT_TRUE(status.IsCorruption()) << status.ToString();
  EXPECT_NE(status.message().find(words), std::string_view::npos)
      << status.ToString() << " lacks: " << words;
}

TEST(NodeFormatTest, HeaderRoundTripsAndLeavesReservedBytesZero) {
  NodeHeader header;
  header.type = NodeType::kIndex;
  header.level = 7;
  header.entry_count = 513;
  header.pointer_count = 514;
  header.used_size_bytes = 16000;
  header.next_leaf_offset = 0x0123456789abcdefull;
  std::string node(format::header_size_bytes, '\xee');
  EncodeNodeHeader(header, node.data());
  const NodeHeader decoded = DecodeNodeHeader(node.data());
  EXPECT_EQ(decoded.type, header.type);
  EXPECT_EQ(decoded.level, header.level);
  EXPECT_EQ(decoded.entry_count, header.entry_count);
  EXPECT_EQ(decoded.pointer_count, header.pointer_count);
  EXPECT_EQ(decoded.used_size_bytes, header.used_size_bytes);
  EXPECT_EQ(decoded.next_leaf_offset, header.next_leaf_offset);
  EXPECT_EQ(coding::DecodeFixed32(node.data() + format::magic_offset),
            format::magic);
  EXPECT_EQ(node[format::reserved_byte_offset], 0);
  EXPECT_EQ(node.substr(format::reserved_offset, format::reserved_size_bytes),
            std::string(format::reserved_size_bytes, '\0'));
  EXPECT_EQ(node.substr(0, 4), "\xee\xee\xee\xee");  // checksum untouched
}

TEST(NodeFormatTest, AcceptsBuiltNodes) {
  EXPECT_TRUE(ValidateNode(MakeLeaf()).ok());
  EXPECT_TRUE(ValidateNode(MakeIndex()).ok());
}

TEST(NodeFormatTest, RejectsEveryTruncationAndExtension) {
  for (const std::string& node : {MakeLeaf(), MakeIndex()}) {
    for (size_t size = 0; size < node.size(); ++size) {
      ASSERT_TRUE(
          ValidateNode(std::string_view(node).substr(0, size)).IsCorruption())
          << size;
    }
    EXPECT_TRUE(ValidateNode(node + '\0').IsCorruption());
  }
}

TEST(NodeFormatTest, RejectsEverySingleByteFlip) {
  for (std::string node : {MakeLeaf(), MakeIndex()}) {
    for (size_t i = 0; i < node.size(); ++i) {
      for (const char mask : {'\x01', '\x80', '\xff'}) {
        node[i] ^= mask;
        ASSERT_TRUE(ValidateNode(node).IsCorruption()) << "byte " << i;
        node[i] ^= mask;
      }
    }
    EXPECT_TRUE(ValidateNode(node).ok());  // restored
  }
}

// With the checksum fixed up, every flip is either caught by a structural
// check or yields a node the parsers read without going out of bounds (the
// sanitizer build checks the latter). Flips of header fields other than the
// level and the next-leaf pointer are always caught (the reader checks
// those two against the tree); so are flips of padding.
TEST(NodeFormatTest, StructuralChecksCatchResealedFlips) {
  for (const std::string& original : {MakeLeaf(), MakeIndex()}) {
    const size_t used = DecodeNodeHeader(original.data()).used_size_bytes;
    size_t accepted = 0;
    // Every byte in use; a sample of the (long, uniform) padding.
    for (size_t i = format::checksummed_offset; i < original.size();
         i += i < used ? 1 : 61) {
      std::string node = original;
      node[i] ^= '\x01';
      SealNode(node.data(), node.size());
      LeafNodeView leaf;
      IndexNodeView index;
      if (LeafNodeView::Parse(node, &leaf).ok()) {
        for (size_t e = 0; e < leaf.entry_count(); ++e) {
          (void)leaf.key(e);
          (void)leaf.value(e);
        }
      } else if (IndexNodeView::Parse(node, &index).ok()) {
        for (size_t p = 0; p < index.pivot_count(); ++p) {
          (void)index.pivot(p);
        }
      } else {
        continue;
      }
      ++accepted;
      EXPECT_TRUE(i >= format::next_leaf_offset || i == format::level_offset)
          << "header byte " << i;
      EXPECT_LT(i, used) << "padding byte " << i;
    }
    // Key and value bytes can change without breaking the format; most
    // structure bytes cannot.
    EXPECT_GT(accepted, 0u);
    EXPECT_LT(accepted, used);
  }
}

TEST(NodeFormatTest, NamesTheFieldThatIsWrong) {
  const std::string leaf = MakeLeaf();
  const std::string index = MakeIndex();
  std::string bad = leaf;
  bad[100] ^= 1;
  ExpectCorruption(bad, "checksum");
  ExpectCorruption(Resealed(leaf, format::magic_offset, "XXXX"), "magic");
  ExpectCorruption(Resealed(leaf, format::version_offset, "\x02"), "version");
  ExpectCorruption(Resealed(leaf, format::node_type_offset, "\x03"), "type");
  ExpectCorruption(Resealed(leaf, format::node_type_offset, "\x02"),
                   "does not match its size");
  ExpectCorruption(Resealed(leaf, format::level_offset, "\x01"), "level");
  ExpectCorruption(
      Resealed(index, format::level_offset, std::string_view("\x00", 1)),
      "level");
  ExpectCorruption(Resealed(leaf, format::reserved_offset + 3, "\x01"),
                   "reserved");
  ExpectCorruption(Resealed(leaf, format::used_size_offset, Fixed16(9000)),
                   "used size");
  ExpectCorruption(Resealed(leaf, 8000, "\x01"), "after its used size");
  ExpectCorruption(Resealed(leaf, format::next_leaf_offset, Fixed64(4096 + 1)),
                   "next-leaf");
  ExpectCorruption(Resealed(index, format::next_leaf_offset, Fixed64(8192)),
                   "next-leaf");
}

TEST(NodeFormatTest, RejectsBadLeafEntries) {
  const std::string leaf = MakeLeaf();
  const NodeHeader header = DecodeNodeHeader(leaf.data());
  const size_t slots = header.SlotArrayOffset();
  const size_t entries = header.EntriesOffset();
  // Slot 1 pointing one byte off.
  ExpectCorruption(Resealed(leaf, slots + 2, Fixed16(entries + 1)), "slot");
  // Entry 0: an unknown kind; a key size running past the used size.
  ExpectCorruption(Resealed(leaf, entries, "\x07"), "malformed");
  ExpectCorruption(Resealed(leaf, entries + 1, Fixed16(4000)), "malformed");
  // Keys "a" (entry 2) and "ab" (entry 3): make entry 2's key "b".
  const size_t entry2 = coding::DecodeFixed16(leaf.data() + slots + 4);
  ExpectCorruption(Resealed(leaf, entry2 + 3, "c"), "increasing");
  // Entry 2's pointer index must be 0; its log pointer must not be 0 or
  // cross a segment boundary with its 300-byte record.
  ExpectCorruption(Resealed(leaf, entry2 + 4, Fixed16(1)), "pointer index");
  ExpectCorruption(Resealed(leaf, format::pointer_array_offset, Fixed64(0)),
                   "value-log pointer");
  ExpectCorruption(Resealed(leaf, format::pointer_array_offset,
                            Fixed64(alloc::DeviceOffset(9, (2u << 20) - 299))),
                   "value-log pointer");
  // A leaf with no entries.
  std::string empty = leaf;
  std::fill(empty.begin() + format::header_size_bytes, empty.end(), '\0');
  NodeHeader empty_header;
  empty_header.used_size_bytes = format::header_size_bytes;
  EncodeNodeHeader(empty_header, empty.data());
  SealNode(empty.data(), empty.size());
  ExpectCorruption(empty, "no entries");
}

TEST(NodeFormatTest, RejectsBadIndexEntries) {
  const std::string index = MakeIndex();
  const NodeHeader header = DecodeNodeHeader(index.data());
  const size_t entries = header.EntriesOffset();
  ExpectCorruption(Resealed(index, format::entry_count_offset, Fixed16(2)),
                   "child count");
  // Pivot 0 ("b") empty, or made larger than pivot 1 ("b\0").
  ExpectCorruption(Resealed(index, entries, Fixed16(0)), "pivot");
  ExpectCorruption(Resealed(index, entries + 2, "c"), "increasing");
  // Child pointers: unaligned, zero, and a 16 KiB child crossing a segment.
  ExpectCorruption(Resealed(index, format::pointer_array_offset + 8,
                            Fixed64(alloc::DeviceOffset(5, 100))),
                   "child pointer");
  ExpectCorruption(Resealed(index, format::pointer_array_offset, Fixed64(0)),
                   "child pointer");
  ExpectCorruption(Resealed(index, format::pointer_array_offset,
                            Fixed64(alloc::DeviceOffset(5, (2u << 20) - 8192))),
                   "child pointer");
  // A level-1 node's children are leaves, which may sit there.
  EXPECT_TRUE(
      ValidateNode(Resealed(Resealed(index, format::level_offset, "\x01"),
                            format::pointer_array_offset,
                            Fixed64(alloc::DeviceOffset(5, (2u << 20) - 8192))))
          .ok());
}

TEST(NodeFormatTest, PointerRules) {
  EXPECT_FALSE(IsValidNodePointer(0, format::leaf_node_size_bytes));
  EXPECT_FALSE(IsValidNodePointer(4096 + 512, format::leaf_node_size_bytes));
  EXPECT_TRUE(IsValidNodePointer(alloc::DeviceOffset(1, (2u << 20) - 8192),
                                 format::leaf_node_size_bytes));
  EXPECT_FALSE(IsValidNodePointer(alloc::DeviceOffset(1, (2u << 20) - 8192),
                                  format::index_node_size_bytes));
  EXPECT_FALSE(IsValidLogPointer(0, 10));
  EXPECT_FALSE(IsValidLogPointer(alloc::DeviceOffset(1, 0), 0));
  EXPECT_TRUE(IsValidLogPointer(alloc::DeviceOffset(1, 7), (2u << 20) - 7));
  EXPECT_FALSE(IsValidLogPointer(alloc::DeviceOffset(1, 7), (2u << 20) - 6));
  EXPECT_FALSE(IsValidLogPointer(alloc::DeviceOffset(1, 0), uint64_t{1} << 40));
}

}  // namespace
}  // namespace kvs::btree
