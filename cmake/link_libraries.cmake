# The libraries the server links, as two targets every library uses:
#   fdyno_log      spdlog and fmt
#   fdyno_rocksdb  RocksDB (Debian's librocksdb.a) and its compression libraries
#   fdyno_xml      expat (the S3 API's request bodies, src/s3/xml.h)
# By default they are Debian's shared libraries (RocksDB's archive is linked statically either
# way: docs/format/kv_embedded.md, "RocksDB features"). With FDYNO_STATIC every one of them is a
# static archive, and the server is linked with -static (glibc and libstdc++ too): one binary
# that needs nothing but the kernel (scripts/tarball.sh, README.md "Any Linux"). Debian ships spdlog
# and fmt as shared libraries only; src/third_party/spdlog_fmt_static.cc compiles what they
# hold, with the same definitions, so every other object is the same in both trees (ccache
# builds the static tree from the dynamic tree's objects).
add_library(fdyno_log INTERFACE)
add_library(fdyno_rocksdb INTERFACE)
add_library(fdyno_xml INTERFACE)
if(NOT FDYNO_STATIC)
  target_link_libraries(fdyno_xml INTERFACE EXPAT::EXPAT)
  target_link_libraries(fdyno_log INTERFACE spdlog::spdlog)
  target_link_libraries(fdyno_rocksdb INTERFACE RocksDB::rocksdb)
  return()
endif()

if(FDYNO_TESTS OR FDYNO_BENCH)
  message(FATAL_ERROR "FDYNO_STATIC builds the server alone: set FDYNO_TESTS=OFF and FDYNO_BENCH=OFF")
endif()
find_library(FDYNO_STATIC_expat NAMES libexpat.a REQUIRED)
target_link_libraries(fdyno_xml INTERFACE ${FDYNO_STATIC_expat})
target_include_directories(fdyno_xml INTERFACE ${EXPAT_INCLUDE_DIRS})

add_library(fdyno_spdlog_static STATIC ${CMAKE_SOURCE_DIR}/src/third_party/spdlog_fmt_static.cc)
target_compile_definitions(fdyno_spdlog_static PUBLIC SPDLOG_SHARED_LIB SPDLOG_COMPILED_LIB
                                                      SPDLOG_FMT_EXTERNAL FMT_SHARED)
target_link_libraries(fdyno_spdlog_static PUBLIC Threads::Threads)
target_link_libraries(fdyno_log INTERFACE fdyno_spdlog_static)

get_target_property(FDYNO_ROCKSDB_ARCHIVE RocksDB::rocksdb IMPORTED_LOCATION_NONE)
set(rocksdb_libraries ${FDYNO_ROCKSDB_ARCHIVE})
foreach(name snappy lz4 zstd bz2)
  find_library(FDYNO_STATIC_${name} NAMES lib${name}.a REQUIRED)
  list(APPEND rocksdb_libraries ${FDYNO_STATIC_${name}})
endforeach()
target_link_libraries(fdyno_rocksdb INTERFACE ${rocksdb_libraries} ZLIB::ZLIB Threads::Threads)
