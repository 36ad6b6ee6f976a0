#include "main/version.h"

#include <openssl/crypto.h>
#include <rocksdb/version.h>
#include <spdlog/version.h>
#include <zlib.h>

#include <boost/version.hpp>

#include "base/allocator.h"
#include "main/build_commit.h"

namespace fdyno::main {

std::string VersionText() {
  std::string boost = BOOST_LIB_VERSION;
  for (char& c : boost) {
    if (c == '_') c = '.';
  }
  // RocksDB, OpenSSL and zlib are shared libraries: their versions are read at run time, so
  // they show what this process really loaded.
  return std::string("fdyno ") + FDYNO_VERSION + "\n" +  //
         "commit " + FDYNO_BUILD_COMMIT + ", build type " + FDYNO_BUILD_TYPE + "\n" + "RocksDB " +
         rocksdb::GetRocksVersionAsString(true) + "\n" + OpenSSL_version(OPENSSL_VERSION) +
         "\n" +                            //
         "zlib " + zlibVersion() + "\n" +  //
         "Boost " + boost + "\n" +         //
         "spdlog " + std::to_string(SPDLOG_VER_MAJOR) + "." + std::to_string(SPDLOG_VER_MINOR) +
         "." + std::to_string(SPDLOG_VER_PATCH) + "\n" +  //
         AllocatorVersion() + "\n";
}

}  // namespace fdyno::main
