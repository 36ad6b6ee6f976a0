#!/usr/bin/env bash
# request_instructions.sh [BUILD_DIR] [WORKLOAD=get] [SECONDS=5]: instructions the server spends
# per request on its request path (network threads, workers and the engine's committer
# thread), counted by valgrind's
# callgrind. Unlike throughput, instruction counts barely move with the load of a shared
# machine, so they compare two builds or two commits reliably.
#
# It preloads the load generator's table (10,000 items) into a fresh data directory, then runs
# the server under callgrind twice on copies of it: once with WORKLOAD at 8 connections for
# SECONDS, once idle for as long. The idle run's request-path count (timers, start-up on those
# threads) is subtracted. RocksDB's background threads (flushes, compactions) are left out, as
# they depend on what earlier runs left behind. Prints one line: WORKLOAD, requests,
# instructions per request. Needs valgrind (scripts/setup.sh installs it).
# LAYERS=FILE also writes the whole process's instructions per request by layer there, as JSON
# (bench/layers.py: every thread, the idle run's subtracted), for bench/report.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
workload=${2:-get}
seconds=${3:-5}
fdyno="$build/src/main/fdyno"
loadgen="$build/tools/loadgen/fdyno-loadgen"
work=$(mktemp -d /tmp/fdyno-instructions.XXXXXX)
trap 'pkill -f "data-dir $work" 2>/dev/null || true; [[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=fdyno AWS_SECRET_ACCESS_KEY=fdyno-secret
lg() {
  "$loadgen" --endpoint "http://127.0.0.1:$port" --keys 1000 --rows-per-key 10 --value-size 100 "$@"
}
wait_up() {
  for _ in $(seq 300); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
    sleep 0.2
  done
  echo "server did not start" >&2
  exit 1
}

"$fdyno" serve --listen "127.0.0.1:$port" --data-dir "$work/loaded" --log-level warn \
  >"$work/load.log" 2>&1 &
pid=$!
wait_up
lg --workload get --concurrency 32 --duration 1 --create-table --preload 10000 >/dev/null
kill -INT $pid
wait $pid || true

run() { # NAME: "load" runs the workload, "idle" only waits
  rm -rf "$work/data"
  cp -a "$work/loaded" "$work/data"
  valgrind --tool=callgrind --callgrind-out-file="$work/$1.out" "$fdyno" serve \
    --listen "127.0.0.1:$port" --data-dir "$work/data" --log-level warn >"$work/$1.log" 2>&1 &
  local vg=$!
  wait_up
  if [[ $1 == load ]]; then
    lg --workload "$workload" --concurrency 8 --duration "$seconds" --json >"$work/result.json"
  else
    sleep "$seconds"
  fi
  kill -INT $vg
  wait $vg || true
}
run load
run idle

# Inclusive counts of the entry functions of the network threads, the workers and the embedded
# engine's committer thread.
request_path() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    { grep -v "=>" | grep -E 'std_thread.h:std::thread::_State_impl<std::thread::_Invoker<std::tuple<fdyno::http::\(anonymous namespace\)::ServerImpl::Run|worker_pool.cc:fdyno::http::WorkerPool::Loop\(\)|std_thread.h:std::thread::_State_impl<std::thread::_Invoker<std::tuple<fdyno::kv::embedded::\(anonymous namespace\)::EmbeddedDatabase::Open' || true; } |
    awk '{gsub(",", "", $1); s += $1} END {print s + 0}'
}
load=$(request_path "$work/load.out")
idle=$(request_path "$work/idle.out")
if ((load == 0)); then
  # The thread entry functions are matched with their source files: without debug info
  # (a Release build) none is found, and 0 would look like a result.
  echo "request_instructions.sh: no request-path thread found in the profile; build $build" \
    "with debug info (scripts/build.sh's default, RelWithDebInfo)" >&2
  exit 1
fi
requests=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$work/result.json")
echo "$workload: $requests requests, $(((load - idle) / requests)) instructions per request"
if [[ -n ${LAYERS:-} ]]; then
  "$root/bench/layers.py" "$work/load.out" "$work/idle.out" "$requests" >"$LAYERS"
fi
