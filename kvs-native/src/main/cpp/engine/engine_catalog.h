// The engine's own catalog entries (the table in engine.h), shared by the
// files that implement Engine.

#ifndef KVS_ENGINE_ENGINE_CATALOG_H_
#define KVS_ENGINE_ENGINE_CATALOG_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace kvs::engine {

inline constexpr char kNextRegionKey[] = "engine/next_region";
inline constexpr char kNamesPrefix[] = "names/";
inline constexpr size_t kRegionNameBytesMax = 255;

inline std::string NameKey(std::string_view name) {
  return std::string(kNamesPrefix) + std::string(name);
}

}  // namespace kvs::engine

#endif  // KVS_ENGINE_ENGINE_CATALOG_H_
