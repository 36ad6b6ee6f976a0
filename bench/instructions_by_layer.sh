#!/usr/bin/env bash
# instructions_by_layer.sh [BUILD_DIR] [OUT=bench/results/layers.json]: the server's
# instructions per request by layer (bench/layers.py) for GetItem, PutItem, Query and
# UpdateItem, each from its own request_instructions.sh run (callgrind; BUILD_DIR needs debug
# info: the development tree, RelWithDebInfo). Writes {operation: {layer: instructions}}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/bench/results/layers.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in get put query update; do
  LAYERS="$tmp/$w.json" "$root/bench/request_instructions.sh" "$build" "$w" 5
done
mkdir -p "$(dirname "$out")"
python3 - "$tmp" "$out" <<'PY'
import json, os, sys
names = {"get": "GetItem", "put": "PutItem", "query": "Query", "update": "UpdateItem"}
out = {names[w]: json.load(open(os.path.join(sys.argv[1], w + ".json"))) for w in names}
json.dump(out, open(sys.argv[2], "w"), indent=1)
PY
echo "wrote $out"
