// A MANIFEST whose unsynced tail a power cut damaged, and cutting that tail off.
//
// RocksDB 7.8 reads its MANIFEST with its log reader in kTolerateCorruptedTailRecords mode: a
// record cut short at the end of the file is ignored, but a tail that holds zeros after a
// record's first fragment, or bytes that fail their checksum (a file system that kept the file's
// new length but not its data), makes DB::Open fail with Corruption. Nothing acknowledged depends
// on that tail: RocksDB syncs each MANIFEST edit before it acts on it (before a flush's or a
// compaction's write-ahead logs or input files are deleted), so a damaged edit is one whose job
// never finished and whose data is still where it was. The engine therefore cuts a damaged tail
// off and opens again (docs/format/kv_embedded.md, "Recovery after a power cut"), but only a
// tail: damage followed by a valid record is real corruption and the open still fails.
//
// RocksDB's log format (LevelDB's, stable since): 32 KiB blocks; each fragment of a record is a
// 7-byte header (the masked CRC-32C of its type byte and payload, little-endian; a u16
// little-endian payload length; a u8 type: 1 full, 2 first, 3 middle, 4 last) and its payload;
// fewer than 7 bytes left in a block are zero padding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::kv::embedded {

struct ManifestScan {
  uint64_t size = 0;       // bytes scanned
  uint64_t whole_end = 0;  // the end of the last whole record (and its block's padding)
  // A valid fragment starts a block after the first damaged byte: the damage is not a tail.
  bool records_after_damage = false;
};

// Scans the bytes of a MANIFEST.
ManifestScan ScanManifest(std::string_view bytes);

// Reads CURRENT in `rocks_dir` and scans the MANIFEST it names. When bytes follow its last whole
// record and no valid record follows them, moves them to `<keep_dir>/damaged-manifest-tails/`
// (for a post-mortem), cuts the MANIFEST at the end of its last whole record, syncs it, and
// returns true. Returns false when there is nothing to cut, and an error when the damage is not
// a tail or a file cannot be read or written.
Result<bool> CutDamagedManifestTail(const std::string& rocks_dir, const std::string& keep_dir);

}  // namespace fdyno::kv::embedded
