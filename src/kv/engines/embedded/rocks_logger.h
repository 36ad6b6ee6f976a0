// RocksDB's own log (its "info log": flushes, compactions, background errors), written through
// fdyno's log instead of RocksDB's LOG file in the data directory.
//
// RocksDB 7.8.3 writes its LOG file through a WritableFileWriter and ignores a failed append.
// On a full disk the writer's periodic flush fails, the writer remembers it, and the next
// message, typically the background error the full disk causes, aborts the process on
// AssertFalseAndGetStatusForPrevError (Debian's library keeps RocksDB's assertions). A full
// disk must give clean errors, not a crash; fdyno's log loses at most the lines written while
// the disk is full. RocksDB's warnings and errors are logged as warnings and errors; the rest
// (a line per flush and compaction, statistics dumps) at debug, and RocksDB does not format
// them at all unless debug logging is on when the database opens.
//
// Thread-safety: thread-safe (spdlog's loggers are).
#pragma once

#include <rocksdb/env.h>

#include <memory>

namespace fdyno::kv::embedded {

std::shared_ptr<rocksdb::Logger> NewRocksLogger();

}  // namespace fdyno::kv::embedded
