#!/usr/bin/env bash
# ab.sh BASE_BIN NEW_BIN [SECONDS] [CONCURRENCY]: two fdyno binaries (or one binary with two sets
# of flags) measured by fdyno-loadgen in one run, in alternating rounds so both see the same
# drift of a shared machine. Prints each round's throughput and the ratio NEW/BASE per workload.
#
# WORKLOADS (default "put"): loadgen workloads, e.g. "get put query".
# ROUNDS (default 3): rounds of every workload, base and new alternating.
# BASE_FLAGS, NEW_FLAGS: extra `fdyno serve` flags of each server (default none; both run with
#   the default durability, fsync).
# BASE_SETUP, NEW_SETUP: a command run once against each server before the rounds, with the
#   endpoint in $ENDPOINT and the table in $TABLE (for example one that enables a stream), after
#   the table is created and preloaded.
# LOADGEN: the load generator (default build/tools/loadgen/fdyno-loadgen).
# PIN=1: each server on CPU 1 and the load generator on CPU 0 (taskset).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base_bin=${1:?base binary}
new_bin=${2:?new binary}
seconds=${3:-10}
concurrency=${4:-32}
loadgen=${LOADGEN:-$root/build/tools/loadgen/fdyno-loadgen}
keys=1000 # partitions of 10 items: 10,000 items preloaded
work=$(mktemp -d /tmp/fdyno-ab.XXXXXX)
pin_server=() pin_loadgen=()
if [[ ${PIN:-0} == 1 ]]; then pin_server=(taskset -c 1) pin_loadgen=(taskset -c 0); fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret
table=fdyno-loadgen

declare -A port pid
start() { # NAME BIN FLAGS
  port[$1]=$(free_port)
  # shellcheck disable=SC2086
  "${pin_server[@]}" "$2" serve --listen "127.0.0.1:${port[$1]}" --data-dir "$work/$1" \
    --log-level warn $3 >"$work/$1.log" 2>&1 &
  pid[$1]=$!
}
start base "$base_bin" "${BASE_FLAGS:-}"
start new "$new_bin" "${NEW_FLAGS:-}"
trap 'kill ${pid[base]} ${pid[new]} 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for name in base new; do
  for _ in $(seq 200); do
    curl -s -o /dev/null "http://127.0.0.1:${port[$name]}/" 2>/dev/null && break
    sleep 0.1
  done
done

lg() { # NAME WORKLOAD [extra flags]
  local name=$1 workload=$2
  shift 2
  "${pin_loadgen[@]}" "$loadgen" --endpoint "http://127.0.0.1:${port[$name]}" --workload "$workload" \
    --table "$table" --keys "$keys" --rows-per-key 10 --value-size 100 --concurrency "$concurrency" \
    --json "$@"
}
for name in base new; do
  lg "$name" get --duration 1 --create-table --preload $((keys * 10)) >/dev/null
  setup_var="${name^^}_SETUP"
  if [[ -n ${!setup_var:-} ]]; then
    ENDPOINT="http://127.0.0.1:${port[$name]}" TABLE=$table bash -c "${!setup_var}"
  fi
done
results="$work/results.jsonl"
for r in $(seq "${ROUNDS:-3}"); do
  for w in ${WORKLOADS:-put}; do
    order=(base new)
    ((r % 2 == 0)) && order=(new base)
    for name in "${order[@]}"; do
      out=$(lg "$name" "$w" --duration "$seconds")
      echo "round $r $name $w: $out"
      echo "{\"target\":\"$name\",\"round\":$r,\"result\":$out}" >>"$results"
    done
  done
done

python3 - "$results" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    runs.setdefault((e["target"], e["result"]["workload"]), []).append(e["result"])
for w in sorted({w for _, w in runs}):
    b, n = runs[("base", w)], runs[("new", w)]
    ratios = [x["throughput"] / y["throughput"] for x, y in zip(n, b)]
    print(f"{w:10s} base {statistics.median(x['throughput'] for x in b):9.0f}/s  "
          f"new {statistics.median(x['throughput'] for x in n):9.0f}/s  "
          f"new/base median {statistics.median(ratios):.3f} "
          f"(rounds {' '.join(f'{r:.3f}' for r in ratios)})  "
          f"errors {sum(x['errors'] for x in b)}/{sum(x['errors'] for x in n)}")
PY
