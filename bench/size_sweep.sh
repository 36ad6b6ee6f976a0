#!/usr/bin/env bash
# size_sweep.sh [BUILD_DIR] [SECONDS=5] [OUT=bench/results/size.jsonl]: GetItem, Query (a
# 10-item partition) and PutItem against tables of SIZES items (default "10000 100000 1000000",
# 100-byte items, partitions of 10), all in one durable fdyno, at CONNECTIONS (default 32)
# connections: how latency and throughput move with the table's size, for bench/report.py.
# Each table is loaded through the load generator's PutItem preload; the reads come after every
# table is loaded, so all sizes are measured with the same engine state around them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-release}
seconds=${2:-5}
out=${3:-$root/bench/results/size.jsonl}
sizes=${SIZES:-10000 100000 1000000}
connections=${CONNECTIONS:-32}
loadgen="$build/tools/loadgen/fdyno-loadgen"
work=$(mktemp -d /tmp/fdyno-size.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret
"$build/src/main/fdyno" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --log-level warn \
  >"$work/fdyno.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

lg() { # ITEMS WORKLOAD [extra flags]
  local items=$1 workload=$2
  shift 2
  "$loadgen" --endpoint "http://127.0.0.1:$port" --table "size-$items" --keys $((items / 10)) \
    --rows-per-key 10 --value-size 100 --workload "$workload" --concurrency "$connections" "$@"
}
for items in $sizes; do
  lg "$items" get --duration 1 --create-table --preload "$items" >&2
done
mkdir -p "$(dirname "$out")"
: >"$out"
for items in $sizes; do
  for w in get query put; do
    result=$(lg "$items" "$w" --duration "$seconds" --json)
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(items=int(sys.argv[2])); print(json.dumps(r))' \
      "$result" "$items" | tee -a "$out"
  done
done
echo "data directory: $(du -sb "$work/data" | cut -f1) bytes for $(echo $sizes | tr ' ' '+' | bc) items"
echo "wrote $out"
