#include "service/conditional_write.h"

#include <optional>
#include <string>

#include "io/device_reads.h"
#include "util/coding.h"

namespace kvs::service {

namespace {

Status Decide(const wire::Request& request, lsm::Region* region,
              bool refuse_device, ConditionalOutcome* outcome,
              replication::Record* record, bool* wrote, bool* needs_device) {
  *wrote = false;
  const log::WriteId id{request.client_id, request.sequence};
  if (id.present()) {
    const lsm::WriteIds& ids = region->write_ids();
    if (const std::optional<lsm::WriteIds::Applied> applied = ids.Find(id)) {
      outcome->applied = true;
      outcome->repeated = true;
      if (request.opcode == wire::Opcode::kIncrement) {
        if (applied->small_value.size() != 8) {
          return Status::InvalidArgument(
              "write id " + std::to_string(id.client) + "/" +
              std::to_string(id.sequence) +
              " names a write that was no increment; nothing was written");
        }
        outcome->counter = static_cast<int64_t>(
            coding::DecodeFixed64(applied->small_value.data()));
      }
      return Status::Ok();
    }
    const uint64_t horizon = ids.horizon();
    if (request.retry && request.floor < horizon) {
      // The prefix tells clients the refusal is final (docs/PROTOCOL.md).
      return Status::IoError(
          "retry undecidable: this region knows the conditional writes "
          "applied past LSN " +
          std::to_string(horizon) + " only, and the retried write (client " +
          std::to_string(id.client) + ", sequence " +
          std::to_string(id.sequence) + ") may have been applied before (its " +
          "client's floor is LSN " + std::to_string(request.floor) +
          "): nothing was written; its outcome is unknown");
    }
  }
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
    *record = {replication::RecordType::kPut, request.key, outcome->written,
               id};
    *wrote = true;
    return region->Put(request.key, outcome->written, id);
  }
  const bool matches =
      request.expected ? present && current == *request.expected : !present;
  if (!matches) {
    if (present) outcome->current = std::move(current);
    return Status::Ok();
  }
  outcome->applied = true;
  if (request.replacement) {
    *record = {replication::RecordType::kPut, request.key, *request.replacement,
               id};
    *wrote = true;
    return region->Put(request.key, *request.replacement, id);
  }
  if (!present) {
    // No value, none wanted: nothing to do (and no id to keep: a retry
    // finds the key absent again, and is applied as this was).
    return Status::Ok();
  }
  *record = {replication::RecordType::kDelete, request.key, {}, id};
  *wrote = true;
  return region->Delete(request.key, id);
}

}  // namespace

Status DecideConditional(const wire::Request& request, lsm::Region* region,
                         bool refuse_device, ConditionalOutcome* outcome,
                         replication::Record* record, bool* wrote,
                         bool* needs_device) {
  const Status decided = Decide(request, region, refuse_device, outcome, record,
                                wrote, needs_device);
  outcome->lsn = region->last_lsn();  // after what it wrote, if anything
  return decided;
}

}  // namespace kvs::service
