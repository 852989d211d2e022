#include "service/conditional_write.h"

#include <optional>
#include <string>

#include "io/device_reads.h"
#include "util/coding.h"

namespace kvs::service {

Status DecideConditional(const wire::Request& request, lsm::Region* region,
                         bool refuse_device, ConditionalOutcome* outcome,
                         replication::Record* record, bool* wrote,
                         bool* needs_device) {
  *wrote = false;
  std::string current;
  Status got;
  {
    std::optional<io::DeviceReadsRefused> refusing;
    if (refuse_device) refusing.emplace();
    got = region->Get(request.key, &current);
    if (refusing && refusing->refused()) {
      *needs_device = true;
      return Status::Busy("the decision's read needs the device");
    }
  }
  if (!got.ok() && !got.IsNotFound()) return got;
  const bool present = got.ok();
  if (request.opcode == wire::Opcode::kIncrement) {
    int64_t base = 0;
    if (present) {
      if (current.size() != 8) {
        return Status::InvalidArgument(
            "the key holds a value of " + std::to_string(current.size()) +
            " bytes, not an 8-byte counter; nothing was written");
      }
      base = static_cast<int64_t>(coding::DecodeFixed64(current.data()));
    }
    int64_t next = 0;
    if (__builtin_add_overflow(base, request.delta, &next)) {
      return Status::InvalidArgument("the counter " + std::to_string(base) +
                                     " plus " + std::to_string(request.delta) +
                                     " overflows 64 bits; nothing was written");
    }
    outcome->applied = true;
    outcome->counter = next;
    outcome->written = coding::Fixed64String(static_cast<uint64_t>(next));
    *record = {replication::RecordType::kPut, request.key, outcome->written};
    *wrote = true;
    return region->Put(request.key, outcome->written);
  }
  const bool matches =
      request.expected ? present && current == *request.expected : !present;
  if (!matches) {
    if (present) outcome->current = std::move(current);
    return Status::Ok();
  }
  outcome->applied = true;
  if (request.replacement) {
    *record = {replication::RecordType::kPut, request.key,
               *request.replacement};
    *wrote = true;
    return region->Put(request.key, *request.replacement);
  }
  if (!present) return Status::Ok();  // no value, none wanted: nothing to do
  *record = {replication::RecordType::kDelete, request.key, {}};
  *wrote = true;
  return region->Delete(request.key);
}

}  // namespace kvs::service
