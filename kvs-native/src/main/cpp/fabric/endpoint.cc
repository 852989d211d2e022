#include "fabric/endpoint.h"

#include <dirent.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace kvs::fabric {

// A write in flight. FI_CONTEXT2 mode: the provider may use the leading
// fi_context2 until the write completes.
struct Endpoint::WriteContext {
  struct fi_context2 context;
  Completion done;
  WriteContext* previous = nullptr;
  WriteContext* next = nullptr;
};

bool ParseProvider(std::string_view name, Provider* provider) {
  if (name == "shm") {
    *provider = Provider::kShm;
  } else if (name == "tcp") {
    *provider = Provider::kTcp;
  } else if (name == "verbs") {
    *provider = Provider::kVerbs;
  } else if (name == "stream") {
    *provider = Provider::kStream;
  } else {
    return false;
  }
  return true;
}

const char* ProviderName(Provider provider) {
  switch (provider) {
    case Provider::kShm:
      return "shm";
    case Provider::kTcp:
      return "tcp";
    case Provider::kVerbs:
      return "verbs";
    case Provider::kStream:
      return "stream";
  }
  return "unknown";
}

namespace {

// The most places one write scatters to, whatever the provider allows.
constexpr size_t kRemoteTargetsLimit = 4;

// libfabric's provider string: the core provider plus the utility provider
// that gives it reliable-datagram endpoints.
const char* LibfabricProviderName(Provider provider) {
  switch (provider) {
    case Provider::kShm:
      return "shm";
    case Provider::kTcp:
      return "tcp;ofi_rxm";
    case Provider::kVerbs:
      return "verbs;ofi_rxm";
    case Provider::kStream:
      break;  // not libfabric's
  }
  return "";
}

}  // namespace

MemoryRegion::~MemoryRegion() {
  if (mr_ != nullptr) {
    fi_close(&mr_->fid);
  }
}

Endpoint::Endpoint(const EndpointOptions& options) : options_(options) {}

Endpoint::~Endpoint() {
  // Writes still in flight will never be reported: free their contexts
  // (and what their callbacks hold) once the endpoint, and so the
  // provider's use of them, is gone.
  if (ep_ != nullptr) fi_close(&ep_->fid);
  while (in_flight_ != nullptr) {
    WriteContext* context = in_flight_;
    in_flight_ = context->next;
    delete context;
  }
  if (av_ != nullptr) fi_close(&av_->fid);
  if (cq_ != nullptr) fi_close(&cq_->fid);
  if (domain_ != nullptr) fi_close(&domain_->fid);
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
  if (info_ != nullptr) api_->freeinfo(info_);
}

Status Endpoint::Open(const EndpointOptions& options,
                      std::unique_ptr<Endpoint>* endpoint) {
  if (options.provider == Provider::kStream) {
    return Status::InvalidArgument(
        "stream is the channel's own TCP transport, not a libfabric provider");
  }
  std::unique_ptr<Endpoint> opened(new Endpoint(options));
  KVS_RETURN_IF_ERROR(opened->Init());
  *endpoint = std::move(opened);
  return Status::Ok();
}

size_t RemoveStaleShmEndpoints(const std::string& directory) {
  // The shm provider names an endpoint's region "<pid>:<n>:<n>". Its own
  // cleanup on a crash is a signal handler, which we remove (libfabric.h),
  // so the regions of processes that died stay behind: 16 MiB names each.
  size_t removed = 0;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return 0;
  while (const struct dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    const size_t colon = name.find(':');
    if (colon == 0 || colon == std::string::npos ||
        name.find_first_not_of("0123456789") != colon ||
        name.find_first_not_of("0123456789:", colon) != std::string::npos ||
        std::count(name.begin(), name.end(), ':') != 2) {
      continue;
    }
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
        ::unlink((directory + "/" + name).c_str()) == 0) {
      ++removed;
    }
  }
  ::closedir(dir);
  return removed;
}

Status Endpoint::Init() {
  KVS_RETURN_IF_ERROR(LibFabric::Get(&api_));
  if (options_.provider == Provider::kShm) {
    if (options_.shm_disable_cma) {
      ::setenv("FI_SHM_DISABLE_CMA", "1", /*overwrite=*/0);
    }
    RemoveStaleShmEndpoints("/dev/shm");
  }
  struct fi_info* hints = api_->dupinfo(nullptr);
  if (hints == nullptr) {
    return Status::Internal("fi_allocinfo failed");
  }
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->fabric_attr->prov_name =
      ::strdup(LibfabricProviderName(options_.provider));
  const char* node = options_.node.empty() ? nullptr : options_.node.c_str();
  const int found =
      api_->getinfo(kApiVersion, node, nullptr, node != nullptr ? FI_SOURCE : 0,
                    hints, &info_);
  api_->freeinfo(hints);
  if (found != 0 || info_ == nullptr) {
    info_ = nullptr;
    return Status::NotFound(
        std::string("libfabric has no usable provider '") +
        LibfabricProviderName(options_.provider) + "'" +
        (node != nullptr ? " on " + options_.node : std::string()) + ": " +
        api_->Describe("fi_getinfo", found));
  }
  provider_name_ = info_->fabric_attr->prov_name != nullptr
                       ? info_->fabric_attr->prov_name
                       : LibfabricProviderName(options_.provider);
  virtual_addresses_ = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
  remote_targets_max_ =
      std::clamp<size_t>(info_->tx_attr->rma_iov_limit, 1, kRemoteTargetsLimit);

  auto check = [this](const char* call, int result) {
    return result == 0 ? Status::Ok()
                       : Status::IoError(provider_name_ + ": " +
                                         api_->Describe(call, result));
  };
  // The shm provider installs signal handlers as its endpoint opens.
  const KeptSignalHandlers signals;
  KVS_RETURN_IF_ERROR(
      check("fi_fabric", api_->fabric(info_->fabric_attr, &fabric_, nullptr)));
  KVS_RETURN_IF_ERROR(
      check("fi_domain", fi_domain(fabric_, info_, &domain_, nullptr)));
  struct fi_cq_attr cq_attr {};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_NONE;
  cq_attr.size = options_.completion_queue_entries;
  if (options_.wait_fd && options_.provider == Provider::kTcp) {
    // A provider without wait objects refuses: then no wait fd.
    cq_attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(domain_, &cq_attr, &cq_, nullptr) == 0) {
      int fd = -1;
      if (fi_control(&cq_->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
        wait_fd_ = fd;
      } else {
        fi_close(&cq_->fid);
        cq_ = nullptr;
      }
    } else {
      cq_ = nullptr;
    }
    cq_attr.wait_obj = FI_WAIT_NONE;
  }
  if (cq_ == nullptr) {
    KVS_RETURN_IF_ERROR(
        check("fi_cq_open", fi_cq_open(domain_, &cq_attr, &cq_, nullptr)));
  }
  struct fi_av_attr av_attr {};
  av_attr.type = FI_AV_TABLE;
  KVS_RETURN_IF_ERROR(
      check("fi_av_open", fi_av_open(domain_, &av_attr, &av_, nullptr)));
  KVS_RETURN_IF_ERROR(
      check("fi_endpoint", fi_endpoint(domain_, info_, &ep_, nullptr)));
  KVS_RETURN_IF_ERROR(check("fi_ep_bind(cq)",
                            fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)));
  KVS_RETURN_IF_ERROR(check("fi_ep_bind(av)", fi_ep_bind(ep_, &av_->fid, 0)));
  KVS_RETURN_IF_ERROR(check("fi_enable", fi_enable(ep_)));

  size_t size = 0;
  int named = fi_getname(&ep_->fid, nullptr, &size);
  if (named != -FI_ETOOSMALL && named != 0) {
    return check("fi_getname", named);
  }
  address_.resize(size);
  KVS_RETURN_IF_ERROR(
      check("fi_getname", fi_getname(&ep_->fid, address_.data(), &size)));
  address_.resize(size);
  return Status::Ok();
}

Status Endpoint::AddPeer(std::string_view address, fi_addr_t* peer) {
  const int inserted = fi_av_insert(av_, address.data(), 1, peer, 0, nullptr);
  if (inserted != 1) {
    return Status::InvalidArgument(
        provider_name_ + ": peer address of " + std::to_string(address.size()) +
        " bytes is not usable: " +
        (inserted < 0 ? api_->Describe("fi_av_insert", inserted)
                      : std::string("fi_av_insert inserted nothing")));
  }
  return Status::Ok();
}

void Endpoint::RemovePeer(fi_addr_t peer) { fi_av_remove(av_, &peer, 1, 0); }

Status Endpoint::Register(char* data, size_t size,
                          std::unique_ptr<MemoryRegion>* region) {
  std::unique_ptr<MemoryRegion> registered(new MemoryRegion());
  // Without FI_MR_PROV_KEY (shm) the application picks the keys, and they
  // must be unique within the domain.
  const uint64_t requested_key =
      (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0
          ? 0
          : next_key_.fetch_add(1, std::memory_order_relaxed);
  const int result =
      fi_mr_reg(domain_, data, size,
                FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                requested_key, 0, &registered->mr_, nullptr);
  if (result != 0) {
    return Status::IoError(provider_name_ + ": registering " +
                           std::to_string(size) +
                           " bytes: " + api_->Describe("fi_mr_reg", result));
  }
  if ((info_->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0) {
    int bound = fi_mr_bind(registered->mr_, &ep_->fid, 0);
    if (bound == 0) bound = fi_mr_enable(registered->mr_);
    if (bound != 0) {
      return Status::IoError(provider_name_ + ": " +
                             api_->Describe("fi_mr_bind", bound));
    }
  }
  registered->data_ = data;
  registered->size_ = size;
  registered->descriptor_ = fi_mr_desc(registered->mr_);
  registered->key_ = fi_mr_key(registered->mr_);
  registered->remote_base_ =
      virtual_addresses_ ? reinterpret_cast<uint64_t>(data) : 0;
  *region = std::move(registered);
  return Status::Ok();
}

Status Endpoint::PostWrite(fi_addr_t peer, const char* source, size_t size,
                           const MemoryRegion& local, uint64_t remote_address,
                           uint64_t remote_key, Completion done,
                           Semantics semantics) {
  const RemoteTarget target{remote_address, size, remote_key};
  return PostWrite(peer, source, local,
                   std::span<const RemoteTarget>(&target, 1), std::move(done),
                   semantics);
}

Status Endpoint::PostWrite(fi_addr_t peer, const char* source,
                           const MemoryRegion& local,
                           std::span<const RemoteTarget> targets,
                           Completion done, Semantics semantics, Room room) {
  if (targets.empty() || targets.size() > remote_targets_max_) {
    return Status::InvalidArgument("a write to " +
                                   std::to_string(targets.size()) +
                                   " places (this provider takes 1 to " +
                                   std::to_string(remote_targets_max_) + ")");
  }
  size_t size = 0;
  fi_rma_iov rma[kRemoteTargetsLimit];
  for (size_t i = 0; i < targets.size(); ++i) {
    rma[i] = {targets[i].address, targets[i].size, targets[i].key};
    size += targets[i].size;
  }
  auto* context = new WriteContext{{}, std::move(done)};
  Track(context);
  const auto deadline =
      std::chrono::steady_clock::now() + options_.post_timeout;
  uint64_t retries = 0;
  for (;;) {
    if (aborted_.load(std::memory_order_acquire)) {
      Finish(context);
      return Status::Closed(provider_name_ + ": the endpoint was aborted");
    }
    // Counted before it is posted: its completion may come first.
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    ssize_t posted = 0;
    if (semantics == Semantics::kDelivered || targets.size() > 1) {
      struct iovec vector {
        const_cast<char*>(source), size
      };
      void* descriptor = local.descriptor();
      struct fi_msg_rma message {};
      message.msg_iov = &vector;
      message.desc = &descriptor;
      message.iov_count = 1;
      message.addr = peer;
      message.rma_iov = rma;
      message.rma_iov_count = targets.size();
      message.context = &context->context;
      posted = fi_writemsg(
          ep_, &message,
          FI_COMPLETION |
              (semantics == Semantics::kDelivered ? FI_DELIVERY_COMPLETE : 0));
    } else {
      posted = fi_write(ep_, source, size, local.descriptor(), peer,
                        rma[0].addr, rma[0].key, &context->context);
    }
    if (posted == 0) return Status::Ok();
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    if (posted != -FI_EAGAIN) {
      Finish(context);
      return Status::IoError(
          provider_name_ + ": " +
          api_->Describe("fi_write", static_cast<int>(posted)));
    }
    // The transmit queue is full: completing writes frees room.
    if (room == Room::kNow) {
      Finish(context);
      return Status::Busy(provider_name_ + ": the transmit queue is full");
    }
    Progress();
    if (peer_gone_ && ++retries % 64 == 0 && peer_gone_()) {
      Finish(context);
      return Status::Closed(provider_name_ +
                            ": the peer went away while the transmit queue "
                            "was full");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      Finish(context);
      return Status::Busy(provider_name_ + ": transmit queue stayed full for " +
                          std::to_string(options_.post_timeout.count()) +
                          " ms");
    }
  }
}

void Endpoint::Track(WriteContext* context) {
  std::lock_guard<std::mutex> lock(in_flight_mutex_);
  context->next = in_flight_;
  if (in_flight_ != nullptr) in_flight_->previous = context;
  in_flight_ = context;
}

void Endpoint::Finish(WriteContext* context) {
  {
    std::lock_guard<std::mutex> lock(in_flight_mutex_);
    if (context->previous != nullptr) {
      context->previous->next = context->next;
    } else {
      in_flight_ = context->next;
    }
    if (context->next != nullptr) context->next->previous = context->previous;
  }
  delete context;
}

bool Endpoint::TryWait() {
  if (wait_fd_ < 0) return false;
  struct fid* fids[] = {&cq_->fid};
  return fi_trywait(fabric_, fids, 1) == 0;
}

size_t Endpoint::Progress() {
  struct fi_cq_entry entries[16];
  size_t completed = 0;
  for (;;) {
    const ssize_t read = fi_cq_read(cq_, entries, 16);
    if (read > 0) {
      for (ssize_t i = 0; i < read; ++i) {
        auto* context = static_cast<WriteContext*>(entries[i].op_context);
        outstanding_.fetch_sub(1, std::memory_order_relaxed);
        if (context->done) context->done(Status::Ok());
        Finish(context);
      }
      completed += static_cast<size_t>(read);
      if (read < 16) return completed;
      continue;
    }
    if (read == -FI_EAVAIL) {
      struct fi_cq_err_entry error {};
      if (fi_cq_readerr(cq_, &error, 0) == 1) {
        auto* context = static_cast<WriteContext*>(error.op_context);
        const Status status =
            Status::IoError(provider_name_ + ": write failed: " +
                            api_->Describe("completion", -error.err));
        if (context != nullptr) {
          outstanding_.fetch_sub(1, std::memory_order_relaxed);
          if (context->done) context->done(status);
          Finish(context);
          ++completed;
        }
      }
      continue;
    }
    return completed;  // -FI_EAGAIN: nothing more now
  }
}

}  // namespace kvs::fabric
