#!/usr/bin/env bash
# nginx_instructions.sh [BUILD_DIR] [SECONDS=5]: the floor of request_instructions.sh: the
# instructions Debian's nginx-light spends per answer when it answers every GetItem, PutItem and
# Query request with a fixed body of the length of fdyno's answer (as bench/sweep.sh's floor),
# counted by callgrind over the whole process (one worker, no master: every instruction is in the
# profile), the same load generator at 8 connections, an idle run of the same length subtracted.
# Prints one JSON object {operation: instructions per answer}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seconds=${2:-5}
loadgen="$build/tools/loadgen/fdyno-loadgen"
[[ -x /usr/sbin/nginx ]] || { echo "nginx_instructions.sh needs Debian's nginx-light" >&2; exit 1; }
work=$(mktemp -d /tmp/fdyno-nginx-instructions.XXXXXX)
trap 'pkill -f "$work/nginx.conf" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# fdyno's answers' lengths (bench/sweep.sh measures them the same way): GetItem of a 100-byte
# item, PutItem's "{}", a Query of 10 such items.
get=$(python3 -c 'import json; print(len(json.dumps({"Item":{"pk":{"S":"key-1"},"sk":{"N":"1"},"v":{"S":"x"*100}}},separators=(",",":"))))')
query=$(python3 -c 'import json; i={"pk":{"S":"key-1"},"sk":{"N":"1"},"v":{"S":"x"*100}}; print(len(json.dumps({"Items":[i]*10,"Count":10,"ScannedCount":10},separators=(",",":"))))')
mkdir -p "$work/tmp"
cat >"$work/nginx.conf" <<CONF
master_process off; worker_processes 1; daemon off; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 1024; }
http {
  access_log off; keepalive_requests 100000000; keepalive_timeout 60s;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  map \$http_x_amz_target \$answer {
    ~GetItem\$ "$(head -c "$get" /dev/zero | tr '\0' x)";
    ~PutItem\$ "{}";
    ~Query\$ "$(head -c "$query" /dev/zero | tr '\0' x)";
  }
  server { listen 127.0.0.1:$port; default_type application/x-amz-json-1.0;
           location / { return 200 \$answer; } }
}
CONF
count() { # OUT [WORKLOAD]: the whole process's instructions, with WORKLOAD run or idle
  valgrind --tool=callgrind --callgrind-out-file="$work/$1" /usr/sbin/nginx -c "$work/nginx.conf" \
    -p "$work" >"$work/$1.log" 2>&1 &
  local vg=$!
  for _ in $(seq 300); do curl -s -o /dev/null -X POST "http://127.0.0.1:$port/" && break; sleep 0.2; done
  if [[ -n ${2:-} ]]; then
    AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret "$loadgen" \
      --endpoint "http://127.0.0.1:$port" --workload "$2" --keys 1000 --rows-per-key 10 \
      --value-size 100 --concurrency 8 --duration "$seconds" --json >"$work/$1.json"
  else
    sleep "$seconds"
  fi
  kill -QUIT $vg
  wait $vg || true
  callgrind_annotate "$work/$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
idle=$(count idle.out)
declare -A names=([get]=GetItem [put]=PutItem [query]=Query)
echo -n "{"
sep=""
for w in get put query; do
  load=$(count "$w.out" "$w")
  requests=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$work/$w.out.json")
  echo -n "$sep\"${names[$w]}\": $(((load - idle) / requests))"
  sep=", "
done
echo "}"
