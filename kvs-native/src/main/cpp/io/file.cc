#include "io/file.h"

namespace kvs::io {

Status File::ReadMany(std::span<ReadOp> ops) {
  Status first;
  for (ReadOp& op : ops) {
    op.status = Read(op.offset, op.size, op.out);
    if (first.ok() && !op.status.ok()) {
      first = op.status;
    }
  }
  return first;
}

}  // namespace kvs::io
