#!/usr/bin/env bash
# run.sh [seconds] [target...]: builds the libFuzzer targets with clang (ASan+UBSan, UBSan
# without recovery everywhere) in build-fuzz/ and runs each for `seconds` (default 30) from its
# seed corpus in fuzz/corpus/<target without _fuzz>/ (copied to a scratch directory, so runs
# never write into the tree). Fails on anything but a clean run: a non-zero exit of the fuzzer
# (a crash, a sanitizer report, an out-of-memory, a timeout, a fuzzer that does not start), any
# artifact file it leaves, or a run that executed no input. The reproducer is kept in the
# scratch directory, which is printed. FDYNO_FUZZ_BUILD overrides the build directory (any tree
# configured with FDYNO_FUZZ=ON, tests included or not).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Every fdyno_fuzzer() of fuzz/CMakeLists.txt.
  mapfile -t targets < <(sed -n 's/^ *fdyno_fuzzer(\([a-z0-9_]*\) .*/\1/p' "$root/fuzz/CMakeLists.txt")
fi
build=${FDYNO_FUZZ_BUILD:-$root/build-fuzz}
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DFDYNO_FUZZ=ON -DFDYNO_TESTS=OFF \
    -DFDYNO_BENCH=OFF >/dev/null
fi
ninja -C "$build" -j 2 "${targets[@]}"
scratch=$(mktemp -d)
for t in "${targets[@]}"; do
  corpus="$scratch/${t%_fuzz}"
  mkdir -p "$corpus"
  if [ -d "$root/fuzz/corpus/${t%_fuzz}" ]; then cp "$root/fuzz/corpus/${t%_fuzz}"/* "$corpus/"; fi
  echo "== $t for ${seconds}s"
  status=0
  (cd "$scratch" && "$build/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$scratch/$t-" "$corpus" >"$scratch/$t.log" 2>&1) || status=$?
  grep -E "^Done|stat::number_of_executed_units|ERROR|SUMMARY|runtime error" "$scratch/$t.log" || true
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t.log")
  if [ "$status" -ne 0 ] || compgen -G "$scratch/$t-*" >/dev/null || [ -z "$units" ] ||
    [ "$units" -eq 0 ]; then
    echo "$t failed (exit $status, executed ${units:-no} inputs); log and reproducers in $scratch" >&2
    tail -30 "$scratch/$t.log" >&2
    exit 1
  fi
done
rm -rf "$scratch"
