#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs every test: unit, contract, model and
# integration tests (ctest) under ASan+UBSan, a short libFuzzer run of every parser and codec
# target (any finding fails), the Debian package, and the black-box pytest + boto3 suite against
# the Release binary (and the package). FDYNO_FULL=1 runs the long forms
# (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
# The Release and the sanitized trees together outgrow ccache's default 5 GB, and a development
# build that finds the cache over its limit trims it: the larger limit is kept in ccache's own
# configuration, so every build on the machine keeps CI's objects.
ccache --max-size 12G >/dev/null
# The black-box files run against the sanitized server too: every operation family (items,
# queries, batches, transactions, PartiQL, tables, streams, TTL, indexes, backups and restores,
# exports and imports, point-in-time recovery, vector search) and the fault tests (framing,
# lost responses, power cuts, full disks).
sanitized_suite=(test_items.py test_query_scan.py test_batch.py test_transactions.py
  test_partiql.py test_partiql_writes.py test_tables.py test_streams.py test_ttl.py
  test_indexes.py test_backups.py test_export_import.py test_pitr.py test_vector_search.py
  test_framing.py test_response_loss.py test_power_cut.py test_full_disk_stages.py)
# Each phase says when it starts, so a slow CI run shows where its time went.
phase() { echo "== $1 (at ${SECONDS}s)"; }

# Release, the build type of the package, with -Werror: the server and the benchmarks. The
# ctest suite runs once, in the sanitized tree below (assertions on, ASan and UBSan): compiling
# it a second time at -O2 (over half of this tree's compile) would put CI past its 30 minutes.
# What users run, the Release binary, is what the black-box suite and the package test run.
build="$root/build-release"
phase "build (Release, -Werror)"
"$root/scripts/build.sh" "$build" -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF

phase "every ctest test under ASan+UBSan, and the fuzzers"
# One clang tree serves both: every object carries ASan, UBSan (no recovery) and libFuzzer's
# coverage hooks; the tests link no fuzzer runtime, the fuzz targets link libFuzzer's main.
# -O1 with assertions on: the sanitized tests run in minutes instead of -O0's many; -g1 (line
# tables) is enough for file:line in sanitizer reports and compiles faster than -g.
san="$root/build-san"
if [ ! -f "$san/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$san" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DFDYNO_FUZZ=ON -DFDYNO_BENCH=OFF >/dev/null
fi
cmake --build "$san" -j "$(nproc)"
(cd "$san" && ctest --output-on-failure -j 2 --timeout 900)
FDYNO_FUZZ_BUILD="$san" "$root/fuzz/run.sh" "${FDYNO_FUZZ_SECONDS:-10}"

phase "black-box tests against the sanitized server (ASan+UBSan)"
# The server built in the sanitized tree (every object with ASan and UBSan, no recovery) under
# a subset of the black-box suite that sends every operation family and the fault tests: a
# sanitizer report kills the server, which fails the test that was talking to it.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} FDYNO_BIN="$san/src/main/fdyno" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "${FDYNO_PYTEST_WORKERS:-2}" \
  --dist loadfile "${sanitized_suite[@]/#/$root/tests/pytest/}"

phase "Debian package and the static tarball"
# From the tested Release tree: the package holds the binary the tests ran. The tarball's static
# tree shares that tree's objects through ccache; the black-box run below starts its binary in
# an empty root and in a Debian 11 root (test_static_binary.py).
package_lines=$("$root/scripts/package.sh" "$build" | tail -2)
deb_line=$(echo "$package_lines" | head -1)
tarball_line=$(echo "$package_lines" | tail -1)
echo "$package_lines"
debian11=$("$root/scripts/debian11_root.sh" "$root/build-debian11")
# playwright-core for the console's browser test, which drives Debian's chromium.
playwright=$("$root/scripts/console_browser.sh" "$root/build-release/console-browser")

# In parallel (pytest-xdist): each test starts its own servers on free ports in its own
# directory, and the servers mostly wait on fsync. --dist loadfile keeps each file on one worker,
# so a module's shared server and the order of its tests are as in a serial run.
phase "black-box tests (pytest + boto3)"
FDYNO_BIN="$build/src/main/fdyno" FDYNO_PACKAGE="${deb_line%% *}" \
  FDYNO_TARBALL="${tarball_line%% *}" FDYNO_DEBIAN11_ROOT="$debian11" \
  FDYNO_PLAYWRIGHT="$playwright" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "${FDYNO_PYTEST_WORKERS:-2}" \
  --dist loadfile "$root/tests/pytest"
echo "== all tests passed in ${SECONDS}s"
