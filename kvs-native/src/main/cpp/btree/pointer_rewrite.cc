#include "btree/pointer_rewrite.h"

#include <cstring>
#include <string>
#include <string_view>

#include "btree/node_format.h"
#include "util/check.h"
#include "util/coding.h"

namespace kvs::btree {

namespace format = node_format;

Status RewriteNodePointers(char* node, size_t size, const PointerMap& map) {
  KVS_CHECK(node != nullptr || size == 0);
  KVS_RETURN_IF_ERROR(ValidateNode(std::string_view(node, size)));
  // Rewrite a copy so that the node stays unchanged on any error.
  std::string rewritten(node, size);
  char* bytes = rewritten.data();
  const NodeHeader header = DecodeNodeHeader(bytes);
  for (size_t i = 0; i < header.pointer_count; ++i) {
    char* pointer =
        bytes + format::pointer_array_offset + i * format::pointer_size_bytes;
    uint64_t new_offset = 0;
    KVS_RETURN_IF_ERROR(map(coding::DecodeFixed64(pointer), &new_offset));
    coding::EncodeFixed64(pointer, new_offset);
  }
  if (header.next_leaf_offset != 0) {
    uint64_t new_offset = 0;
    KVS_RETURN_IF_ERROR(map(header.next_leaf_offset, &new_offset));
    if (new_offset == 0) {
      // 0 would silently end the leaf chain here.
      return Status::InvalidArgument("pointer map turned a next leaf into 0");
    }
    coding::EncodeFixed64(bytes + format::next_leaf_offset, new_offset);
  }
  SealNode(bytes, size);
  const Status status = ValidateNode(rewritten);
  if (!status.ok()) {
    return Status::InvalidArgument(
        "pointer map produced a pointer the node format does not allow: " +
        std::string(status.message()));
  }
  std::memcpy(node, bytes, size);
  return Status::Ok();
}

}  // namespace kvs::btree
