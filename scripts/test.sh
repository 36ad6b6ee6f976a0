#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test: unit and contract tests
# (ctest), the kv tests again under ASan+UBSan, and the black-box pytest suite against the
# real binary. FDYNO_FULL=1 runs the long variants (crash cycles, random tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"

echo "== build (release, -Werror)"
"$root/scripts/build.sh" "$root/build"

echo "== unit and contract tests"
(cd "$root/build" && ctest --output-on-failure -j 2 --timeout 900)

echo "== kv tests under ASan+UBSan"
asan="$root/build-asan"
if [ ! -f "$asan/build.ninja" ]; then
  cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFDYNO_SANITIZE=ON \
    -DFDYNO_BENCH=OFF >/dev/null
fi
cmake --build "$asan" -j "$(nproc)" --target kv_tests
(cd "$asan" && ctest --output-on-failure -j 2 --timeout 900 -L kv)

if [ -d "$root/tests/pytest" ] && ls "$root"/tests/pytest/test_*.py >/dev/null 2>&1; then
  echo "== black-box tests (pytest + boto3)"
  FDYNO_BIN="$root/build/src/main/fdyno" /usr/bin/python3 -m pytest -q "$root/tests/pytest"
fi
