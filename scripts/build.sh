#!/usr/bin/env bash
# build.sh [DIR] [cmake args...]: configures (once) and builds fdyno with CMake + Ninja: the
# development configuration (RelWithDebInfo, -Werror) unless cmake args say otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; shift || true
# ccache keyed on paths relative to the checkout, so a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFDYNO_WERROR=ON "$@"
fi
cmake --build "$dir" -j "$(nproc)"
