// item_bench: the read path's cost of turning one stored item into the response's JSON.
//
//   BM_DecodeThenWriteJson/S  decode into an Item (model::DecodeStoredItem), take its size
//                             (model::ItemSize) and write it (model::WriteItem): how every
//                             item was returned before the transcoder, and still is when a
//                             projection or a filter needs the Item.
//   BM_WriteStoredItemJson/S  the same JSON and size straight from the stored bytes
//                             (model::WriteStoredItemJson), as Query, Scan and GetItem return
//                             whole items.
// S is the item shape: 0 = the load generator's item (pk S, sk N, a 100-byte string), 1 = a
// mixed 7-attribute item (strings, numbers, a bool, a string set, a nested map).
// Run: build/bench/item_bench; compare the two at the same S (they run in one process).
#include <benchmark/benchmark.h>

#include <string>

#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/stored_json.h"

namespace {

using namespace fdyno::model;  // NOLINT: benchmark brevity

std::string StoredShape(int64_t shape) {
  const char* json =
      shape == 0
          ? R"({"pk":{"S":"key-123"},"sk":{"N":"7"},"payload":{"S":")"
            R"(0123456789012345678901234567890123456789012345678901234567890123456789)"
            R"(012345678901234567890123456789"}})"
          : R"({"id":{"S":"user#4711"},"name":{"S":"Ada Lovelace"},"age":{"N":"36"},)"
            R"("score":{"N":"-12.75"},"active":{"BOOL":true},"tags":{"SS":["a","bb","ccc"]},)"
            R"("address":{"M":{"city":{"S":"London"},"zip":{"N":"12345"}}}})";
  return EncodeStoredItem(ItemFromJson(json).value());
}

void BM_DecodeThenWriteJson(benchmark::State& state) {
  const std::string stored = StoredShape(state.range(0));
  for (auto _ : state) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    auto item = DecodeStoredItem(stored);
    benchmark::DoNotOptimize(ItemSize(*item));
    WriteItem(w, *item);
    benchmark::DoNotOptimize(buffer.GetSize());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeThenWriteJson)->Arg(0)->Arg(1);

void BM_WriteStoredItemJson(benchmark::State& state) {
  const std::string stored = StoredShape(state.range(0));
  for (auto _ : state) {
    rapidjson::StringBuffer buffer;
    benchmark::DoNotOptimize(WriteStoredItemJson(stored, buffer).value());
    benchmark::DoNotOptimize(buffer.GetSize());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WriteStoredItemJson)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
