// Names the calling thread as `top -H`, `ps -L` and debuggers show it (Linux: at most 15
// characters are kept).
#pragma once

#include <pthread.h>

namespace fdyno {

inline void SetThreadName(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace fdyno
