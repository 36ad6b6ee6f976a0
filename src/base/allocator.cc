#include "base/allocator.h"

#include <gnu/libc-version.h>
#include <malloc.h>

#include <cstddef>

// Each allocator's own entry points, weak: those of the one linked in are non-null.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));
extern "C" void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));
extern "C" const char* tc_version(int* major, int* minor, const char** patch) __attribute__((weak));
// The C library's too: a strong reference would pull glibc's malloc into a static binary that
// links jemalloc (FDYNO_STATIC), whose malloc and free then clash with jemalloc's.
#pragma weak malloc_trim

namespace fdyno {

void ReleaseFreeMemory() {
  if (mallctl != nullptr) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge": every arena (jemalloc.h defines it as 4096).
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
  } else if (MallocExtension_ReleaseFreeMemory != nullptr) {
    MallocExtension_ReleaseFreeMemory();
  } else if (malloc_trim != nullptr) {
    malloc_trim(0);
  }
}

std::string AllocatorVersion() {
  if (mallctl != nullptr) {
    const char* version = nullptr;
    size_t size = sizeof version;
    if (mallctl("version", &version, &size, nullptr, 0) == 0 && version != nullptr) {
      return std::string("jemalloc ") + version;
    }
    return "jemalloc";
  }
  if (tc_version != nullptr) {
    int major = 0, minor = 0;
    const char* patch = nullptr;
    return std::string("tcmalloc (") + tc_version(&major, &minor, &patch) + ")";
  }
  return std::string("glibc ") + gnu_get_libc_version() + " malloc";
}

}  // namespace fdyno
