// The store's JSON records (store/record_codec.h: catalog table records, backups, restore
// jobs, exports, imports, resource policies): arbitrary bytes never crash a decoder, and what decodes encodes to bytes
// that decode to the same record (the one field list serves both directions).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "store/backups.h"
#include "store/catalog.h"
#include "store/exports.h"
#include "store/policies.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

template <typename Decode, typename Encode>
void RoundTrip(std::string_view bytes, Decode decode, Encode encode) {
  auto record = decode(bytes);
  if (!record.ok()) return;
  auto again = decode(encode(*record));
  Check(again.ok() && *again == *record);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdyno::store;  // NOLINT: fuzzer brevity
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  RoundTrip(bytes, DecodeTableInfo, EncodeTableInfo);
  RoundTrip(bytes, DecodeBackupInfo, EncodeBackupInfo);
  RoundTrip(bytes, DecodeRestoreJob, EncodeRestoreJob);
  RoundTrip(bytes, DecodeExportJob, EncodeExportJob);
  RoundTrip(bytes, DecodeImportJob, EncodeImportJob);
  RoundTrip(bytes, DecodePolicy, EncodePolicy);
  return 0;
}
