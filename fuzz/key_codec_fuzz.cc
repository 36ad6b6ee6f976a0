// Key codec fuzzer. Two checks per input:
//  1. Decoding arbitrary bytes never crashes; whatever decodes re-encodes to exactly the bytes
//     it consumed (one encoding per value).
//  2. Two key values built from the input encode to bytes whose order is DynamoDB's order
//     for the values, and decode back to them; composite keys sort by hash then range.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/key_codec.h"

using namespace fdyno::model;  // NOLINT: fuzzer brevity

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

int Sign(int c) { return c < 0 ? -1 : c > 0; }

AttributeValue MakeValue(FuzzedDataProvider& p, int type) {
  switch (type) {
    case 0:
      return AttributeValue::S(p.ConsumeRandomLengthString(16));
    case 1:
      return AttributeValue::B(p.ConsumeRandomLengthString(16));
    default: {
      const bool negative = p.ConsumeBool();
      std::string digits;
      const int n = p.ConsumeIntegralInRange<int>(0, 38);
      for (int i = 0; i < n; ++i)
        digits.push_back(static_cast<char>('0' + p.ConsumeIntegralInRange<int>(0, 9)));
      while (!digits.empty() && digits.back() == '0') digits.pop_back();
      while (!digits.empty() && digits.front() == '0') digits.erase(digits.begin());
      const int e = p.ConsumeIntegralInRange<int>(-129, 126);
      return AttributeValue::N(Number::FromParts(negative, digits, e));
    }
  }
}

int DynamoCompare(const AttributeValue& a, const AttributeValue& b) {
  switch (a.type()) {
    case Type::kS:
      return Sign(std::get<std::string>(a.v).compare(std::get<std::string>(b.v)));
    case Type::kB:
      return Sign(std::get<Binary>(a.v).bytes.compare(std::get<Binary>(b.v).bytes));
    default:
      return std::get<Number>(a.v).Compare(std::get<Number>(b.v));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    const std::string_view start = in;
    auto v = DecodeKeyValue(&in);
    if (v.ok()) {
      const std::string consumed(start.substr(0, start.size() - in.size()));
      Check(EncodeKeyValue(*v) == consumed);
    }
    (void)DecodeKey(start, true);
    (void)DecodeKey(start, false);
  }
  FuzzedDataProvider p(data, size);
  const int hash_type = p.ConsumeIntegralInRange<int>(0, 2);
  const int range_type = p.ConsumeIntegralInRange<int>(0, 2);
  AttributeValue h1 = MakeValue(p, hash_type), r1 = MakeValue(p, range_type);
  AttributeValue h2 = p.ConsumeBool() ? h1 : MakeValue(p, hash_type);
  AttributeValue r2 = MakeValue(p, range_type);
  const std::string e1 = EncodeKeyValue(h1), e2 = EncodeKeyValue(h2);
  Check(Sign(e1.compare(e2)) == DynamoCompare(h1, h2));
  const std::string k1 = EncodeKey(h1, &r1), k2 = EncodeKey(h2, &r2);
  int expected = DynamoCompare(h1, h2);
  if (expected == 0) expected = DynamoCompare(r1, r2);
  Check(Sign(k1.compare(k2)) == expected);
  auto d = DecodeKey(k1, true);
  Check(d.ok() && d->hash == h1 && d->range.has_value() && *d->range == r1);
  return 0;
}
