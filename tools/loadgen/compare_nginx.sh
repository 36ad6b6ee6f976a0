#!/usr/bin/env bash
# compare_nginx.sh [BUILD_DIR] [CONCURRENCY] [SECONDS]: DescribeEndpoints requests/s against
# fdyno versus nginx (Debian nginx-light) answering a static response of the same size, at the
# same concurrency, measured by fdyno-loadgen in one run. Prints both results and the ratio.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
concurrency=${2:-64}
seconds=${3:-10}
loadgen="$build/tools/loadgen/fdyno-loadgen"
fdyno="$build/src/main/fdyno"
work=$(mktemp -d /tmp/fdyno-vs-nginx.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
nginx_port=$(free_port)
fdyno_port=$(free_port)
threads=$(nproc)

body='{"Endpoints":[{"Address":"127.0.0.1:'"$fdyno_port"'","CachePeriodInMinutes":1440}]}'
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes $threads;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      default_type application/x-amz-json-1.0;
      add_header x-amzn-RequestId ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOP;
      add_header x-amz-crc32 1234567890;
      return 200 '$body';
    }
  }
}
CONF
/usr/sbin/nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
nginx_pid=$!
"$fdyno" serve --listen "127.0.0.1:$fdyno_port" --data-dir "$work/data" --durability none \
  --io-threads "$threads" --log-level warn &
fdyno_pid=$!
trap 'kill $nginx_pid $fdyno_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$fdyno_port/" >/dev/null 2>&1 && \
    curl -sf -X POST "http://127.0.0.1:$nginx_port/" >/dev/null 2>&1 && break
  sleep 0.1
done

run() {
  "$loadgen" --endpoint "http://127.0.0.1:$1" --workload describe-endpoints \
    --concurrency "$concurrency" --duration "$seconds" --json
}
echo "nginx: $(run "$nginx_port" | tee "$work/nginx.json")"
echo "fdyno: $(run "$fdyno_port" | tee "$work/fdyno.json")"
python3 - "$work/nginx.json" "$work/fdyno.json" <<'PY'
import json, sys
n, f = (json.load(open(p)) for p in sys.argv[1:3])
print(f"fdyno/nginx DescribeEndpoints throughput: {f['throughput']:.0f} / {n['throughput']:.0f}"
      f" req/s = {100 * f['throughput'] / n['throughput']:.1f}%"
      f" (p99 {f['p99_ms']:.2f} ms vs {n['p99_ms']:.2f} ms, errors {f['errors']} / {n['errors']})")
PY
