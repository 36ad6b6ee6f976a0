// libFuzzer target for the tuple codec (kv/tuple.h), which every stored key goes through.
// Invariants: no crash, no sanitizer report; whatever unpacks packs back to the same bytes
// (the encoding is canonical), and two unpacked tuples order as their packed bytes do. Bytes
// may unpack to an incomplete versionstamp (0xFF x 10): such a tuple packs only through
// PackWithVersionstamp (Pack requires none), and only when it holds exactly one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "kv/tuple.h"

using fdyno::kv::Tuple;
using fdyno::kv::Versionstamp;

namespace {

int CountIncomplete(const Tuple& t) {
  int n = 0;
  for (const auto& e : t.elements()) {
    if (const auto* v = std::get_if<Versionstamp>(&e.value())) n += v->complete() ? 0 : 1;
    if (const auto* nested = std::get_if<Tuple>(&e.value())) n += CountIncomplete(*nested);
  }
  return n;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

// Packs back to `packed`, by the one packing the tuple allows.
void CheckRoundTrip(const Tuple& t, std::string_view packed) {
  const int incomplete = CountIncomplete(t);
  auto stamped = t.PackWithVersionstamp();
  Check(stamped.ok() == (incomplete == 1));
  if (incomplete == 0) Check(t.Pack() == packed);
  if (incomplete == 1) Check(std::string_view(*stamped).substr(0, stamped->size() - 4) == packed);
  (void)t.ToString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t half = size / 2;
  fdyno::Result<Tuple> a = Tuple::Unpack(in.substr(0, half));
  fdyno::Result<Tuple> b = Tuple::Unpack(in.substr(half));
  if (a.ok()) CheckRoundTrip(*a, in.substr(0, half));
  if (b.ok()) CheckRoundTrip(*b, in.substr(half));
  if (a.ok() && b.ok()) {
    const auto by_bytes = in.substr(0, half) <=> in.substr(half);
    const auto by_tuple = *a <=> *b;
    Check((by_bytes < 0) == (by_tuple < 0) && (by_bytes == 0) == (by_tuple == 0));
  }
  return 0;
}
