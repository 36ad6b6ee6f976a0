"""Soak: the real server under mixed durable write load while its wall clock runs fast, killed
with SIGKILL and restarted along the way; every acknowledged write is checked against a model.

The server runs with the default durability (fsync) and FDYNO_TEST_CLOCK_RATE, so its wall clock
runs RATE times as fast as real time while deadlines keep real time: operation receipts (kept 10
minutes, cleared a minute-bucket at a time by the writes that follow), ClientRequestToken records
(10-minute window) and the token collector (DYNODB_TXN_TOKEN_GC_INTERVAL) go through many
lifetimes. Each restart continues the same fast timeline (FDYNO_TEST_CLOCK_START_MS).

Four writers (model_writer.Writer: PutItem, UpdateItem, DeleteItem, BatchWriteItem and
TransactWriteItems with conditions, and PartiQL's ExecuteStatement, BatchExecuteStatement and
tokened ExecuteTransaction writes, on a table with an LSI and two GSIs) and tokened
TransactWriteItems that ADD to a counter and are resent with the same token (a replay: no second
effect) write over their own keys until the server is killed. A request the kill interrupted is
settled from the items after the restart (each item its old or its new image, a transaction all one
or the other); an interrupted tokened request (either kind) is then resent, and must leave exactly
one effect. The table, every index and the item counts are compared with the model every few cycles,
at the end, and after a final clean restart.

Short form (default): 45 s, about 3 hours of the server's clock. FDYNO_FULL=1: 400 s, about 27
hours. FDYNO_SOAK_SECONDS=n sets the duration; FDYNO_SEED=n the seed. fdyno-specific (it kills
the server it starts).
"""
import collections
import os
import random
import signal
import time

from conftest import Server
from model_writer import (INITIAL, PARTIQL_STEPS, Background, TokenedWriter, check_all,
                          create_table, wait_for)

RATE = 240  # the server's wall clock runs this many times as fast as real time
FULL = os.environ.get("FDYNO_FULL") == "1"
DURATION_S = float(os.environ.get("FDYNO_SOAK_SECONDS", 400 if FULL else 45))
SEED = int(os.environ.get("FDYNO_SEED", 1))


class FastClock:
    """The server's wall clock, as the harness reckons it: RATE times real time from now on."""

    def __init__(self):
        self.start_ms = int(time.time() * 1000)
        self.origin = time.monotonic()

    def now_ms(self):
        return self.start_ms + int((time.monotonic() - self.origin) * 1000 * RATE)


def start(tmp_path, clock):
    env = {"FDYNO_TEST_CLOCK_RATE": str(RATE), "FDYNO_TEST_CLOCK_START_MS": str(clock.now_ms()),
           "DYNODB_TXN_TOKEN_GC_INTERVAL": "0.2", "DYNODB_TXN_TOKEN_GC_MAX_SCAN": "50"}
    server = Server(tmp_path, [], env=env)
    server.wait_ready()
    assert "test clock" in server.output(), "the server did not take the fast clock"
    return server


def kill(server):
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(30)
    server.stop()


def test_soak_fast_clock_sigkill_and_model(tmp_path):
    rng = random.Random(SEED)
    clock = FastClock()
    begin = time.monotonic()
    server = start(tmp_path, clock)
    try:  # a failure stops the server it leaves running
        ddb = server.client()
        create_table(ddb)
        writers = [TokenedWriter(server.client(), SEED * 100 + t, [f"w{t}a", f"w{t}b", f"w{t}c"],
                                 f"seed {SEED} writer {t}", clock.now_ms) for t in range(4)]
        cycles = 0
        while time.monotonic() - begin < DURATION_S:
            background = [Background(w) for w in writers]
            time.sleep(rng.uniform(1.0, 5.0))
            kill(server)
            wait_for(lambda: all(b.crashed or b.error or not b.thread.is_alive()
                                 for b in background), timeout=60)
            for b in background:
                b.stop()  # re-raises a writer's failure
            cycles += 1
            server = start(tmp_path, clock)
            ddb = server.client()
            for w in writers:
                w.resolve(ddb)
                w.ddb = server.client()
            if cycles % 4 == 0:
                check_all(ddb, merged(writers), INITIAL, rng, f"seed {SEED} after cycle {cycles}")
        check_all(ddb, merged(writers), INITIAL, rng, f"seed {SEED} at the end")
        server.stop()
        server = start(tmp_path, clock)
        check_all(server.client(), merged(writers), INITIAL, rng,
                  f"seed {SEED} after a clean restart")
    finally:
        server.stop()
    hours = (clock.now_ms() - clock.start_ms) / 3_600_000
    answered = sum((w.answered for w in writers), collections.Counter())
    print(f"soak: {cycles} SIGKILL cycles, {sum(w.acknowledged for w in writers)} acknowledged "
          f"requests, {sum(answered.values())} steps answered "
          f"({', '.join(f'{k} {v}' for k, v in sorted(answered.items()))}; PartiQL "
          f"{sum(answered[k] for k in PARTIQL_STEPS)}), "
          f"{sum(w.resends_after_crash for w in writers)} tokens resent after a crash "
          f"({sum(w.statement_resends_after_crash for w in writers)} ExecuteTransaction), "
          f"{len(merged(writers))} items, {hours:.1f} hours of server clock "
          f"({hours * 6:.0f} receipt and token lifetimes)")
    assert hours >= (20 if FULL else 2.5), "the server clock did not run fast enough"
    # What the soak exists for happened in this run: kills, and tokened requests a kill
    # interrupted, resent after the restart (each then checked to have applied once).
    assert cycles >= (50 if FULL else 5), f"only {cycles} kills"
    assert sum(w.resends_after_crash for w in writers) > 0, "no token was resent after a kill"


def merged(writers):
    return {k: v for w in writers for k, v in w.model.items()}
