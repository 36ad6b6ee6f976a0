#!/usr/bin/env python3
"""replication.py [BUILD_DIR] [SECONDS=5]: what a global table's replica costs PutItem, and how far
behind the replica is.

Starts fdyno (--durability none: the CPU cost is measured, not the disk's; --replication-delay 0)
with three tables of the load generator's shape: "regional", "streamed" (a NEW_AND_OLD_IMAGES
stream, which a global table has) and "global" with a replica in eu-west-1. Then:
  * PutItem throughput on each, in turn, three rounds of SECONDS at 16 connections, and the
    ratios of each round to "regional" (the baselines run in the same command). The replica's
    writes are made by the same server, on the same cores: a global table on one machine does
    each write twice, and its stream records twice;
  * replication lag: PutItem on "global" at 1 and at 16 connections (a lower and a higher write
    rate), and the p50 and p99 of fdyno_replication_lag_seconds over the changes of that run
    (the age of each change when applied to the replica, from the histogram's buckets: upper
    bounds).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import boto3

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
os.environ.setdefault("AWS_ACCESS_KEY_ID", "fdyno")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "fdyno-secret")

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
endpoint = f"http://127.0.0.1:{port}"
work = tempfile.mkdtemp(prefix="fdyno-replication-bench.")
log = open(os.path.join(work, "fdyno.log"), "w")
server = subprocess.Popen(
    [os.path.join(build, "src/main/fdyno"), "serve", "--listen", f"127.0.0.1:{port}",
     "--data-dir", os.path.join(work, "data"), "--durability", "none", "--log-level", "warn",
     "--replication-delay", "0"], stdout=log, stderr=subprocess.STDOUT)


def loadgen(table, concurrency, duration, *extra):
    out = subprocess.run(
        [os.path.join(build, "tools/loadgen/fdyno-loadgen"), "--endpoint", endpoint,
         "--table", table, "--workload", "put", "--concurrency", str(concurrency),
         "--duration", str(duration), "--json", *extra],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def metrics():
    with urllib.request.urlopen(endpoint + "/metrics") as r:
        return json.load(r)


def lag_buckets():
    for h in metrics()["histograms"]:
        if h["name"] == "fdyno_replication_lag_seconds":
            return [(b["le_us"], b["count"]) for b in h["buckets"]]
    raise SystemExit("no fdyno_replication_lag_seconds histogram")


def applied():
    return sum(c["value"] for c in metrics()["counters"]
               if c["name"] == "fdyno_replication_applied")


def percentile(before, after, q):
    counts = [(le, a - b) for (le, a), (_, b) in zip(after, before)]
    total = counts[-1][1]
    for le, c in counts:
        if c >= q * total:
            return le
    return counts[-1][0]


def ms(le):
    return "over 5 s" if le == "+Inf" else f"<= {le / 1000:g} ms"


try:
    for _ in range(200):
        try:
            urllib.request.urlopen(endpoint + "/")
            break
        except OSError:
            time.sleep(0.05)
    for table in ("regional", "streamed", "global"):
        loadgen(table, 1, 0.2, "--create-table")
    ddb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    ddb.update_table(TableName="streamed", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    ddb.update_table(TableName="global", ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    while ddb.describe_table(TableName="global")["Table"]["TableStatus"] != "ACTIVE":
        time.sleep(0.1)

    print(f"PutItem, 16 connections, {seconds:g} s each, --durability none")
    for round_ in range(3):
        regional = loadgen("regional", 16, seconds)["throughput"]
        streamed = loadgen("streamed", 16, seconds)["throughput"]
        global_ = loadgen("global", 16, seconds)["throughput"]
        print(f"  round {round_ + 1}: regional {regional:,.0f}/s  streamed {streamed:,.0f}/s "
              f"({streamed / regional:.2f})  with a replica {global_:,.0f}/s "
              f"({global_ / regional:.2f})")

    print("replication lag (age of a change when applied to the replica; --replication-delay 0)")
    for concurrency in (1, 16):
        before = lag_buckets()
        run = loadgen("global", concurrency, seconds)
        # Until the replica has every change of the run.
        last = -1
        while applied() != last:
            last = applied()
            time.sleep(0.5)
        after = lag_buckets()
        print(f"  {concurrency:2d} connections: {run['throughput']:,.0f} writes/s  "
              f"p50 {ms(percentile(before, after, 0.5))}  p99 {ms(percentile(before, after, 0.99))}")
finally:
    server.terminate()
    server.wait()
    log.close()
    subprocess.run(["rm", "-rf", work])
