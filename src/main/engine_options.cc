#include "main/engine_options.h"

#include <utility>

#include "store/layout.h"

namespace fdyno::main {

kv::EmbeddedOptions ServerEngineOptions(std::string path, kv::Durability durability, Clock* clock) {
  kv::EmbeddedOptions options;
  options.path = std::move(path);
  options.durability = durability;
  options.clock = clock;
  // Every operation reads the catalog's metadata version; the engine serves it from memory.
  options.memory_keys = {store::layout::MetadataVersionKey()};
  return options;
}

}  // namespace fdyno::main
