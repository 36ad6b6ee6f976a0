#!/usr/bin/env bash
# run.sh [seconds] [target...]: builds the libFuzzer targets with clang (ASan+UBSan) in
# build-fuzz/ and runs each for `seconds` (default 30) from its seed corpus in fuzz/corpus/
# (copied to a scratch directory, so runs never write into the tree). Exits non-zero on the
# first crash, leak or sanitizer report; the reproducer is left in the scratch directory.
# FDYNO_FUZZ_BUILD overrides the build directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(number_fuzz key_codec_fuzz attribute_value_json_fuzz item_codec_fuzz expr_fuzz partiql_fuzz)
fi
build=${FDYNO_FUZZ_BUILD:-$root/build-fuzz}
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
  (cd "$scratch" && "$build/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$scratch/" "$corpus" \
    2>&1 | grep -E "^Done|stat::number_of_executed_units|ERROR|SUMMARY" || true)
  if ls "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* >/dev/null 2>&1; then
    echo "$t failed; reproducers in $scratch" >&2
    exit 1
  fi
done
rm -rf "$scratch"
