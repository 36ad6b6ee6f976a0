// libFuzzer target for the tuple codec (kv/tuple.h), which every stored key goes through.
// Invariants: no crash, no sanitizer report; whatever unpacks packs back to the same bytes
// (the encoding is canonical), and two unpacked tuples order as their packed bytes do.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kv/tuple.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t half = size / 2;
  fdyno::Result<fdyno::kv::Tuple> a = fdyno::kv::Tuple::Unpack(in.substr(0, half));
  fdyno::Result<fdyno::kv::Tuple> b = fdyno::kv::Tuple::Unpack(in.substr(half));
  if (a.ok()) {
    if (a->Pack() != in.substr(0, half)) std::abort();
    (void)a->ToString();
  }
  if (a.ok() && b.ok()) {
    const std::string pa = a->Pack(), pb = b->Pack();
    const auto by_bytes = pa <=> pb;
    const auto by_tuple = *a <=> *b;
    if ((by_bytes < 0) != (by_tuple < 0) || (by_bytes == 0) != (by_tuple == 0)) std::abort();
  }
  return 0;
}
