#!/usr/bin/python3
"""layers.py LOAD.out IDLE.out REQUESTS: a callgrind profile's instructions per request by layer.

The whole process (every thread: network threads, workers, the engine's committer and RocksDB's
background threads), the idle run's count subtracted per layer, divided by the requests the
load run answered. Each function's own instructions (not inclusive) go to the layer of its
symbol's namespace (fdyno::http, fdyno::api, ...), else of its source file, else to the library
it belongs to: RocksDB with its compression libraries (the engine), RapidJSON (JSON), Boost (Asio and Beast: the network), and
everything else (the C and C++ runtime, the allocator, system call wrappers) as "runtime".
Prints one JSON object {layer: instructions per request}."""
import json
import re
import subprocess
import sys

LAYERS = ["http", "api", "expr", "store", "model", "kv", "base", "rocksdb", "json", "network",
          "runtime"]
FDYNO = {"http": "http", "mcp": "http", "s3": "http", "api": "api", "expr": "expr",
         "partiql": "expr", "store": "store", "workers": "store", "model": "model", "kv": "kv",
         "main": "base", "base": "base"}


def layer_of(location):
    """location: 'file:symbol' as callgrind_annotate prints it."""
    file, _, symbol = location.partition(":")
    m = re.search(r"fdyno::(\w+)::", symbol)
    if m and m.group(1) in FDYNO:
        return FDYNO[m.group(1)]
    m = re.search(r"/src/(\w+)/", file)
    if m and m.group(1) in FDYNO:
        return FDYNO[m.group(1)]
    lowered = location.lower()
    if any(name in lowered for name in ("rocksdb", "snappy", "lz4", "zstd")):
        return "rocksdb"  # the engine and the compression libraries it calls
    if "rapidjson" in symbol or "rapidjson" in file:
        return "json"
    if "boost" in symbol or "boost" in file:
        return "network"
    return "runtime"


def by_layer(profile):
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no",
                          profile], capture_output=True, text=True, check=True).stdout
    totals = dict.fromkeys(LAYERS, 0)
    # Only the "Ir  file:function" listing: one line per function, until the blank line after it.
    listing = out.split("file:function", 1)[1].split("\n", 2)[2]
    for line in listing.splitlines():
        if not line.strip():
            break
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)(?:\s+\[[^]]*\])?$", line)
        if m:
            totals[layer_of(m.group(2))] += int(m.group(1).replace(",", ""))
    return totals


def main():
    load, idle, requests = by_layer(sys.argv[1]), by_layer(sys.argv[2]), int(sys.argv[3])
    print(json.dumps({k: max(0, load[k] - idle[k]) / requests for k in LAYERS}))


if __name__ == "__main__":
    main()
