#!/usr/bin/env python3
"""startup.py ROUNDS 'LABEL|BINARY|FLAGS' ...: how fast fdyno starts, and how small it idles.

For each configuration, in alternating rounds of one run (so machine load falls on all alike):
the time from exec of `BINARY serve --listen 127.0.0.1:<free port> --data-dir <fresh dir> FLAGS`
to the first answered `GET /`, and the resident memory (RSS, and PSS, which shares library pages
among the processes using them) one second later, idle. Prints medians with their range, and
each configuration's median start time as a ratio to the first configuration's, and where the
resident memory is: pages of the binary itself (mapped from the page cache), of the shared
libraries, and anonymous memory (heap, allocator, thread stacks, relocated data).
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(port):
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
                c.sendall(request)
                if c.recv(4096).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            time.sleep(0.0005)


def memory_mb(pid, binary):
    """RSS, PSS, and RSS split into the binary's file pages, libraries' and anonymous ones, MB."""
    figures = {"Rss": 0, "Pss": 0, "binary": 0, "libraries": 0, "anonymous": 0}
    real = os.path.realpath(binary)
    path = ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                path = head[5] if len(head) > 5 else ""
                continue
            name, value = head[0].rstrip(":"), head[1]
            if name in ("Rss", "Pss"):
                figures[name] += int(value)
            # A file mapping's pages the process wrote (relocations) are anonymous ones.
            kind = ("binary" if path == real else "libraries") if path.startswith("/") else None
            if name == "Rss" and kind:
                figures[kind] += int(value)
            elif name == "Anonymous":
                figures["anonymous"] += int(value)
                if kind:
                    figures[kind] -= int(value)
    return {k: v / 1024 for k, v in figures.items()}


def once(binary, flags):
    port = free_port()
    data = tempfile.mkdtemp(prefix="fdyno-startup-")
    cmd = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data + "/data"] + flags
    start = time.perf_counter()
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first_answer(port)
        elapsed_ms = (time.perf_counter() - start) * 1000
        time.sleep(1.0)
        memory = memory_mb(server.pid, binary)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data)
    return elapsed_ms, memory


def main():
    rounds = int(sys.argv[1])
    configs = [c.split("|") for c in sys.argv[2:]]
    results = {label: [] for label, _, _ in configs}
    for _ in range(rounds):
        for label, binary, flags in configs:
            results[label].append(once(binary, flags.split()))
    base = None
    for label, _, _ in configs:
        starts = [start for start, _ in results[label]]
        median = statistics.median(starts)
        base = base or median

        def mb(name):
            return statistics.median(memory[name] for _, memory in results[label])

        print(f"{label:28s} start ms median {median:6.1f} (min {min(starts):5.1f} max "
              f"{max(starts):6.1f}) ratio {median / base:4.2f}; idle RSS MB median "
              f"{mb('Rss'):5.1f}, PSS {mb('Pss'):5.1f}; RSS of the binary {mb('binary'):4.1f}, "
              f"libraries {mb('libraries'):4.1f}, anonymous {mb('anonymous'):4.1f}")

if __name__ == "__main__":
    main()
