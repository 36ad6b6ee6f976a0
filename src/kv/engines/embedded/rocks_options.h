// RocksDB options of the embedded engine's data column family, shared with the benchmark so
// that its raw-RocksDB baseline runs with the same table and cache settings.
#pragma once

#include <rocksdb/options.h>

namespace fdyno::kv::embedded {

// Options for the data column family (bloom filters, block cache, the atomic-op merge
// operator) and for the DB as a whole.
rocksdb::Options DataOptions(size_t block_cache_bytes = 128 << 20);

}  // namespace fdyno::kv::embedded
