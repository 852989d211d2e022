#include "service/region_service.h"

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "lsm/region_iterator.h"

namespace kvs::service {
namespace {

// Leaves room under the message bound for headers and per-entry framing.
constexpr size_t kReplyBudgetBytes = wire::kMessageBytesMax - (64u << 10);

void Fail(const wire::Request& request, const Status& status,
          std::string* reply) {
  wire::Reply error;
  error.opcode = request.opcode;
  error.request_id = request.request_id;
  error.status = status.code();
  error.message = status.message().substr(0, wire::kMessageTextBytesMax);
  wire::EncodeReply(error, reply);
}

}  // namespace

void RegionService::Attach(uint64_t region_id, uint64_t epoch,
                           lsm::Region* region, Placement placement) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  regions_[region_id] = {epoch, region, std::move(placement)};
}

Status RegionService::CheckPlacement(const wire::Request& request,
                                     const Attached& attached) {
  const Placement& placement = attached.placement;
  if (!placement.primary) {
    return Status::FromCode(Status::Code::kNotPrimary,
                            "region " + std::to_string(request.region_id) +
                                " is held here as a backup");
  }
  const auto outside = [&](std::string_view key) {
    return Status::FromCode(Status::Code::kWrongRegion,
                            "key outside region " +
                                std::to_string(request.region_id) + " (" +
                                std::to_string(key.size()) + " bytes)");
  };
  switch (request.opcode) {
    case wire::Opcode::kPut:
    case wire::Opcode::kDelete:
    case wire::Opcode::kGet:
      if (!placement.Contains(request.key)) return outside(request.key);
      break;
    case wire::Opcode::kMultiGet:
      for (const std::string_view key : request.keys) {
        if (!placement.Contains(key)) return outside(key);
      }
      break;
    case wire::Opcode::kScan:
      // A scan starts inside the range (an empty start: at its beginning);
      // its end is clipped to the range's.
      if (!request.key.empty() && !placement.Contains(request.key)) {
        return outside(request.key);
      }
      break;
    case wire::Opcode::kNoop:
      break;
  }
  return Status::Ok();
}

void RegionService::Detach(uint64_t region_id) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  regions_.erase(region_id);
}

void RegionService::Handle(std::string_view bytes, std::string* reply) {
  wire::Request request;
  const Status decoded = wire::DecodeRequest(bytes, &request);
  if (!decoded.ok()) {
    // Answer what can be answered: the request id if the header is there.
    wire::Request header;
    header.opcode = wire::Opcode::kNoop;
    if (bytes.size() >= wire::kRequestHeaderBytes) {
      std::memcpy(&header.request_id, bytes.data() + 8, 8);
    }
    Fail(header, decoded, reply);
    return;
  }
  Execute(request, reply);
}

void RegionService::Execute(const wire::Request& request, std::string* reply) {
  if (request.opcode == wire::Opcode::kNoop) {
    wire::Reply ok;
    ok.opcode = request.opcode;
    ok.request_id = request.request_id;
    wire::EncodeReply(ok, reply);
    return;
  }
  lsm::Region* region = nullptr;
  Placement placement;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(request.region_id);
    if (it == regions_.end()) {
      Fail(request,
           Status::FromCode(Status::Code::kWrongRegion,
                            "region " + std::to_string(request.region_id) +
                                " is not served here"),
           reply);
      return;
    }
    if (it->second.epoch != request.epoch) {
      Fail(request,
           Status::FromCode(Status::Code::kStaleEpoch,
                            "region " + std::to_string(request.region_id) +
                                " is at epoch " +
                                std::to_string(it->second.epoch) + ", not " +
                                std::to_string(request.epoch)),
           reply);
      return;
    }
    const Status placed = CheckPlacement(request, it->second);
    if (!placed.ok()) {
      Fail(request, placed, reply);
      return;
    }
    region = it->second.region;
    placement = it->second.placement;
  }
  wire::Reply result;
  result.opcode = request.opcode;
  result.request_id = request.request_id;
  Status status;
  std::string value;
  std::vector<lsm::RegionIterator::Pair> pairs;
  std::vector<std::string> values;
  std::vector<bool> found;
  switch (request.opcode) {
    case wire::Opcode::kNoop:
      break;
    case wire::Opcode::kPut:
      status = region->Put(request.key, request.value);
      break;
    case wire::Opcode::kDelete:
      status = region->Delete(request.key);
      break;
    case wire::Opcode::kGet:
      status = region->Get(request.key, &value);
      result.value = value;
      break;
    case wire::Opcode::kScan: {
      std::optional<std::string> end;
      if (request.end) end.emplace(*request.end);
      if (placement.end && (!end || *placement.end < *end)) {
        end = placement.end;
      }
      auto iterator = region->NewIterator(std::move(end));
      if (request.key.empty() && placement.start.empty()) {
        iterator->SeekToFirst();
      } else {
        iterator->Seek(request.key.empty() ? std::string_view(placement.start)
                                           : request.key);
      }
      status = iterator->status();
      if (status.ok()) {
        status = iterator->ReadPairs(request.limit, request.max_bytes, &pairs);
      }
      for (const auto& pair : pairs)
        result.pairs.emplace_back(pair.key, pair.value);
      result.more = status.ok() && iterator->Valid();
      break;
    }
    case wire::Opcode::kMultiGet: {
      // Answer keys in order until the reply would grow past its bound;
      // the client asks again for the rest.
      size_t bytes = 0;
      values.reserve(request.keys.size());
      for (const std::string_view key : request.keys) {
        std::string one;
        const Status got = region->Get(key, &one);
        if (!got.ok() && !got.IsNotFound()) {
          status = got;
          break;
        }
        if (bytes + one.size() + 8 > kReplyBudgetBytes && !values.empty())
          break;
        bytes += one.size() + 8;
        found.push_back(got.ok());
        values.push_back(std::move(one));
      }
      for (size_t i = 0; i < values.size(); ++i) {
        result.values.push_back(found[i]
                                    ? std::optional<std::string_view>(values[i])
                                    : std::nullopt);
      }
      break;
    }
  }
  if (!status.ok()) {
    Fail(request, status, reply);
    return;
  }
  wire::EncodeReply(result, reply);
}

}  // namespace kvs::service
