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
import uuid

from conftest import Server
from model_writer import (INITIAL, PARTIQL_STEPS, TOKEN_WINDOW_MS, Background, Writer, check_all,
                          create_table, key_item, wait_for)

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


class SoakWriter(Writer):
    """A Writer that also sends tokened TransactWriteItems adding to a counter, twice each."""

    def __init__(self, ddb, seed, pks, label, clock):
        super().__init__(ddb, seed, pks, label)
        self.clock = clock
        self.acknowledged = 0
        self.tokened = None  # (request, image it leaves, server ms of its first send)

    def now_ms(self):
        return self.clock.now_ms()

    def send(self, call):
        r = super().send(call)
        self.acknowledged += 1
        return r

    def step(self):
        if self.rng.randrange(100) >= 15:
            self.tokened = None
            return super().step()
        self.steps += 1
        key = self.random_key()
        self.current = [key]
        delta = 1 + self.rng.randrange(9)
        request = {
            "ClientRequestToken": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "TransactItems": [{"Update": {
                "TableName": "model_table", "Key": key_item(key), "UpdateExpression": "ADD c :d",
                "ExpressionAttributeValues": {":d": {"N": str(delta)}}}}]}
        old = self.model.get(key)
        new = dict(old) if old is not None else key_item(key)
        new["c"] = {"N": str(int(new.get("c", {"N": "0"})["N"]) + delta)}
        self.tokened = (request, new, self.clock.now_ms())
        self.pending, self.atomic = {key: (old, new)}, True
        self.send(lambda: self.ddb.transact_write_items(**request))
        self.set(key, new)
        self.note(key, f"tokened ADD c {delta}", True)
        # The same request again: replayed from the token record, no second effect.
        self.pending = {key: (new, new)}
        self.send(lambda: self.ddb.transact_write_items(**request))
        self.note(key, f"tokened ADD c {delta} resent", True)
        self.tokened = None
        self.answered["tokened_add_step"] += 1

    def resolve(self, ddb):
        tokened, self.tokened = self.tokened, None
        super().resolve(ddb)
        if tokened is None:
            return
        request, new, sent_ms = tokened
        if self.clock.now_ms() - sent_ms > TOKEN_WINDOW_MS - 60_000:
            return  # too near the end of the token's window to count on a replay
        # Resent after the crash: applied now if the interrupted attempt did not commit, a
        # replay if it did. Either way the item holds exactly one effect.
        ddb.transact_write_items(**request)
        key = self.current[0]
        actual = ddb.get_item(TableName="model_table", Key=key_item(key),
                              ConsistentRead=True).get("Item")
        assert actual == new, f"{self.where()}{key} after resending a token: {actual} != {new}"
        self.set(key, new)
        self.resends_after_crash += 1


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
        writers = [SoakWriter(server.client(), SEED * 100 + t, [f"w{t}a", f"w{t}b", f"w{t}c"],
                              f"seed {SEED} writer {t}", clock) for t in range(4)]
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


def merged(writers):
    return {k: v for w in writers for k, v in w.model.items()}
