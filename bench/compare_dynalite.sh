#!/usr/bin/env bash
# compare_dynalite.sh [BUILD_DIR] [SECONDS] [CONCURRENCY]: fdyno (durable: --durability fsync,
# the default) versus dynalite (npm, --path on disk, no fsync) on free loopback ports, measured
# by fdyno-loadgen in one run: GetItem, PutItem (100-byte items) and Query on a 10-item
# partition, then TransactWriteItems with two Puts against fdyno alone (dynalite has no
# transactions). Prints every result and the ratios fdyno/dynalite.
# DYNALITE: path of the dynalite executable (default /tmp/dynalite/node_modules/.bin/dynalite).
# PIN=1: each server on CPU 1 and the load generator on CPU 0 (taskset), so the ratio compares
# the servers' work per core instead of how they share cores with the load generator.
# ROUNDS=N (default 1): the sequence GetItem, PutItem, Query N times, dynalite and fdyno
# alternating in each, so both see the same drift of a shared machine and every Query follows
# one PutItem phase as in a single round; the summary gives each round's ratio and the median.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seconds=${2:-10}
concurrency=${3:-32}
dynalite=${DYNALITE:-/tmp/dynalite/node_modules/.bin/dynalite}
loadgen="$build/tools/loadgen/fdyno-loadgen"
fdyno="$build/src/main/fdyno"
keys=1000 # partitions of 10 items: 10,000 items preloaded
work=$(mktemp -d /tmp/fdyno-vs-dynalite.XXXXXX)
pin_server=() pin_loadgen=()
if [[ ${PIN:-0} == 1 ]]; then pin_server=(taskset -c 1) pin_loadgen=(taskset -c 0); fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
dyn_port=$(free_port)
fdyno_port=$(free_port)
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret

"${pin_server[@]}" "$dynalite" --port "$dyn_port" --path "$work/dynalite" >"$work/dynalite.log" 2>&1 &
dyn_pid=$!
"${pin_server[@]}" "$fdyno" serve --listen "127.0.0.1:$fdyno_port" --data-dir "$work/fdyno" --durability fsync \
  --log-level warn >"$work/fdyno.log" 2>&1 &
fdyno_pid=$!
trap 'kill $dyn_pid $fdyno_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do
  curl -s -o /dev/null "http://127.0.0.1:$fdyno_port/" 2>/dev/null &&
    curl -s -o /dev/null "http://127.0.0.1:$dyn_port/" 2>/dev/null && break
  sleep 0.1
done

lg() { # PORT WORKLOAD [extra flags]
  local port=$1 workload=$2
  shift 2
  "${pin_loadgen[@]}" "$loadgen" --endpoint "http://127.0.0.1:$port" --workload "$workload" --keys "$keys" \
    --rows-per-key 10 --value-size 100 --concurrency "$concurrency" --json "$@"
}
# Create the table and preload every item (a short GetItem run validates the preload).
for port in "$dyn_port" "$fdyno_port"; do
  lg "$port" get --duration 1 --create-table --preload $((keys * 10)) >/dev/null
done
rounds=${ROUNDS:-1}
results="$work/results.jsonl"
for r in $(seq "$rounds"); do
  for w in get put query; do
    for target in dynalite fdyno; do
      port=$dyn_port
      [[ $target == fdyno ]] && port=$fdyno_port
      out=$(lg "$port" "$w" --duration "$seconds")
      echo "$target $w: $out"
      echo "{\"target\":\"$target\",\"round\":$r,\"result\":$out}" >>"$results"
    done
  done
done
out=$(lg "$fdyno_port" transact --duration "$seconds")
echo "fdyno transact: $out"
echo "{\"target\":\"fdyno\",\"round\":1,\"result\":$out}" >>"$results"

python3 - "$results" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    runs.setdefault((e["target"], e["result"]["workload"]), []).append(e["result"])
def line(name, w, target):
    f, d = runs[("fdyno", w)], runs[("dynalite", w)]
    ratios = [a["throughput"] / b["throughput"] for a, b in zip(f, d)]
    each = " ".join(f"{r:.2f}x" for r in ratios) if len(ratios) > 1 else ""
    r, a, b = statistics.median(ratios), f[-1], d[-1]
    print(f"{name:28s} fdyno {a['throughput']:8.0f}/s  dynalite {b['throughput']:8.0f}/s  "
          f"ratio {r:5.2f}x{' (median of ' + each + ')' if each else ''} (target >= {target}x)  "
          f"p99 {a['p99_ms']:.2f} vs {b['p99_ms']:.2f} ms  "
          f"errors {sum(x['errors'] for x in f)}/{sum(x['errors'] for x in d)}")
line("GetItem", "get", 3.5)
line("PutItem (fdyno fsync)", "put", 3)
line("Query (10-item partition)", "query", 6)
fp, ft = runs[("fdyno", "put")][-1], runs[("fdyno", "transact")][0]
print(f"{'TransactWriteItems 2 Puts':28s} fdyno {ft['throughput']:8.0f} txn/s = "
      f"{2 * ft['throughput']:.0f} items/s vs PutItem {fp['throughput']:.0f} items/s "
      f"(two PutItems: {fp['throughput'] / 2:.0f} pairs/s); p50 {ft['p50_ms']:.2f} p99 "
      f"{ft['p99_ms']:.2f} ms, errors {ft['errors']}")
PY
