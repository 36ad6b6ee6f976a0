"""Vector indexes across SIGKILL, black box: killed while writers are busy, every acknowledged
write is in the table and the index equals what the items say; killed during the online backfill
of an index added by UpdateTable, the backfill resumes where it was (it does not start again)
and the index ends ACTIVE and exact; with searches going through the approximate graph, killed
while writers and a searcher are busy, SearchVectors answers what brute force over the items
says, after the restart and after more writes.

The index is read through SearchVectors: its HASH partitions hold at most 100 items, so a search
of a partition with TopK 100 returns all of its entries. Exact means: the partition's results are
exactly the items with that HASH value and a valid vector, each with the score its item's vector
gives (a stale entry scores differently; an entry without its item fails the search), in order.

fdyno-specific (it kills and restarts the server it starts). Seeds 1 and 2; FDYNO_SEED=n replays
one.
"""
import json
import math
import os
import random
import re
import threading
import time

import pytest
import requests

from conftest import Server
from signing import call
from vector_calls import ok, search, vec, vector_indexes

SEEDS = [int(os.environ["FDYNO_SEED"])] if os.environ.get("FDYNO_SEED") else [1, 2]
TABLE = "vectors"
DIMS = 8
PARTS = [f"c{i:02d}" for i in range(60)]  # HASH values; the writers use the first 8
INDEX = {"IndexName": "vix", "VectorAttribute": {"AttributeName": "v"}, "Dimensions": DIMS,
         "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "ALL"},
         "SearchSchema": [{"AttributeName": "cat", "SearchSchemaElementType": "HASH"}]}


def start(tmp_path):
    """A server on tmp_path/data (a restart on the same path reuses the data)."""
    return Server(tmp_path, []).wait_ready()


def create(s, with_index=True):
    body = {"TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "cat", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    if with_index:
        body["VectorIndexes"] = [INDEX]
    else:
        body["AttributeDefinitions"] = body["AttributeDefinitions"][:1]
    ok(s, "CreateTable", body)


def scan(s):
    items, start_key = {}, None
    while True:
        body = {"TableName": TABLE, "ConsistentRead": True}
        if start_key:
            body["ExclusiveStartKey"] = start_key
        out = ok(s, "Scan", body)
        for it in out["Items"]:
            items[it["pk"]["S"]] = it
        start_key = out.get("LastEvaluatedKey")
        if not start_key:
            return items


def vector_of(item):
    """The float values of a valid vector attribute (exact: the writers use float32 values)."""
    v = item.get("v", {}).get("L")
    if v is None or len(v) != DIMS or any("N" not in e for e in v):
        return None
    return [float(e["N"]) for e in v]


def check_index(s, rng, what):
    """The index equals what the items say (module docstring)."""
    items = scan(s)
    expected = {c: {} for c in PARTS}
    for pk, it in items.items():
        v = vector_of(it)
        if v is not None and it.get("cat", {}).get("S") in expected:
            expected[it["cat"]["S"]][pk] = v
    for cat, members in expected.items():
        assert len(members) <= 100, f"{what}: partition {cat} is too big to check in one search"
        q = [rng.randint(-32, 32) / 8 for _ in range(DIMS)]
        status, out = search(s, TABLE, q, 100, SearchConditionExpression="cat = :c",
                             ExpressionAttributeValues={":c": {"S": cat}})
        assert status == 200, f"{what}: {out}"
        results = out["SearchResults"]
        got = [r["Item"]["pk"]["S"] for r in results]
        assert sorted(got) == sorted(members), f"{what}: partition {cat}"
        for r in results:
            pk = r["Item"]["pk"]["S"]
            assert r["Item"] == items[pk], f"{what}: {pk}"
            want = math.sqrt(sum((a - b) ** 2 for a, b in zip(q, members[pk])))
            assert math.isclose(r["Score"], want, rel_tol=1e-9, abs_tol=1e-9), f"{what}: {pk}"
        scores = [r["Score"] for r in results]
        assert scores == sorted(scores), f"{what}: partition {cat} out of order"
    count = vector_indexes(s, TABLE)[0]["ItemCount"]
    assert count == sum(len(m) for m in expected.values()), what
    return items


class Writer:
    """Random writes over its own keys, through every write path, each applied to `model` once
    acknowledged. A request the server did not answer (it was killed) leaves its keys uncertain."""

    def __init__(self, server, seed, keys):
        self.server, self.rng, self.keys = server, random.Random(seed), keys
        self.model = {}  # pk -> item, or None when deleted; acknowledged writes only
        self.uncertain = set()
        self.steps = 0
        self.crashed = False
        self.indexed = True  # whether the table has the vector index

    def vector(self):
        return vec([self.rng.randint(-32, 32) / 8 for _ in range(DIMS)])

    def item(self, pk):
        it = {"pk": {"S": pk}, "v": self.vector(),
              "n": {"N": str(self.rng.randint(0, 999))}}
        if self.rng.random() < 0.9:
            it["cat"] = {"S": self.rng.choice(PARTS[:8])}
        return it

    def send(self, operation, body, keys):
        try:
            r = call(self.server, operation, json.dumps(body), timeout=30)
        except requests.RequestException:
            self.uncertain.update(keys)
            self.crashed = True
            raise
        return r

    def step(self):
        rng, pk = self.rng, self.rng.choice(self.keys)
        r = rng.random()
        current = self.model.get(pk)
        if r < 0.35:
            it = self.item(pk)
            assert self.send("PutItem", {"TableName": TABLE, "Item": it}, [pk]).status_code == 200
            self.model[pk] = it
        elif r < 0.5 and current:
            v = self.vector()
            cat = {"S": rng.choice(PARTS[:8])}
            body = {"TableName": TABLE, "Key": {"pk": {"S": pk}},
                    "UpdateExpression": "SET v = :v, cat = :c",
                    "ExpressionAttributeValues": {":v": v, ":c": cat}}
            assert self.send("UpdateItem", body, [pk]).status_code == 200
            self.model[pk] = dict(current, v=v, cat=cat)
        elif r < 0.55 and current:
            body = {"TableName": TABLE, "Key": {"pk": {"S": pk}}, "UpdateExpression": "REMOVE v"}
            assert self.send("UpdateItem", body, [pk]).status_code == 200
            self.model[pk] = {k: val for k, val in current.items() if k != "v"}
        elif r < 0.65:
            body = {"TableName": TABLE, "Key": {"pk": {"S": pk}}}
            assert self.send("DeleteItem", body, [pk]).status_code == 200
            self.model[pk] = None
        elif r < 0.8:
            keys = rng.sample(self.keys, 3)
            puts = {k: self.item(k) for k in keys[:2]}
            body = {"RequestItems": {TABLE: [{"PutRequest": {"Item": it}} for it in puts.values()]
                                     + [{"DeleteRequest": {"Key": {"pk": {"S": keys[2]}}}}]}}
            out = self.send("BatchWriteItem", body, keys)
            assert out.status_code == 200 and not out.json().get("UnprocessedItems"), out.text
            self.model.update(puts)
            self.model[keys[2]] = None
        elif r < 0.95:
            keys = rng.sample(self.keys, 2)
            puts = {k: self.item(k) for k in keys}
            body = {"TransactItems": [{"Put": {"TableName": TABLE, "Item": it}}
                                      for it in puts.values()]}
            assert self.send("TransactWriteItems", body, keys).status_code == 200
            self.model.update(puts)
        else:  # an invalid vector is refused and nothing changes (before any index, stored)
            it = dict(self.item(pk), v=vec([1.0, 2.0]))
            indexed = self.indexed  # sent after the index existed: must be refused
            out = self.send("PutItem", {"TableName": TABLE, "Item": it}, [pk])
            if out.status_code == 200 and not indexed:
                self.model[pk] = it
            else:
                assert out.status_code == 400 and "ValidationException" in out.text, out.text
        self.steps += 1


class Background:
    def __init__(self, writer):
        self.writer, self.error = writer, None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.done.is_set():
                self.writer.step()
        except requests.RequestException:
            pass  # the server went away
        except Exception as e:  # noqa: BLE001 - reported by the test thread
            self.error = e

    def await_steps(self, n, timeout=60):
        deadline = time.time() + timeout
        target = self.writer.steps + n
        while self.writer.steps < target and self.thread.is_alive():
            assert time.time() < deadline, "the writer is stuck"
            time.sleep(0.01)
        assert self.error is None, self.error

    def stop(self):
        """After a kill: waits for the writer to meet the dead server first (so that every
        writer ends on an unanswered request)."""
        self.thread.join(30)
        self.done.set()
        self.thread.join(60)
        assert self.error is None, self.error


def check_acknowledged(items, writers, what):
    """Every acknowledged write of a key no unanswered request touched is in the table."""
    for w in writers:
        for pk, want in w.model.items():
            if pk in w.uncertain:
                continue
            assert items.get(pk) == want, f"{what}: {pk}"


def resume(writers, items, steps):
    """After a restart: the keys of the interrupted requests take what the table (`items`) says,
    then each writer makes `steps` more writes."""
    for w in writers:
        for pk in w.uncertain:
            w.model[pk] = items.get(pk)
        w.uncertain.clear()
        for _ in range(steps):
            w.step()


def check_after_restart(writers, check, steps):
    """On the restarted server: `check` (what it returns: the table's items) holds and every
    acknowledged write is there; again after `steps` more writes of each writer."""
    items = check("after SIGKILL during writes")
    check_acknowledged(items, writers, "after SIGKILL during writes")
    resume(writers, items, steps)
    check_acknowledged(check("after more writes"), writers, "after more writes")


@pytest.mark.parametrize("seed", SEEDS)
def test_vector_index_exact_after_sigkill_during_writes(tmp_path, seed):
    rng = random.Random(seed * 7919)
    server = start(tmp_path)
    writers = [Writer(server, seed * 100 + t, [f"w{t}-{i}" for i in range(60)]) for t in range(3)]
    background = []
    try:
        create(server)
        for w in writers:
            for _ in range(80):
                w.step()
        check_acknowledged(check_index(server, rng, "before the crash"), writers,
                           "before the crash")
        background = [Background(w) for w in writers]
        for b in background:
            b.await_steps(50)
    finally:
        server.kill()
        for b in background:
            b.stop()
    assert all(w.crashed for w in writers)
    server = start(tmp_path)
    try:
        for w in writers:
            w.server = server
        check_after_restart(writers, lambda what: check_index(server, rng, what), 60)
    finally:
        server.stop()


def bulk_load(s, rng, n):
    """n items (some whose vector the index leaves out, some without a HASH value), written 25 a
    BatchWriteItem."""
    items = []
    for i in range(n):
        it = {"pk": {"S": f"b{i:05d}"}, "v": vec([rng.randint(-32, 32) / 8 for _ in range(DIMS)])}
        if i % 10:
            it["cat"] = {"S": PARTS[i % len(PARTS)]}
        if i % 37 == 0:
            it["v"] = {"S": "not a vector"}
        elif i % 41 == 0:
            it["v"] = vec([1.0])
        items.append(it)
    for i in range(0, n, 25):
        ok(s, "BatchWriteItem", {"RequestItems": {
            TABLE: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}})


def index_state(s):
    d = vector_indexes(s, TABLE)[0]
    return d["IndexStatus"], d.get("Backfilling", False), d["ItemCount"]


def copied_by(server):
    """The items the backfill of this server's process copied, from its log line."""
    m = re.search(r"index vix of table vectors: backfill finished: (\d+) items copied",
                  server.output())
    return int(m.group(1)) if m else None


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_vector_backfill_resumes_after_sigkill(tmp_path, seed):
    rng = random.Random(seed * 104729)
    server = start(tmp_path)
    background = None
    n = 4000
    try:
        create(server, with_index=False)
        bulk_load(server, rng, n)
        writer = Writer(server, seed * 1000, [f"t{i}" for i in range(40)])
        writer.indexed = False
        background = Background(writer)
        background.await_steps(20)
        ok(server, "UpdateTable", {
            "TableName": TABLE,
            "AttributeDefinitions": [{"AttributeName": "cat", "AttributeType": "S"}],
            "VectorIndexUpdates": [{"Create": INDEX}]})
        writer.indexed = True
        # Killed once the backfill has copied some items (more than the writer's 40 keys can
        # account for) and not all.
        deadline = time.time() + 60
        while True:
            status, backfilling, count = index_state(server)
            assert status == "CREATING" and backfilling, "the backfill ended before the kill"
            if count > 100:
                break
            assert time.time() < deadline
            time.sleep(0.005)
    finally:
        server.kill()
        if background is not None:
            background.stop()
    server = start(tmp_path)
    try:
        writer.server = server
        deadline = time.time() + 120
        while index_state(server)[0] != "ACTIVE":
            assert time.time() < deadline, "the backfill did not finish after the restart"
            time.sleep(0.05)
        assert not index_state(server)[1]
        # Resumed from its cursor: this process copied fewer items than the table holds.
        copied = copied_by(server)
        assert copied is not None and copied < n, server.output()
        items = check_index(server, rng, "after the backfill")
        check_acknowledged(items, [writer], "after the backfill")
        resume([writer], items, 40)
        check_index(server, rng, "after writes to the ACTIVE index")
    finally:
        server.stop()


# The approximate path: a server whose searches go through the HNSW graph past ANN_THRESHOLD
# entries, killed while writers are busy and a searcher brings the graph forward; after the
# restart (a new graph, built from the entries) and after more writes (replayed into it from the
# journal), SearchVectors answers what brute force over the items says.
ANN_INDEX = {"IndexName": "vix", "VectorAttribute": {"AttributeName": "v"}, "Dimensions": DIMS,
             "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "ALL"}}
ANN_THRESHOLD = 50  # entries; the writers' 180 keys hold about 150 vectors


class FineWriter(Writer):
    """Vectors of multiples of 2^-16 (exact in float32, and distances exact in double): scores
    rarely tie, so the TopK is one list."""

    def vector(self):
        return vec([self.rng.randint(-2**20, 2**20) / 2**16 for _ in range(DIMS)])


class Searcher:
    """SearchVectors in a loop until stopped: the graph replays the writers' journal as they go.
    Any answer but 200 is an error (a dead server ends the loop)."""

    def __init__(self, server):
        self.server, self.error, self.searches = server, None, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        rng = random.Random(5)
        try:
            while not self.done.is_set():
                status, out = search(self.server, TABLE, [rng.uniform(-16, 16)
                                                          for _ in range(DIMS)], 10)
                if status != 200:
                    self.error = out
                    return
                self.searches += 1
        except requests.RequestException:
            pass  # the server went away

    def stop(self):
        self.done.set()
        self.thread.join(60)
        assert self.error is None, self.error


def start_ann(tmp_path):
    return Server(tmp_path, ["--vector-search-threshold", str(ANN_THRESHOLD)]).wait_ready()


def await_graph(server, timeout=60):
    """Searches until this server process has built the graph (its log line says so): the
    searches after it go through the graph."""
    deadline = time.time() + timeout
    while "vector graph of table vectors index vix: built" not in server.output():
        assert time.time() < deadline, server.output()
        status, out = search(server, TABLE, [0.0] * DIMS, 1)  # the first asks for the graph
        assert status == 200, out
        time.sleep(0.05)


def distance(q, v):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(q, v)))


def check_search(s, rng, what, queries=20):
    """For random queries and TopK 1, 10 and 100: the scores brute force over the table's items
    gives, in order, each the score of its item's vector, holding every item strictly nearer than
    the K-th (the only freedom: which of equally near items)."""
    items = scan(s)
    vectors = {pk: v for pk, it in items.items() if (v := vector_of(it)) is not None}
    assert len(vectors) >= ANN_THRESHOLD, f"{what}: too few vectors to search through the graph"
    for i in range(queries):
        q = [rng.randint(-2**20, 2**20) / 2**16 for _ in range(DIMS)]
        truth = sorted((distance(q, v), pk) for pk, v in vectors.items())
        for k in (1, 10, 100):
            status, out = search(s, TABLE, q, k)
            assert status == 200, f"{what}: {out}"
            results, want = out["SearchResults"], truth[:k]
            where = f"{what}: query {i}, TopK {k}"
            assert len(results) == len(want), where
            for r, (score, _) in zip(results, want):
                pk = r["Item"]["pk"]["S"]
                assert r["Item"] == items[pk], f"{where}: {pk}"
                assert math.isclose(r["Score"], score, rel_tol=1e-12, abs_tol=1e-12), where
                assert math.isclose(r["Score"], distance(q, vectors[pk]), rel_tol=1e-12,
                                    abs_tol=1e-12), f"{where}: {pk}"
            nearer = {pk for score, pk in want if score < want[-1][0]}
            assert nearer <= {r["Item"]["pk"]["S"] for r in results}, where
    return items


@pytest.mark.parametrize("seed", SEEDS)
def test_approximate_search_exact_after_sigkill_during_writes(tmp_path, seed):
    rng = random.Random(seed * 15485863)
    server = start_ann(tmp_path)
    writers = [FineWriter(server, seed * 100 + t, [f"w{t}-{i}" for i in range(60)])
               for t in range(3)]
    background, searcher = [], None
    try:
        ok(server, "CreateTable", {
            "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "VectorIndexes": [ANN_INDEX]})
        for w in writers:
            for _ in range(80):
                w.step()
        await_graph(server)
        for w in writers:  # replayed from the journal by the searches that follow
            for _ in range(30):
                w.step()
        check_acknowledged(check_search(server, rng, "before the crash"), writers,
                           "before the crash")
        background = [Background(w) for w in writers]
        searcher = Searcher(server)
        for b in background:
            b.await_steps(60)
        assert searcher.searches > 0 and searcher.error is None, searcher.error
    finally:
        server.kill()
        for b in background:
            b.stop()
        if searcher is not None:
            searcher.stop()
    assert all(w.crashed for w in writers)
    server = start_ann(tmp_path)
    try:
        for w in writers:
            w.server = server
        await_graph(server)
        check_after_restart(writers, lambda what: check_search(server, rng, what), 40)
    finally:
        server.stop()
