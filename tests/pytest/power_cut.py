"""Power cuts under the real server: every acknowledged write survives, none is applied twice, no
transaction is applied in part, and every index, item count and stream record stays exact.

`fdyno serve` (the binary users run, on its default durability: fsync) runs with its files going
through the power-loss file system (kv/engines/embedded/testing/power_loss.h; the test-only
switches of src/main/test_switches.h) and small RocksDB write buffers and levels, so that memtable
flushes, compactions, log rotations and deletions and MANIFEST writes come every few hundred
writes. Four writers (model_writer.TokenedWriter: PutItem, UpdateItem with SET, REMOVE and ADD,
DeleteItem, BatchWriteItem, TransactWriteItems with and without ClientRequestToken, PartiQL's
ExecuteStatement, BatchExecuteStatement and ExecuteTransaction) write over HTTP to a table with an
LSI, two GSIs, a NEW_AND_OLD_IMAGES stream and Time to Live on. Each cycle cuts the power:

* where: the process cuts it itself at the Nth file operation of a chosen stage (a write-ahead
  log append, a flush, a compaction, a log deletion, a MANIFEST or CURRENT update), before or after
  that operation; or the harness SIGKILLs it at a random moment;
* how: every file is cut back to what was synced, and what followed is dropped whole, torn at a
  512-byte or 4 KiB boundary, or torn with the rest zeros or random bytes;
* every third cycle the power is cut again while the server recovers from the cut.

Then a server without cuts settles each request the cut interrupted (each item its old or its new
image, a transaction all one or the other), resends the interrupted tokened requests (exactly one
effect), and compares the table, every index by Scan and by Query, the item counts and the stream
(each committed change exactly once, in order) with the writers' model, and stops cleanly.

Run: `scripts/faults.sh power-cut [--cycles N] [--seed S]`, or this file as a script. It prints
its result last, on one line, and exits non-zero on any loss or mismatch.
"""
import argparse
import collections
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time

import botocore.exceptions

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import FDYNO_BIN, Server  # noqa: E402
from model_writer import (INITIAL, TABLE, Background, Double, Lost, Partial,  # noqa: E402
                          TokenedWriter, check_indexes, check_item_counts, check_table,
                          create_table, key_of, wait_for)

# Flushes at 64 KiB, levels of 256 KiB, and the logs dropped past 128 KiB: every stage within
# a few seconds of writes.
SMALL_ENGINE = ("write_buffer_size=65536;max_bytes_for_level_base=262144;"
                "target_file_size_base=65536;max_total_wal_size=131072")
STAGES = ("append", "flush", "compaction", "log_delete", "manifest", "recovery")
# What each cycle aims at, in turn (None: a SIGKILL at a random moment), and the largest N of
# a self cut at the Nth operation of each stage.
PLANS = ("append", "flush", "compaction", None, "log_delete", "manifest")
MAX_NTH = {"append": 80, "flush": 16, "compaction": 16, "log_delete": 3, "manifest": 8,
           "recovery": 30}
TAILS = ("drop", "torn", "zeros", "garbage")
PLANNED_CUT_WAIT_S = 10  # a self cut that has not come by then is replaced by a SIGKILL
FAR_FUTURE = 4102444800  # a Time to Live in 2100: indexed for expiry, never expired


class Mismatch(Exception):
    """A check failed: kind is a field of the result line."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class PowerCutWriter(TokenedWriter):
    """A TokenedWriter whose items carry a far-future Time to Live a third of the time."""

    def random_item(self, key):
        item = super().random_item(key)
        if self.rng.randrange(3) == 0:
            item["exp"] = {"N": str(FAR_FUTURE)}
        return item


class StreamCheck:
    """Reads the table's stream from where it last stopped and checks that each key's records
    are its committed changes (the writers' `changes`), each exactly once, in order."""

    def __init__(self):
        self.after = {}  # shard id -> last sequence number read
        self.matched = collections.Counter()  # key -> changes matched by records so far
        self.records = 0

    def read(self, streams, arn):
        records, start = [], None
        for _ in range(1000):
            kw = {"ExclusiveStartShardId": start} if start else {}
            d = streams.describe_stream(StreamArn=arn, **kw)["StreamDescription"]
            for shard in d["Shards"]:
                records += self.read_shard(streams, arn, shard["ShardId"])
            start = d.get("LastEvaluatedShardId")
            if not start:
                return sorted(records, key=lambda r: int(r["dynamodb"]["SequenceNumber"]))
        raise AssertionError("DescribeStream does not end")

    def read_shard(self, streams, arn, shard):
        at = {"ShardIteratorType": "TRIM_HORIZON"}
        if shard in self.after:
            at = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": self.after[shard]}
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, **at)["ShardIterator"]
        out = []
        for _ in range(100_000):
            r = streams.get_records(ShardIterator=it, Limit=1000)
            out += r["Records"]
            it = r.get("NextShardIterator")
            if not r["Records"] or not it:
                break
        if out:
            self.after[shard] = out[-1]["dynamodb"]["SequenceNumber"]
        return out

    def check(self, streams, arn, changes, where):
        for record in self.read(streams, arn):
            d = record["dynamodb"]
            key = key_of(d["Keys"])
            i = self.matched[key]
            got = (record["eventName"], d.get("OldImage"), d.get("NewImage"))
            if i >= len(changes[key]):
                raise Mismatch("stream_mismatch", f"{where}: {key} has a record beyond its "
                                                  f"{len(changes[key])} committed changes: {got}")
            old, new = changes[key][i]
            want = ("INSERT" if old is None else "REMOVE" if new is None else "MODIFY", old, new)
            if got != want:
                raise Mismatch("stream_mismatch",
                               f"{where}: {key} change {i + 1}: record {got}, change {want}")
            self.matched[key] += 1
            self.records += 1
        for key, committed in changes.items():
            if self.matched[key] != len(committed):
                raise Mismatch("stream_mismatch", f"{where}: {key} has {self.matched[key]} "
                                                  f"records of its {len(committed)} changes")


class PowerCutRun:
    def __init__(self, workdir, seed, durability=None, log=print, plans=PLANS):
        self.dir, self.seed, self.durability, self.log = pathlib.Path(workdir), seed, durability, log
        self.dir.mkdir(parents=True, exist_ok=True)
        self.rng = random.Random(seed)
        self.plans = plans
        self.starts = 0
        self.cuts = collections.Counter()  # stage -> cuts that landed in it
        self.tails = collections.Counter()
        self.self_cuts = 0
        self.bytes_dropped = 0
        self.cycles = 0
        self.stream = StreamCheck()
        self.recent = collections.deque(maxlen=4)  # the last cuts, for a failure's message
        self.writers = []

    # ---- servers and cuts ----------------------------------------------------------------

    def start(self, cut=None):
        """A server over the data directory through the power-loss file system, cutting the power
        itself at `cut` ("STAGE:N[:after]") when given. None when it did so before it was
        ready: its cut is already applied."""
        self.starts += 1
        self.journal = str(self.dir / "journal")
        env = {"FDYNO_TEST_POWER_LOSS_JOURNAL": self.journal,
               "FDYNO_TEST_ROCKSDB_OPTIONS": SMALL_ENGINE, "FDYNO_TEST_POWER_CUT": cut or ""}
        server = Server(self.dir, [], env=env, durability=self.durability)
        server.planned_cut = cut
        try:
            server.wait_ready()
        except RuntimeError as e:
            if server.proc.poll() != -signal.SIGKILL:
                server.stop()
                raise Mismatch("lost", f"the server did not open after a power cut: {e}\n"
                                       f"the last cuts: {list(self.recent)}") from e
            self.cut(server)
            return None
        return server

    def cut(self, server):
        """Kills the server unless it cut the power itself, then cuts every file back to what
        reached the disk; returns where the cut landed."""
        if server.proc.poll() is None:
            server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(60)
        server.stop()
        if server.proc.returncode != -signal.SIGKILL:
            raise AssertionError(f"the server exited with {server.proc.returncode} instead of "
                                 f"being cut:\n{server.output()[-4000:]}")
        tail = self.rng.choice(TAILS)
        effect = self.apply(tail)
        self.recent.append({"planned": server.planned_cut, "tail": tail, **effect})
        self.tails[tail] += 1
        self.cuts[effect["stage"]] += 1
        self.self_cuts += effect["self_cut"]
        return effect

    def apply(self, tail):
        out = subprocess.run([FDYNO_BIN, "test-power-cut", self.journal, "--tail", tail,
                              "--seed", str(self.rng.getrandbits(32))],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"test-power-cut failed: {out.stderr}"
        effect = json.loads(out.stdout)
        self.bytes_dropped += effect["bytes_dropped"]
        return effect

    def random_cut(self, stage):
        return (f"{stage}:{1 + self.rng.randrange(MAX_NTH[stage])}"
                f"{':after' if self.rng.randrange(2) else ''}")

    # ---- one cycle ---------------------------------------------------------------------------

    def write_until_cut(self, plan):
        server = self.start(self.random_cut(plan) if plan else None)
        if server is None:
            return  # it cut the power while starting
        for w in self.writers:
            w.ddb = server.client()
        background = [Background(w) for w in self.writers]
        wait_s = PLANNED_CUT_WAIT_S if plan else self.rng.uniform(0.3, 3.0)
        deadline = time.monotonic() + wait_s
        while server.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self.cut(server)
        wait_for(lambda: all(b.crashed or b.error or not b.thread.is_alive()
                             for b in background), timeout=60)
        for b in background:
            b.stop()  # re-raises a writer's failure: an answer the model did not predict

    def cut_during_recovery(self):
        """Starts the server with a cut at the Nth operation of its recovery, until it opens;
        one that opens before the Nth is cut at once."""
        for _ in range(3):
            server = self.start(self.random_cut("recovery"))
            if server is not None:
                self.cut(server)
                return

    def check(self, where):
        server = self.start()
        try:
            ddb = server.client()
            try:
                for w in self.writers:
                    w.resolve(ddb)
                    w.ddb = ddb
            except Lost as e:
                raise Mismatch("lost", str(e)) from e
            except Partial as e:
                raise Mismatch("partial", str(e)) from e
            except Double as e:
                raise Mismatch("double", str(e)) from e
            except botocore.exceptions.ClientError as e:  # e.g. the table itself lost
                raise Mismatch("lost", f"{where}: resolving the interrupted requests: {e}") from e
            model = {k: v for w in self.writers for k, v in w.model.items()}
            changes = collections.defaultdict(list)
            for w in self.writers:
                changes.update(w.changes)
            for kind, run in (
                    ("lost", lambda: check_table(ddb, model, self.rng, where)),
                    ("index_mismatch", lambda: check_indexes(ddb, model, INITIAL, self.rng, where)),
                    ("index_mismatch", lambda: check_item_counts(ddb, model, INITIAL, where))):
                try:
                    run()
                except AssertionError as e:
                    raise Mismatch(kind, str(e)) from e
            self.stream.check(server.client("dynamodbstreams"), self.stream_arn, changes, where)
        finally:
            code = server.stop()
        assert code == 0, f"a clean stop exited with {code}:\n{server.output()[-4000:]}"
        self.apply("drop")  # a clean stop leaves nothing unsynced that matters

    # ---- the run -------------------------------------------------------------------------

    def setup(self):
        server = self.start()
        ddb = server.client()
        create_table(ddb, stream="NEW_AND_OLD_IMAGES")
        ddb.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": "exp"})
        self.stream_arn = ddb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
        self.writers = [PowerCutWriter(ddb, self.seed * 100 + t, [f"w{t}a", f"w{t}b", f"w{t}c"],
                                       f"seed {self.seed} writer {t}") for t in range(4)]
        assert server.stop() == 0
        self.apply("drop")

    def run(self, cycles):
        self.setup()
        for cycle in range(cycles):
            plan = self.plans[cycle % len(self.plans)]
            self.write_until_cut(plan)
            if cycle % 3 == 2:
                self.cut_during_recovery()
            self.cycles += 1
            self.check(f"seed {self.seed} after cycle {cycle + 1} ({plan or 'random'})")
            if (cycle + 1) % 10 == 0:
                self.log(self.summary())

    def missing_stages(self):
        """The stages this many cycles must have cut: every one from 30 cycles on (each plan is
        aimed at five times), else the three every cycle's writes reach."""
        if self.plans != PLANS or self.cycles < len(PLANS):
            return []
        want = STAGES if self.cycles >= 30 else ("append", "flush", "compaction")
        return [s for s in want if self.cuts[s] == 0]

    def acknowledged(self):
        return sum(w.acknowledged for w in self.writers)

    def summary(self):
        return (f"power-cut: {self.cycles} cycles, {self.acknowledged()} acknowledged requests, "
                f"{self.stream.records} stream records matched, "
                f"{sum(w.resends_after_crash for w in self.writers)} tokens resent after a cut, "
                f"{sum(self.cuts.values())} cuts ({self.self_cuts} by the server itself), tails "
                f"{dict(self.tails)}, {self.bytes_dropped} unsynced bytes dropped or torn, "
                f"other:{self.cuts['other']}")

    def result_line(self, failed=None):
        counts = collections.Counter({failed.kind: 1} if failed else {})
        stages = ",".join(f"{s}:{self.cuts[s]}" for s in STAGES)
        return (f"power-cut: cycles={self.cycles} acknowledged={self.acknowledged()} "
                f"lost={counts['lost']} double={counts['double']} partial={counts['partial']} "
                f"index_mismatch={counts['index_mismatch']} "
                f"stream_mismatch={counts['stream_mismatch']} stages={stages}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int,
                        default=200 if os.environ.get("FDYNO_FULL") == "1" else 10)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 20))
    parser.add_argument("--durability", choices=("fsync", "none"), default=None,
                        help="none: the control, which must lose writes")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--aim", default=None,
                        help="cut only at these stages, e.g. manifest,log_delete (random: a "
                             "SIGKILL at a random moment); the stage check is then off")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="fdyno_power_cut_")
    print(f"power-cut: seed {args.seed} (replay: --seed {args.seed}), {args.cycles} cycles, "
          f"binary {FDYNO_BIN}, directory {workdir}", flush=True)
    plans = PLANS
    if args.aim:
        plans = tuple(None if a == "random" else a for a in args.aim.split(","))
        unknown = [a for a in plans if a is not None and a not in MAX_NTH]
        if unknown:
            parser.error(f"--aim: unknown stages {unknown}")
    run = PowerCutRun(workdir, args.seed, args.durability,
                      log=lambda line: print(line, flush=True), plans=plans)
    began = time.monotonic()
    failed = None
    try:
        run.run(args.cycles)
    except Mismatch as e:
        failed = e
    except AssertionError as e:  # a writer's answer the model did not predict
        failed = Mismatch("lost", f"an answer the model did not predict: {e}")
    if failed:
        print(f"power-cut: FAILED after {run.cycles} cycles: {failed}", flush=True)
    elif run.missing_stages():
        print(f"power-cut: FAILED: no cut landed in {', '.join(run.missing_stages())}", flush=True)
    print(run.summary() + f", {(time.monotonic() - began) / max(run.cycles, 1):.2f} s a cycle",
          flush=True)
    print(run.result_line(failed), flush=True)
    return 1 if failed or run.missing_stages() else 0


if __name__ == "__main__":
    sys.exit(main())
