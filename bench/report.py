#!/usr/bin/python3
"""report.py [--sweep FILE] [--layers FILE] [--out DIR]: the benchmark results as PNG charts
(Debian's python3-matplotlib) and as Markdown tables on standard output, for bench/README.md.

  --sweep   bench/sweep.sh's JSON lines (default bench/results/sweep.jsonl): throughput.png and
            p99.png, requests per second and p99 latency against connections, one panel per
            operation, fdyno beside dynalite and the nginx floor.
  --size    bench/size_sweep.sh's JSON lines (default bench/results/size.jsonl): size.png, p50
            and p99 latency and throughput against the table's items, per operation.
  --layers  a JSON object {operation: {layer: instructions per request}} (bench/
            instructions_by_layer.sh): instructions.png, one stacked bar per operation.
  --floor   nginx's instructions per answer {operation: n} (bench/nginx_instructions.sh,
            default bench/results/nginx_instructions.json): a mark on each bar, a column.
  --out     where the PNGs go (default bench/charts).
"""
import argparse
import json
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPERATIONS = [("get", "GetItem"), ("put", "PutItem (fsync)"), ("query", "Query (10 items)")]
SERVERS = [("fdyno", "#2563eb"), ("dynalite", "#dc2626"), ("nginx", "#6b7280")]
LAYER_COLORS = {"http": "#2563eb", "network": "#93c5fd", "api": "#16a34a", "expr": "#86efac",
                "store": "#9333ea", "model": "#c4b5fd", "kv": "#ea580c", "rocksdb": "#fdba74",
                "json": "#0891b2", "base": "#a3a3a3", "runtime": "#525252"}


def load_sweep(path):
    runs = defaultdict(dict)  # (operation, server) -> {connections: result}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                runs[(r["operation"], r["server"])][r["concurrency"]] = r
    return runs


def sweep_chart(runs, field, ylabel, path, log=False):
    fig, axes = plt.subplots(1, len(OPERATIONS), figsize=(13, 3.8))
    for ax, (op, title) in zip(axes, OPERATIONS):
        for server, color in SERVERS:
            points = sorted(runs.get((op, server), {}).items())
            if not points:
                continue
            label = "nginx (fixed answer)" if server == "nginx" else server
            ax.plot([c for c, _ in points], [r[field] for _, r in points], marker="o",
                    color=color, label=label)
        ax.set_title(title)
        ax.set_xlabel("connections")
        ax.set_xscale("log", base=2)
        ticks = sorted({c for (o, _), points in runs.items() if o == op for c in points})
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        if log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def sweep_table(runs):
    print("| operation | connections | fdyno req/s | dynalite req/s | nginx req/s "
          "| fdyno/dynalite | fdyno/nginx | fdyno p99 ms | dynalite p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def cell(r, field, fmt):
        return format(r[field], fmt) if r else "-"

    for op, title in OPERATIONS:
        fdyno = runs.get((op, "fdyno"), {})
        for n in sorted(fdyno):
            f = fdyno[n]
            d = runs.get((op, "dynalite"), {}).get(n)
            g = runs.get((op, "nginx"), {}).get(n)
            ratios = [f"{f['throughput'] / o['throughput']:.2f}" if o else "-" for o in (d, g)]
            print(f"| {title} | {n} | {f['throughput']:.0f} | {cell(d, 'throughput', '.0f')} | "
                  f"{cell(g, 'throughput', '.0f')} | {ratios[0]} | {ratios[1]} | "
                  f"{f['p99_ms']:.2f} | {cell(d, 'p99_ms', '.2f')} |")


SIZE_OPERATIONS = [("get", "GetItem"), ("query", "Query (10 items)"), ("put", "PutItem (fsync)")]


def load_size(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def size_chart(rows, path):
    fig, (lat, rate) = plt.subplots(1, 2, figsize=(12, 3.8))
    for (op, title), (_, color) in zip(SIZE_OPERATIONS, SERVERS):
        points = sorted((r["items"], r) for r in rows if r["workload"] == op)
        if not points:
            continue
        items = [n for n, _ in points]
        lat.plot(items, [r["p99_ms"] for _, r in points], marker="o", color=color,
                 label=f"{title} p99")
        lat.plot(items, [r["p50_ms"] for _, r in points], marker=".", linestyle="--",
                 color=color, label=f"{title} p50")
        rate.plot(items, [r["throughput"] for _, r in points], marker="o", color=color,
                  label=title)
    for ax, label in ((lat, "latency (ms)"), (rate, "requests per second")):
        ax.set_xscale("log")
        ax.set_xlabel("items in the table")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def size_table(rows):
    print("| operation | items | req/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for op, title in SIZE_OPERATIONS:
        for r in sorted((r for r in rows if r["workload"] == op), key=lambda r: r["items"]):
            print(f"| {title} | {r['items']:,} | {r['throughput']:.0f} | {r['p50_ms']:.2f} | "
                  f"{r['p99_ms']:.2f} |")


def layers_chart(layers, floor, path):
    ops = list(layers)
    fig, ax = plt.subplots(figsize=(8, 4))
    bottoms = [0.0] * len(ops)
    for layer, color in LAYER_COLORS.items():
        values = [layers[op].get(layer, 0) for op in ops]
        if not any(values):
            continue
        ax.bar(ops, values, bottom=bottoms, color=color, label=layer)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    for i, op in enumerate(ops):
        if op in floor:
            ax.hlines(floor[op], i - 0.4, i + 0.4, colors="black", linewidth=2,
                      label="nginx, fixed answer" if i == 0 else None)
    ax.set_ylabel("instructions per request")
    ax.legend(ncol=2, fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def layers_table(layers, floor):
    columns = [c for c in LAYER_COLORS if any(v.get(c, 0) for v in layers.values())]
    print("| operation | total | nginx | total / nginx | " + " | ".join(columns) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(columns))
    for op, v in layers.items():
        total = sum(v.values())
        nginx = f"{floor[op]:,}" if op in floor else "-"
        ratio = f"{total / floor[op]:.1f}x" if op in floor else "-"
        print(f"| {op} | {total:,.0f} | {nginx} | {ratio} | " +
              " | ".join(f"{v.get(c, 0):,.0f}" for c in columns) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sweep", default=os.path.join(ROOT, "bench", "results", "sweep.jsonl"))
    p.add_argument("--size", default=os.path.join(ROOT, "bench", "results", "size.jsonl"))
    p.add_argument("--layers")
    p.add_argument("--floor",
                   default=os.path.join(ROOT, "bench", "results", "nginx_instructions.json"))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "charts"))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if os.path.exists(args.sweep):
        runs = load_sweep(args.sweep)
        sweep_chart(runs, "throughput", "requests per second",
                    os.path.join(args.out, "throughput.png"))
        sweep_chart(runs, "p99_ms", "p99 latency (ms)", os.path.join(args.out, "p99.png"),
                    log=True)
        sweep_table(runs)
    if os.path.exists(args.size):
        rows = load_size(args.size)
        size_chart(rows, os.path.join(args.out, "size.png"))
        print()
        size_table(rows)
    if args.layers:
        with open(args.layers) as f:
            layers = json.load(f)
        floor = {}
        if os.path.exists(args.floor):
            with open(args.floor) as f:
                floor = json.load(f)
        layers_chart(layers, floor, os.path.join(args.out, "instructions.png"))
        print()
        layers_table(layers, floor)


if __name__ == "__main__":
    main()
