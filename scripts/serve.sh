#!/usr/bin/env bash
# serve.sh [fdyno serve flags...]: installs what building and running the server needs (not
# the test tools), builds only the server (Release, in build-serve/), and starts `fdyno serve`
# on the embedded engine (data in ./fdyno-data unless --data-dir or --in-memory is given).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" serve
dir="$root/build-serve"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF \
    -DFDYNO_BENCH=OFF >/dev/null
fi
cmake --build "$dir" -j "$(nproc)" --target fdyno
exec "$dir/src/main/fdyno" serve "$@"
