// partiql_bench: the PartiQL layer's cost per statement (parse, bind, plan) for the point read
// ExecuteStatement serves most, next to the expression pipeline of the GetItem it replaces.
//
//   ninja -C build partiql_bench && build/bench/partiql_bench
#include <benchmark/benchmark.h>

#include "partiql/bind.h"
#include "partiql/parser.h"
#include "partiql/plan.h"

namespace {

using fdyno::model::AttributeValue;

constexpr std::string_view kPointRead = R"(SELECT * FROM "fdyno-loadgen" WHERE pk = ? AND sk = ?)";

fdyno::partiql::Parameters Params() {
  return {AttributeValue::S("key-123"), AttributeValue::N(*fdyno::model::Number::Parse("7"))};
}

fdyno::partiql::TableSchema Schema() {
  fdyno::partiql::TableSchema s;
  s.name = "fdyno-loadgen";
  s.key_schema = {{"pk", fdyno::model::ScalarType::kS}, {{"sk", fdyno::model::ScalarType::kN}}};
  return s;
}

void BM_Parse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(fdyno::partiql::Parse(kPointRead));
}
BENCHMARK(BM_Parse);

void BM_Bind(benchmark::State& state) {
  auto parsed = fdyno::partiql::Parse(kPointRead);
  auto params = Params();
  for (auto _ : state) benchmark::DoNotOptimize(fdyno::partiql::Bind(*parsed, params));
}
BENCHMARK(BM_Bind);

void BM_Plan(benchmark::State& state) {
  auto bound = fdyno::partiql::Bind(*fdyno::partiql::Parse(kPointRead), Params());
  auto schema = Schema();
  for (auto _ : state) {
    benchmark::DoNotOptimize(fdyno::partiql::PlanStatement(*bound, schema, {}));
  }
}
BENCHMARK(BM_Plan);

void BM_ParseBindPlan(benchmark::State& state) {
  auto params = Params();
  auto schema = Schema();
  for (auto _ : state) {
    auto bound = fdyno::partiql::Bind(*fdyno::partiql::Parse(kPointRead), params);
    benchmark::DoNotOptimize(fdyno::partiql::PlanStatement(*bound, schema, {}));
  }
}
BENCHMARK(BM_ParseBindPlan);

}  // namespace

BENCHMARK_MAIN();
