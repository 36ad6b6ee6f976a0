#!/usr/bin/env bash
# sweep.sh [BUILD_DIR] [SECONDS=5] [OUT=bench/results/sweep.jsonl]: throughput and latency
# against connections, for the charts of bench/report.py. At each concurrency of CONNECTIONS
# (default "1 8 32 64") it runs GetItem, PutItem (100-byte items) and Query (a 10-item
# partition) with fdyno-loadgen against three servers on free loopback ports, one after another
# in each step so that all three see the same state of the machine:
#   fdyno     the Release server, durable (--durability fsync, the default)
#   dynalite  npm's dynalite on disk (DYNALITE, default /tmp/dynalite/node_modules/.bin/dynalite)
#   nginx     Debian's nginx-light answering every request with a fixed body of the size of
#             fdyno's answer to that operation: the floor of what an HTTP server costs here
# Writes one JSON line per run: the load generator's result plus "server" and "operation".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-release}
seconds=${2:-5}
out=${3:-$root/bench/results/sweep.jsonl}
connections=${CONNECTIONS:-1 8 32 64}
dynalite=${DYNALITE:-/tmp/dynalite/node_modules/.bin/dynalite}
loadgen="$build/tools/loadgen/fdyno-loadgen"
fdyno="$build/src/main/fdyno"
keys=1000 # partitions of 10 items: 10,000 items preloaded
[[ -x /usr/sbin/nginx ]] || { echo "sweep.sh needs Debian's nginx-light (apt install nginx-light)" >&2; exit 1; }
[[ -x $dynalite ]] || { echo "sweep.sh needs dynalite: npm install --prefix /tmp/dynalite dynalite, or DYNALITE" >&2; exit 1; }
work=$(mktemp -d /tmp/fdyno-sweep.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fdyno_port=$(free_port) dyn_port=$(free_port) nginx_port=$(free_port)
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

"$fdyno" serve --listen "127.0.0.1:$fdyno_port" --data-dir "$work/fdyno" --log-level warn \
  >"$work/fdyno.log" 2>&1 &
pids+=($!)
"$dynalite" --port "$dyn_port" --path "$work/dynalite" >"$work/dynalite.log" 2>&1 &
pids+=($!)
for port in $fdyno_port $dyn_port; do
  for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
done

lg() { # PORT WORKLOAD CONNECTIONS [extra flags]
  local port=$1 workload=$2 n=$3
  shift 3
  "$loadgen" --endpoint "http://127.0.0.1:$port" --workload "$workload" --keys "$keys" \
    --rows-per-key 10 --value-size 100 --concurrency "$n" --json "$@"
}
for port in $fdyno_port $dyn_port; do
  lg "$port" get 8 --duration 1 --create-table --preload $((keys * 10)) >/dev/null
done

# nginx answers each operation (told by X-Amz-Target) with a body as long as fdyno's answer.
body_of() { # WORKLOAD: fdyno's answer to one request of it, captured by a signed call
  /usr/bin/python3 - "$fdyno_port" "$1" <<'PY'
import sys, boto3
c = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", region_name="us-east-1",
                 aws_access_key_id="fdyno", aws_secret_access_key="fdyno-secret")
table = "fdyno-loadgen"
if sys.argv[2] == "get":
    r = c.get_item(TableName=table, Key={"pk": {"S": "key-1"}, "sk": {"N": "1"}})
elif sys.argv[2] == "query":
    r = c.query(TableName=table, KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "key-1"}})
else:
    r = {}
r.pop("ResponseMetadata", None)
import json
print(len(json.dumps(r, separators=(",", ":"))))
PY
}
mkdir -p "$work/nginx"
{
  echo "worker_processes $(nproc); daemon off; pid $work/nginx/nginx.pid;"
  echo "error_log $work/nginx/error.log; events { worker_connections 4096; }"
  echo "http { access_log off; keepalive_requests 100000000; keepalive_timeout 60s;"
  for d in body proxy fastcgi uwsgi scgi; do echo "${d}_temp_path $work/nginx/$d;" | sed 's/^body_/client_body_/'; done
  echo 'map $http_x_amz_target $answer {'
  for w in get:GetItem put:PutItem query:Query; do
    size=$(body_of "${w%%:*}")
    printf '~%s$ "%s";\n' "${w#*:}" "$(head -c "$size" /dev/zero | tr '\0' x)"
  done
  echo "}"
  echo "server { listen 127.0.0.1:$nginx_port; default_type application/x-amz-json-1.0;"
  echo 'location / { return 200 $answer; } } }'
} >"$work/nginx/nginx.conf"
/usr/sbin/nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null -X POST "http://127.0.0.1:$nginx_port/" && break; sleep 0.1; done

mkdir -p "$(dirname "$out")"
: >"$out"
for n in $connections; do
  for w in get put query; do
    for server in nginx dynalite fdyno; do
      case $server in
        fdyno) endpoint="http://127.0.0.1:$fdyno_port" ;;
        dynalite) endpoint="http://127.0.0.1:$dyn_port" ;;
        nginx) endpoint="http://127.0.0.1:$nginx_port" ;;
      esac
      result=$("$loadgen" --endpoint "$endpoint" --workload "$w" --keys "$keys" --rows-per-key 10 \
        --value-size 100 --concurrency "$n" --duration "$seconds" --json)
      line=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(server=sys.argv[2], operation=sys.argv[3]); print(json.dumps(r))' \
        "$result" "$server" "$w")
      echo "$line" | tee -a "$out"
    done
  done
done
echo "wrote $out"
