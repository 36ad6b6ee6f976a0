// The embedded engine's options as `fdyno serve` opens it, shared with the tests that must run
// the engine exactly as the server does (tests/integration/expiry_model_test.cc).
#pragma once

#include <string>

#include "base/clock.h"
#include "kv/engines/embedded/embedded.h"

namespace fdyno::main {

// `clock`: null for the real clock; must outlive the database.
kv::EmbeddedOptions ServerEngineOptions(std::string path, kv::Durability durability,
                                        Clock* clock = nullptr);

}  // namespace fdyno::main
