// What `fdyno --version` prints: fdyno's version, the commit and build type it was built from,
// and the versions of the libraries it runs on (RocksDB, OpenSSL, zlib, Boost, spdlog).
#pragma once

#include <string>

namespace fdyno::main {

// Several lines; the first is "fdyno <version>".
std::string VersionText();

}  // namespace fdyno::main
