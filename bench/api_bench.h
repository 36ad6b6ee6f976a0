// What the benchmarks that call operation handlers share: the operation registry over an
// embedded engine in a scratch directory, a call by operation name, and a timed round of calls
// from several threads. Header-only; benchmarks only.
#pragma once

#include <rapidjson/document.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/api.h"
#include "kv/engines/embedded/embedded.h"
#include "store/catalog.h"

namespace fdyno::bench {

// The engine lives in FDYNO_BENCH_DIR, or in a fresh directory under /tmp named after `name`
// that the destructor removes. Exits the process when the engine cannot be opened.
class ApiBench {
 public:
  ApiBench(const char* name, bool durable) {
    if (const char* d = std::getenv("FDYNO_BENCH_DIR")) {
      dir_ = d;
    } else {
      dir_ = (std::filesystem::temp_directory_path() / (std::string(name) + "_XXXXXX")).string();
      if (::mkdtemp(dir_.data()) == nullptr) std::exit(1);
      remove_ = true;
    }
    auto opened = kv::OpenEmbedded(
        {.path = dir_, .durability = durable ? kv::Durability::kFsync : kv::Durability::kNone});
    if (!opened.ok()) {
      std::fprintf(stderr, "open: %s\n", opened.error().message.c_str());
      std::exit(1);
    }
    db_ = std::move(opened).value();
    api::ApiDeps deps;
    deps.db = db_.get();
    deps.catalog = &catalog_;
    registry_ = std::make_unique<api::OperationRegistry>(api::BuildOperationRegistry(deps));
  }
  ~ApiBench() {
    registry_.reset();
    db_.reset();
    if (remove_) std::filesystem::remove_all(dir_);
  }

  Result<std::string> Call(const std::string& op, const std::string& json) const {
    rapidjson::Document doc;
    doc.Parse(json.c_str(), json.size());
    api::RequestContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    return (*registry_->Find(op))(ctx, doc);
  }

  // The engine and the catalog the operations use, for benchmarks that also read the store
  // directly or run a worker's step.
  kv::Database& db() const { return *db_; }
  store::Catalog& catalog() { return catalog_; }

  // Call, exiting the process on an error.
  std::string Must(const std::string& op, const std::string& json) const {
    Result<std::string> r = Call(op, json);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", op.c_str(), r.error().message.c_str());
      std::exit(1);
    }
    return std::move(r).value();
  }

  // Calls/s of `calls` calls of `call` (given its thread's generator) from `conc` threads.
  static double Round(int64_t calls, int conc, uint64_t seed,
                      const std::function<void(std::mt19937_64&)>& call) {
    std::atomic<int64_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < conc; ++c) {
      threads.emplace_back([&, c] {
        std::mt19937_64 rng(seed * 1000 + c);
        while (next.fetch_add(1) < calls) call(rng);
      });
    }
    for (std::thread& t : threads) t.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return static_cast<double>(calls) / s;
  }

  // The median of `v` (the upper one of an even count). REQUIRES: v not empty.
  static double Median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  // `rounds` rounds of the baseline and of the other case, each a rate that `run(other, round)`
  // measures (which goes first alternates, so a trend in the machine's load favours neither).
  // Prints each round's rates and their ratio other/baseline, then the median ratio.
  static double CompareRounds(int rounds, const char* baseline, const char* other,
                              const std::function<double(bool other, int round)>& run) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
      double base_rate = 0, other_rate = 0;
      if (r % 2 == 0) {
        base_rate = run(false, r);
        other_rate = run(true, r);
      } else {
        other_rate = run(true, r);
        base_rate = run(false, r);
      }
      ratios.push_back(other_rate / base_rate);
      std::printf("round %d: %s %.0f/s, %s %.0f/s, ratio %.2f\n", r + 1, baseline, base_rate, other,
                  other_rate, ratios.back());
    }
    const double median = Median(std::move(ratios));
    std::printf("median %s / %s: %.2f\n", other, baseline, median);
    return median;
  }

 private:
  std::string dir_;
  bool remove_ = false;
  std::unique_ptr<kv::Database> db_;
  store::Catalog catalog_;
  std::unique_ptr<api::OperationRegistry> registry_;
};

}  // namespace fdyno::bench
