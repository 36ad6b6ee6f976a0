#!/usr/bin/env bash
# stream_catchup.sh [BUILD_DIR] [RECORDS=1000000]: writes RECORDS items (100-byte values, the
# load generator's) into a table with a NEW_AND_OLD_IMAGES stream, then measures a consumer
# reading the whole stream with GetRecords (bench/stream_catchup.py). The server runs with
# --durability none so that loading is quick; reading is what is measured.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
records=${2:-1000000}
work=$(mktemp -d /tmp/fdyno-stream-bench.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret
"$build/src/main/fdyno" serve --listen "127.0.0.1:$port" --data-dir "$work/data" --durability none \
  --log-level warn >"$work/fdyno.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
lg() { "$build/tools/loadgen/fdyno-loadgen" --endpoint "http://127.0.0.1:$port" --table streamed \
  --keys $((records / 10)) --rows-per-key 10 --value-size 100 --concurrency 32 --json "$@"; }
lg --workload get --duration 0.2 --create-table >/dev/null
python3 - "$port" <<'PY'
import boto3, sys
c = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", region_name="us-east-1")
c.update_table(TableName="streamed", StreamSpecification={"StreamEnabled": True,
               "StreamViewType": "NEW_AND_OLD_IMAGES"})
PY
start=$(date +%s.%N)
lg --workload get --duration 0.2 --preload "$records" >/dev/null
echo "loaded $records items in $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
python3 "$root/bench/stream_catchup.py" "http://127.0.0.1:$port" streamed "$records"
