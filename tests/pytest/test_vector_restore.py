"""Restores of tables with vector indexes, black box: RestoreTableFromBackup and
RestoreTableToPointInTime keep the source's vector indexes (or those VectorIndexOverride names,
each of which must equal the source's), and the restored table answers SearchVectors exactly as
the source did at the backup or the restore time; items whose vector attribute an index leaves
out (it was added to a table that held them) restore as they are. botocore predates vector
indexes, so requests are raw signed JSON.

Restores to a moment less than 6 seconds old wait for it to settle (docs/format/pitr.md), so the
point-in-time test sleeps past it once, after its writes.
"""
import random
import time
import uuid

import pytest

from vector_calls import err, ok, op, search, vec, vector_indexes, vindex, wait_active

SETTLE_S = 6.5
DIMS = 4
BY_CAT = vindex("by_cat", dims=DIMS, distance="EUCLIDEAN",
                schema=[("cat", "HASH"), ("color", "INLINE_FILTER")],
                projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]})
PLAIN = vindex("plain", dims=DIMS, distance="COSINE")


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_source(s, table):
    ok(s, "CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"}
                                 for a in ("pk", "cat", "color")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "VectorIndexes": [BY_CAT, PLAIN]})


class Writer:
    """Random writes to a table with BY_CAT and PLAIN; values exact in float32."""

    def __init__(self, s, table, seed):
        self.s, self.table, self.rng = s, table, random.Random(seed)

    def vector(self):
        return [self.rng.randint(-64, 64) / 16 for _ in range(DIMS)]

    def put(self, pk):
        item = {"pk": {"S": pk}, "v": vec(self.vector()), "note": {"S": f"n{pk}"},
                "other": {"S": "not projected by by_cat"}}
        if self.rng.random() < 0.8:
            item["cat"] = {"S": self.rng.choice("ab")}
        if self.rng.random() < 0.7:
            item["color"] = {"S": self.rng.choice(["red", "blue"])}
        ok(self.s, "PutItem", {"TableName": self.table, "Item": item})

    def churn(self, keys):
        """Puts, deletes, vector and HASH changes, and vector removals over `keys`."""
        for pk in keys:
            r = self.rng.random()
            if r < 0.3:
                self.put(pk)
            elif r < 0.5:
                ok(self.s, "DeleteItem", {"TableName": self.table, "Key": {"pk": {"S": pk}}})
            elif r < 0.7:
                ok(self.s, "UpdateItem", {
                    "TableName": self.table, "Key": {"pk": {"S": pk}},
                    "UpdateExpression": "SET v = :v, cat = :c",
                    "ExpressionAttributeValues": {":v": vec(self.vector()),
                                                  ":c": {"S": self.rng.choice("ab")}}})
            elif r < 0.8:
                ok(self.s, "UpdateItem", {"TableName": self.table, "Key": {"pk": {"S": pk}},
                                          "UpdateExpression": "REMOVE v"})


QUERY_RNG = random.Random(11)
QUERIES = [[QUERY_RNG.randint(-64, 64) / 16 for _ in range(DIMS)] for _ in range(4)]
CONDITIONS = [
    ("by_cat", {"SearchConditionExpression": "cat = :c",
                "ExpressionAttributeValues": {":c": {"S": "a"}}}),
    ("by_cat", {"SearchConditionExpression": "cat = :c AND color = :r",
                "ExpressionAttributeValues": {":c": {"S": "b"}, ":r": {"S": "red"}}}),
    ("plain", {}),
    ("plain", {"ProjectionExpression": "pk, v"}),
]


def answers(s, table, indexes=("by_cat", "plain")):
    """Every query's SearchResults (items and scores, in order) on `indexes`."""
    out = {}
    for q, vector in enumerate(QUERIES):
        for c, (index, kw) in enumerate(CONDITIONS):
            if index not in indexes:
                continue
            status, got = search(s, table, vector, 30, index=index, **kw)
            assert status == 200, got
            out[(q, c)] = got["SearchResults"]
    return out


def definitions(s, table):
    """DescribeTable's vector index definitions (what a restore keeps), by name."""
    keep = ("IndexName", "VectorAttribute", "Dimensions", "DistanceFunction", "SearchSchema",
            "Projection")
    return {d["IndexName"]: {k: d.get(k) for k in keep} for d in vector_indexes(s, table)}


def item_counts(s, table):
    return {d["IndexName"]: d["ItemCount"] for d in vector_indexes(s, table)}


def attribute_names(t):
    return sorted(a["AttributeName"] for a in t["AttributeDefinitions"])


def wait_backup(s, arn, timeout=60):
    deadline = time.time() + timeout
    while ok(s, "DescribeBackup", {"BackupArn": arn})["BackupDescription"][
            "BackupDetails"]["BackupStatus"] != "AVAILABLE":
        assert time.time() < deadline, "the backup is not AVAILABLE"
        time.sleep(0.1)


def backup(s, table):
    arn = ok(s, "CreateBackup", {"TableName": table, "BackupName": "vbackup"})[
        "BackupDetails"]["BackupArn"]
    wait_backup(s, arn)
    return arn


def restore_backup(s, arn, target, **overrides):
    return op(s, "RestoreTableFromBackup", dict(TargetTableName=target, BackupArn=arn,
                                                **overrides))


def test_backup_restore_answers_as_the_source_did(module_server):
    s = module_server
    src = name("vr-src")
    create_source(s, src)
    w = Writer(s, src, seed=1)
    for i in range(150):
        w.put(f"k{i:03d}")
    arn = backup(s, src)
    expected, counts = answers(s, src), item_counts(s, src)
    source_definitions = definitions(s, src)
    assert counts["by_cat"] > 0 and counts["plain"] == 150
    w.churn([f"k{i:03d}" for i in range(0, 150, 2)] + [f"new{i}" for i in range(20)])
    assert answers(s, src) != expected  # the source moved on: what follows proves something

    full = name("vr-full")
    status, out = restore_backup(s, arn, full)
    assert status == 200, out
    assert [d["IndexName"] for d in out["TableDescription"]["VectorIndexes"]] == [
        "by_cat", "plain"]
    t = wait_active(s, full)
    assert attribute_names(t) == ["cat", "color", "pk"]
    assert definitions(s, full) == source_definitions
    assert all(d["IndexStatus"] == "ACTIVE" and "Backfilling" not in d
               for d in t["VectorIndexes"])
    assert item_counts(s, full) == counts
    assert answers(s, full) == expected

    # The override keeps the indexes it names, and the attributes their search schemas use.
    only_cat = name("vr-cat")
    status, out = restore_backup(s, arn, only_cat, VectorIndexOverride=[BY_CAT])
    assert status == 200, out
    wait_active(s, only_cat)
    assert list(definitions(s, only_cat)) == ["by_cat"]
    assert answers(s, only_cat, indexes=("by_cat",)) == answers(s, full, indexes=("by_cat",))
    assert err(s, "SearchVectors", {"TableName": only_cat, "IndexName": "plain",
                                    "SearchVector": vec(QUERIES[0])["L"], "TopK": 1}) == (
        "ValidationException", "The table does not have the specified index: plain")
    only_plain = name("vr-plain")
    assert restore_backup(s, arn, only_plain, VectorIndexOverride=[PLAIN])[0] == 200
    assert attribute_names(wait_active(s, only_plain)) == ["pk"]
    assert answers(s, only_plain, indexes=("plain",)) == answers(s, full, indexes=("plain",))
    none = name("vr-none")
    assert restore_backup(s, arn, none, VectorIndexOverride=[])[0] == 200
    t = wait_active(s, none)
    assert "VectorIndexes" not in t and t["ItemCount"] == 150


def test_backup_restore_override_errors(module_server):
    s = module_server
    src = name("vr-err")
    create_source(s, src)
    arn = backup(s, src)
    invalid = "One or more parameter values were invalid: "

    def changed(index, **change):
        return dict(index, **change)

    cases = [
        ([vindex("nope", dims=DIMS)],
         invalid + "Vector index override does not match an index of the backup: nope"),
        ([PLAIN, PLAIN], invalid + "Duplicate index name: plain"),
        ([changed(PLAIN, Dimensions=5)], invalid + "Vector index override plain does not match "
         "the index of the backup: its Dimensions differs"),
        ([changed(PLAIN, VectorAttribute={"AttributeName": "w"})],
         invalid + "Vector index override plain does not match the index of the backup: its "
         "VectorAttribute differs"),
        ([changed(PLAIN, DistanceFunction="EUCLIDEAN")],
         invalid + "Vector index override plain does not match the index of the backup: its "
         "DistanceFunction differs"),
        ([changed(BY_CAT, SearchSchema=[{"AttributeName": "cat",
                                          "SearchSchemaElementType": "HASH"}])],
         invalid + "Vector index override by_cat does not match the index of the backup: its "
         "SearchSchema differs"),
        ([changed(BY_CAT, Projection={"ProjectionType": "ALL"})],
         invalid + "Vector index override by_cat does not match the index of the backup: its "
         "Projection differs"),
        ([changed(PLAIN, Projection={"ProjectionType": "INCLUDE"})],
         invalid + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified"),
    ]
    for override, message in cases:
        status, out = restore_backup(s, arn, "vr-never", VectorIndexOverride=override)
        assert (status, out["__type"].split("#")[-1], out["message"]) == (
            400, "ValidationException", message), override
    status, out = restore_backup(s, arn, "vr-never",
                                 VectorIndexOverride=[changed(PLAIN, Dimensions=0)])
    assert status == 400 and "Value '0' at 'vectorIndexOverride.1.member.dimensions' failed to " \
        "satisfy constraint: Member must have value greater than or equal to 1" in out["message"]
    status, out = restore_backup(s, arn, "vr-never", VectorIndexOverride=[{"IndexName": 3}])
    assert status == 400 and out["__type"].endswith("SerializationException"), out
    provisioned = {"BillingModeOverride": "PROVISIONED",
                   "ProvisionedThroughputOverride": {"ReadCapacityUnits": 1,
                                                     "WriteCapacityUnits": 1}}
    status, out = restore_backup(s, arn, "vr-never", **provisioned)
    assert (status, out["message"]) == (400, invalid + "Vector indexes are only supported on "
                                        "tables with BillingMode PAY_PER_REQUEST"), out
    assert op(s, "DescribeTable", {"TableName": "vr-never"})[0] == 400
    # Without its vector indexes, the table may be provisioned.
    prov = name("vr-prov")
    status, out = restore_backup(s, arn, prov, VectorIndexOverride=[], **provisioned)
    assert status == 200, out
    assert wait_active(s, prov)["ProvisionedThroughput"]["ReadCapacityUnits"] == 1


def add_index_over_invalid_vectors(s, table):
    """A table whose items include vector attributes that PLAIN, added afterwards, leaves out
    (a string, a wrong length); returns the keys it indexes."""
    ok(s, "CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    values = {"ok1": vec([1, 0, 0, 0]), "ok2": vec([0, 1, 0, 0]), "text": {"S": "not a vector"},
              "short": vec([1, 2]), "none": None}
    for pk, v in values.items():
        item = {"pk": {"S": pk}}
        if v:
            item["v"] = v
        ok(s, "PutItem", {"TableName": table, "Item": item})
    ok(s, "UpdateTable", {"TableName": table, "VectorIndexUpdates": [{"Create": PLAIN}]})
    deadline = time.time() + 60
    while vector_indexes(s, table)[0]["IndexStatus"] != "ACTIVE":
        assert time.time() < deadline
        time.sleep(0.1)
    return ["ok1", "ok2"]


def indexed_keys(s, table):
    status, out = search(s, table, [1, 1, 0, 0], 100, index="plain")
    assert status == 200, out
    return sorted(r["Item"]["pk"]["S"] for r in out["SearchResults"])


def test_restore_keeps_items_an_index_left_out(module_server):
    s = module_server
    src = name("vr-left")
    indexed = add_index_over_invalid_vectors(s, src)
    assert indexed_keys(s, src) == indexed
    copy = name("vr-left-copy")
    assert restore_backup(s, backup(s, src), copy)[0] == 200
    t = wait_active(s, copy)
    assert t["ItemCount"] == 5 and item_counts(s, copy) == {"plain": 2}
    assert indexed_keys(s, copy) == indexed
    got = ok(s, "GetItem", {"TableName": copy, "Key": {"pk": {"S": "text"}}})["Item"]
    assert got["v"] == {"S": "not a vector"}


def enable_pitr(s, table):
    ok(s, "UpdateContinuousBackups", {
        "TableName": table,
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}})


def next_second():
    """A whole second after every write so far and before every later one (seconds since the
    epoch)."""
    now = time.time()
    second = int(now) + 1
    time.sleep(second - now + 0.05)
    return second


def restore_pitr(s, src, target, when=None, **overrides):
    body = dict(SourceTableName=src, TargetTableName=target, **overrides)
    if when is None:
        body["UseLatestRestorableTime"] = True
    else:
        body["RestoreDateTime"] = when
    return op(s, "RestoreTableToPointInTime", body)


@pytest.mark.parametrize("seed", [5])
def test_pitr_restore_answers_as_the_source_did_then(module_server, seed):
    s = module_server
    src = name("vr-pitr")
    create_source(s, src)
    enable_pitr(s, src)
    w = Writer(s, src, seed)
    keys = [f"k{i:03d}" for i in range(120)]
    for pk in keys:
        w.put(pk)
    moments = []  # (time, answers, item counts)
    for round_ in range(2):
        moments.append((next_second(), answers(s, src), item_counts(s, src)))
        w.churn(keys[round_::2] + [f"new{round_}-{i}" for i in range(10)])
    left = name("vr-pitr-left")
    indexed = add_index_over_invalid_vectors(s, left)
    enable_pitr(s, left)
    left_moment = next_second()
    for pk in ("text", "short"):  # undone by the restore: written back as they were
        ok(s, "DeleteItem", {"TableName": left, "Key": {"pk": {"S": pk}}})
    time.sleep(SETTLE_S)
    latest = answers(s, src), item_counts(s, src)
    assert moments[0][1] != moments[1][1] != latest[0]

    for n, (when, expected, counts) in enumerate(moments):
        target = name(f"vr-pitr{n}")
        status, out = restore_pitr(s, src, target, when)
        assert status == 200, out
        wait_active(s, target)
        assert item_counts(s, target) == counts, f"moment {n}"
        assert answers(s, target) == expected, f"moment {n}"
    target = name("vr-pitr-latest")
    assert restore_pitr(s, src, target)[0] == 200
    wait_active(s, target)
    assert (answers(s, target), item_counts(s, target)) == latest
    # The override keeps only the index it names.
    target = name("vr-pitr-plain")
    status, out = restore_pitr(s, src, target, moments[0][0], VectorIndexOverride=[PLAIN])
    assert status == 200, out
    assert attribute_names(wait_active(s, target)) == ["pk"]
    assert list(definitions(s, target)) == ["plain"]
    assert answers(s, target, indexes=("plain",)) == {
        k: v for k, v in moments[0][1].items() if CONDITIONS[k[1]][0] == "plain"}
    status, out = restore_pitr(s, src, name("vr-never"), VectorIndexOverride=[vindex("nope")])
    assert (status, out["message"]) == (
        400, "One or more parameter values were invalid: Vector index override does not match "
        "an index of the source table: nope")
    # Items the index left out are copied, and written back, as they are.
    target = name("vr-pitr-left")
    assert restore_pitr(s, left, target, left_moment)[0] == 200
    assert wait_active(s, target)["ItemCount"] == 5
    assert indexed_keys(s, target) == indexed
    got = ok(s, "GetItem", {"TableName": target, "Key": {"pk": {"S": "text"}}})["Item"]
    assert got["v"] == {"S": "not a vector"}
