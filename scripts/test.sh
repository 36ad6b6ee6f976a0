#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test: unit, contract, model and
# integration tests (ctest), all of them again under ASan+UBSan, a short libFuzzer run of every
# parser and codec target (any finding fails), the Debian package, and the black-box pytest +
# boto3 suite against the real binary (and the package). FDYNO_FULL=1 runs the long forms
# (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
# Each phase says when it starts, so a slow CI run shows where its time went.
phase() { echo "== $1 (at ${SECONDS}s)"; }

# Release, the build type of the package, with -Werror: what users run is what is tested.
build="$root/build-release"
phase "build (Release, -Werror)"
"$root/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Release

phase "unit and contract tests"
(cd "$build" && ctest --output-on-failure -j 2 --timeout 900)

phase "every ctest test again under ASan+UBSan"
# -O1 with assertions on: the sanitized tests run in a few minutes instead of -O0's many.
asan="$root/build-asan"
if [ ! -f "$asan/build.ninja" ]; then
  cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DFDYNO_SANITIZE=ON -DFDYNO_BENCH=OFF >/dev/null
fi
cmake --build "$asan" -j "$(nproc)"
(cd "$asan" && ctest --output-on-failure -j 2 --timeout 900)

phase "fuzz targets (short run)"
FDYNO_FUZZ_BUILD="$root/build-fuzz" "$root/fuzz/run.sh" "${FDYNO_FUZZ_SECONDS:-10}"

phase "Debian package"
deb_line=$("$root/scripts/package.sh" "$root/build-package" | tail -1)
echo "$deb_line"

phase "black-box tests (pytest + boto3)"
FDYNO_BIN="$build/src/main/fdyno" FDYNO_PACKAGE="${deb_line%% *}" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/tests/pytest"
echo "== all tests passed in ${SECONDS}s"
