#pragma once

#include <string>

// The allocator the process is linked with (CMakeLists.txt, FDYNO_MALLOC: jemalloc, tcmalloc or
// the C library's), found at run time through each one's own entry points.
namespace fdyno {

// Returns the memory the allocator holds free to the operating system: jemalloc purges its
// arenas' unused pages, tcmalloc releases its free page heap, the C library's trims its heaps.
// Allocators keep freed memory for reuse, so without this an in-memory database that deleted
// most of its data kept its peak resident size (kv/engines/embedded, the in-memory reclaim).
void ReleaseFreeMemory();

// "jemalloc 5.3.0-0-g54eaed1...", "tcmalloc (gperftools 2.10)" or "glibc 2.36 malloc" (fdyno
// --version).
std::string AllocatorVersion();

}  // namespace fdyno
