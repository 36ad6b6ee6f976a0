"""Secondary indexes across a crash and during an online backfill, black-box through boto3.

Random PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems and PartiQL write
requests (with conditions; model_writer.Writer) on a table with an LSI and two GSIs (one sparse, one
with an INCLUDE projection) are applied to a model of the base table. The server is killed with
SIGKILL and restarted on the same data directory; every index, read by Query (every partition, both
directions, paginated at small Limits) and by parallel Scan, must equal the index recomputed from
the model, before and after the crash. A GSI created by UpdateTable while a thread keeps writing
(also with a SIGKILL right after the UpdateTable) must equal the model once ACTIVE.

fdyno-specific (it kills and restarts the server it starts), so FDYNO_TEST_ENDPOINT is not used.
Seeds 1 and 2; FDYNO_SEED=n replays one.
"""
import random
import signal

import pytest

from conftest import Server
from model_writer import (INITIAL, LATE, SEEDS, TABLE, Background, Writer, attr_def, check_all,
                          create_table, gsi, key_of, wait_for)


def start(tmp_path):
    """A server on tmp_path/data (a restart on the same path reuses the data)."""
    server = Server(tmp_path, [])
    server.wait_ready()
    return server


def kill(server):
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(30)
    server.stop()


@pytest.mark.parametrize("seed", SEEDS)
def test_indexes_exact_after_sigkill(tmp_path, seed):
    rng = random.Random(seed * 7919)
    server = start(tmp_path)
    try:
        ddb = server.client()
        create_table(ddb)
        writer = Writer(ddb, seed, ["p0", "p1", "p2", "p3"], f"seed {seed}")
        for i in range(250):
            writer.step()
            if i % 125 == 124:
                check_all(ddb, writer.model, INITIAL, rng, f"seed {seed} before the crash")
    finally:
        kill(server)
    server = start(tmp_path)  # same data directory, a new process
    try:
        ddb = server.client()
        writer.ddb = ddb
        check_all(ddb, writer.model, INITIAL, rng, f"seed {seed} after SIGKILL and restart")
        for _ in range(120):
            writer.step()
        check_all(ddb, writer.model, INITIAL, rng, f"seed {seed} after more writes")
    finally:
        server.stop()


@pytest.mark.parametrize("seed", SEEDS)
def test_indexes_exact_after_sigkill_during_writes(tmp_path, seed):
    """Three writers are busy when the server is killed: whatever the interrupted requests did,
    each item is its old or its new image (a transaction all one or the other), and every index
    agrees with the items."""
    rng = random.Random(seed * 15485863)
    server = start(tmp_path)
    writers, background = [], []
    try:
        ddb = server.client()
        create_table(ddb)
        writers = [Writer(server.client(), seed * 100 + t, [f"k{t}a", f"k{t}b"],
                          f"seed {seed} writer {t}") for t in range(3)]
        background = [Background(w) for w in writers]
        for b in background:
            b.await_steps(60)
    finally:
        kill(server)
        # Each writer goes on until a request fails for want of a server.
        wait_for(lambda: all(b.crashed or b.error or not b.thread.is_alive()
                             for b in background), timeout=30)
        for b in background:
            b.stop()
    assert all(b.crashed for b in background)
    server = start(tmp_path)
    try:
        ddb = server.client()
        for w in writers:
            w.resolve(ddb)
            w.ddb = ddb
        model = {k: v for w in writers for k, v in w.model.items()}
        check_all(ddb, model, INITIAL, rng, f"seed {seed} after SIGKILL during writes")
        for w in writers:
            for _ in range(40):
                w.step()
        model = {k: v for w in writers for k, v in w.model.items()}
        check_all(ddb, model, INITIAL, rng, f"seed {seed} after more writes")
    finally:
        server.stop()


def bulk_load(ddb, n_partitions=30, per_partition=20):
    """Items on partitions b0.. (written once, 25 per BatchWriteItem), so the backfill takes
    several pages. Returns their model."""
    rng = random.Random(5)
    model = {}
    writer = Writer(ddb, 5, [], "bulk")
    items = []
    for p in range(n_partitions):
        for s in range(per_partition):
            item = writer.random_item((f"b{p}", s))
            item["h"] = {"S": f"h{rng.randrange(3)}"}
            items.append(item)
            model[key_of(item)] = item
    for i in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]
        while requests:
            r = ddb.batch_write_item(RequestItems={TABLE: requests})
            requests = r.get("UnprocessedItems", {}).get(TABLE, [])
    return model


def create_late(ddb):
    ddb.update_table(
        TableName=TABLE, AttributeDefinitions=[attr_def("h"), attr_def("x")],
        GlobalSecondaryIndexUpdates=[{"Create": LATE.spec()}])


@pytest.mark.parametrize("crash", [False, True], ids=["online", "sigkill-after-update-table"])
def test_gsi_backfill_with_concurrent_writes(tmp_path, crash):
    seed = SEEDS[0]
    rng = random.Random(seed * 104729)
    server = start(tmp_path)
    background = None
    try:
        ddb = server.client()
        create_table(ddb)
        bulk = bulk_load(ddb)
        writer = Writer(server.client(), seed * 1000, ["t0a", "t0b"], f"seed {seed} thread")
        background = Background(writer)
        background.await_steps(20)
        create_late(ddb)
        assert gsi(ddb, LATE.name)["IndexStatus"] in ("CREATING", "ACTIVE")
        if crash:
            background.stop()
            background = None
            kill(server)
            server = start(tmp_path)
            ddb = server.client()
            writer.ddb = server.client()
            background = Background(writer)
        wait_for(lambda: gsi(ddb, LATE.name)["IndexStatus"] == "ACTIVE")
        assert not gsi(ddb, LATE.name).get("Backfilling", False)
        background.await_steps(20)  # writes to the ACTIVE index
        background.stop()
        background = None
        model = {**bulk, **writer.model}
        check_all(ddb, model, INITIAL + [LATE], rng, f"seed {seed} after the backfill")
    finally:
        if background is not None:
            background.done.set()
            background.thread.join()
        server.stop()
