// The engines the kv contract suite runs against: a small registry of factories, each opening
// (or reopening) a database in a directory. Adding an engine to the suite is one entry in
// engines.cc.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::kv::contract {

struct EngineFactory {
  std::string name;
  // Opens the database stored in dir (an empty directory: a fresh database), driven by clock
  // (null: the real clock) for read-version age and transaction timeouts.
  std::function<Result<std::unique_ptr<Database>>(const std::string& dir, Clock* clock)> open;
  // Whether a reopened directory holds what was committed before (durability tests).
  bool persistent = true;
  // Whether a second open of a directory that is open fails (lock tests).
  bool locks_directory = true;
  // Whether the clock given to open drives the 5 s window and transaction timeouts. When not
  // (FoundationDB: its cluster's versions advance in real time), the tests that need time to
  // pass wait for it, with margins around the boundaries.
  bool follows_clock = true;
  // Why the engine cannot run here (empty: it can); its tests are then skipped with the reason.
  std::function<std::string()> unavailable = nullptr;
  // Removes what a test stored for the database of `dir`, after it is closed; null when
  // removing the directory is enough.
  std::function<void(const std::string& dir)> destroy = nullptr;
};

// gtest prints a parameter by its name.
inline void PrintTo(const EngineFactory& f, std::ostream* os) { *os << f.name; }

// Every registered engine, in a stable order.
const std::vector<EngineFactory>& ContractEngines();

}  // namespace fdyno::kv::contract
