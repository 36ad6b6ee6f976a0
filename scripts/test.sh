#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test: unit, contract, model and
# integration tests (ctest), all of them again under ASan+UBSan, a short libFuzzer run of every
# parser and codec target (any finding fails), and the black-box pytest + boto3 suite against
# the real binary. FDYNO_FULL=1 runs the long forms (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true

echo "== build (release, -Werror)"
"$root/scripts/build.sh" "$root/build"

echo "== unit and contract tests"
(cd "$root/build" && ctest --output-on-failure -j 2 --timeout 900)

echo "== every ctest test again under ASan+UBSan"
# -O1 with assertions on: the sanitized tests run in a few minutes instead of -O0's many.
asan="$root/build-asan"
if [ ! -f "$asan/build.ninja" ]; then
  cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DFDYNO_SANITIZE=ON -DFDYNO_BENCH=OFF >/dev/null
fi
cmake --build "$asan" -j "$(nproc)"
(cd "$asan" && ctest --output-on-failure -j 2 --timeout 900)

echo "== fuzz targets (short run)"
FDYNO_FUZZ_BUILD="$root/build-fuzz" "$root/fuzz/run.sh" "${FDYNO_FUZZ_SECONDS:-10}"

echo "== black-box tests (pytest + boto3)"
FDYNO_BIN="$root/build/src/main/fdyno" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "$root/tests/pytest"
