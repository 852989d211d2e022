// The engine handle of the C ABI, shared by its engine and fabric parts.

#ifndef KVS_CAPI_ENGINE_HANDLE_H_
#define KVS_CAPI_ENGINE_HANDLE_H_

#include <memory>

#include "engine/engine.h"

// An engine handle owns the engine. A region handle is the address of the
// lsm::Region, which the engine keeps alive until the region is dropped or
// the engine closed, so it needs no allocation or closing of its own.
struct kvs_engine {
  std::unique_ptr<kvs::engine::Engine> engine;
};

#endif  // KVS_CAPI_ENGINE_HANDLE_H_
