"""Vector indexes and SearchVectors, black box. botocore predates them, so requests are raw
signed JSON (signing.call) rather than boto3 client methods."""
import json
import math
import random
import time
import uuid

import pytest

from signing import call, error_type
from vector_calls import brute, err, ok, op, search, vec, vector_indexes, vindex


def create(server, table, indexes, defs=(("pk", "S"),), billing="PAY_PER_REQUEST"):
    body = {"TableName": table,
            "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in defs],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "BillingMode": billing, "VectorIndexes": indexes}
    if billing == "PROVISIONED":
        body["ProvisionedThroughput"] = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    return op(server, "CreateTable", body)


@pytest.mark.parametrize("distance", ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"])
def test_search_matches_brute_force(module_server, distance):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    assert create(s, table, [vindex(dims=8, distance=distance)])[0] == 200
    rng = random.Random(7)
    items = {}
    for i in range(120):
        # Values exact in float32, so Python's double arithmetic is the server's.
        v = [rng.randint(-8, 8) / 4 for _ in range(8)]
        items[f"k{i:03d}"] = v
        ok(s, "PutItem", {"TableName": table, "Item": {"pk": {"S": f"k{i:03d}"}, "v": vec(v),
                                                        "other": {"S": "x"}}})
    ok(s, "PutItem", {"TableName": table, "Item": {"pk": {"S": "novector"}}})  # sparse
    for _ in range(5):
        query = [rng.randint(-8, 8) / 4 for _ in range(8)]
        k = rng.randint(1, 20)
        status, out = search(s, table, query, k)
        assert status == 200, out
        want = brute(items, query, k, distance)
        got = [(r["Score"], r["Item"]["pk"]["S"]) for r in out["SearchResults"]]
        assert [p for _, p in got] == [p for _, p in want] or \
            all(math.isclose(a[0], b[0], abs_tol=1e-9) for a, b in zip(got, want))
        for (gs, _), (ws, _) in zip(got, want):
            assert math.isclose(gs, ws, rel_tol=1e-9, abs_tol=1e-9)
        assert out["SearchResults"][0]["Item"]["other"] == {"S": "x"}  # ALL projection
    desc = vector_indexes(s, table)[0]
    assert desc["IndexStatus"] == "ACTIVE" and "Backfilling" not in desc
    assert desc["ItemCount"] == 120 and desc["IndexSizeBytes"] == 120 * 8 * 4
    assert desc["IndexArn"].endswith(f":table/{table}/index/vix")
    assert desc["DistanceFunction"] == distance and desc["Dimensions"] == 8


def test_hash_filter_projection_and_capacity(module_server):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    status, out = create(s, table, [vindex(schema=[("cat", "HASH"), ("color", "INLINE_FILTER")],
                                           projection={"ProjectionType": "KEYS_ONLY"})],
                         defs=(("pk", "S"), ("cat", "S"), ("color", "S")))
    assert status == 200, out
    rows = [("a", "x", "red", [1, 0, 0]), ("b", "x", "blue", [0.9, 0.1, 0]),
            ("c", "y", "red", [1, 0, 0]), ("d", "x", "red", [0, 1, 0])]
    for pk, cat, color, v in rows:
        ok(s, "PutItem", {"TableName": table, "Item": {
            "pk": {"S": pk}, "cat": {"S": cat}, "color": {"S": color}, "v": vec(v),
            "secret": {"S": "not projected"}}})
    status, out = search(s, table, [1, 0, 0], 10, SearchConditionExpression="cat = :c",
                         ExpressionAttributeValues={":c": {"S": "x"}},
                         ReturnConsumedCapacity="TOTAL")
    assert status == 200, out
    assert [r["Item"]["pk"]["S"] for r in out["SearchResults"]] == ["a", "b", "d"]
    assert out["SearchResults"][0]["Score"] == 0
    assert "secret" not in out["SearchResults"][0]["Item"]
    assert set(out["SearchResults"][0]["Item"]) == {"pk", "cat", "color", "v"}
    assert out["ConsumedCapacity"]["VectorSearchRequestBytes"] > 3 * 3 * 4
    status, out = search(s, table, [1, 0, 0], 10,
                         SearchConditionExpression="#c = :c AND color = :r",
                         ExpressionAttributeNames={"#c": "cat"},
                         ExpressionAttributeValues={":c": {"S": "x"}, ":r": {"S": "red"}},
                         ProjectionExpression="pk")
    assert status == 200, out
    assert out["SearchResults"] == [{"Item": {"pk": {"S": "a"}}, "Score": 0},
                                    {"Item": {"pk": {"S": "d"}}, "Score": 1}]
    assert "ConsumedCapacity" not in out


def test_search_errors(module_server):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    assert create(s, table, [vindex(schema=[("cat", "HASH")])],
                  defs=(("pk", "S"), ("cat", "S")))[0] == 200
    base = {"TableName": table, "IndexName": "vix", "SearchVector": vec([1, 0, 0])["L"],
            "TopK": 3}
    cases = [
        (dict(TopK=0), "Provided TopK value is out of valid range"),
        (dict(TopK=101), "Provided TopK value is out of valid range"),
        ({}, "SearchConditionExpression must be provided when SearchSchema has a HASH key"),
        (dict(SearchConditionExpression="cat > :c", ExpressionAttributeValues={":c": {"S": "x"}}),
         "Invalid comparator used in SearchConditionExpression"),
        (dict(IndexName="nope"), "The table does not have the specified index: nope"),
        (dict(SearchVector=vec([1, 0])["L"], SearchConditionExpression="cat = :c",
              ExpressionAttributeValues={":c": {"S": "x"}}),
         "One or more parameter values were invalid: SearchVector has 2 dimensions, but the "
         "index requires 3. IndexName: vix"),
        (dict(SearchConditionExpression="cat = :c", ExpressionAttributeValues={":c": {"N": "1"}}),
         "One or more parameter values were invalid: Condition parameter type does not match "
         "schema type"),
        (dict(SearchConditionExpression="cat = :c",
              ExpressionAttributeValues={":c": {"S": "x"}, ":unused": {"S": "y"}}),
         "Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}"),
    ]
    for change, message in cases:
        body = dict(base)
        body.update(change)
        assert err(s, "SearchVectors", body) == ("ValidationException", message), change
    body = dict(base, TableName="missing-table")
    assert err(s, "SearchVectors", body)[0] == "ResourceNotFoundException"


def test_writes_validate_the_vector(module_server):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    assert create(s, table, [vindex()])[0] == 200
    bad = [
        ({"S": "x"}, "Type mismatch for vector attribute v Expected: L Actual: S IndexName: vix"),
        (vec([1, 2]), "Vector attribute v has 2 dimensions, but the index requires 3. "
                      "IndexName: vix"),
        ({"L": [{"N": "1"}, {"S": "2"}, {"N": "3"}]},
         "Type mismatch for vector attribute v[1] Expected: N Actual: S IndexName: vix"),
        ({"L": [{"N": "1"}, {"N": "1e39"}, {"N": "3"}]}, "is out of range for a 32-bit float"),
    ]
    for value, message in bad:
        t, m = err(s, "PutItem", {"TableName": table, "Item": {"pk": {"S": "a"}, "v": value}})
        assert t == "ValidationException" and message in m, m
        t, m = err(s, "UpdateItem", {"TableName": table, "Key": {"pk": {"S": "a"}},
                                     "UpdateExpression": "SET v = :v",
                                     "ExpressionAttributeValues": {":v": value}})
        assert t == "ValidationException" and message in m, m
    r = call(s, "TransactWriteItems", json.dumps({"TransactItems": [
        {"Put": {"TableName": table, "Item": {"pk": {"S": "t"}, "v": vec([1, 2])}}}]}))
    assert r.status_code == 400 and error_type(r) == "TransactionCanceledException", r.text
    # Nothing was written; a valid vector is, and a delete removes it from the index.
    assert vector_indexes(s, table)[0]["ItemCount"] == 0
    ok(s, "BatchWriteItem", {"RequestItems": {table: [
        {"PutRequest": {"Item": {"pk": {"S": "b"}, "v": vec([0, 1, 0])}}}]}})
    assert [r["Item"]["pk"]["S"] for r in search(s, table, [0, 1, 0], 5)[1]["SearchResults"]] \
        == ["b"]
    ok(s, "DeleteItem", {"TableName": table, "Key": {"pk": {"S": "b"}}})
    assert search(s, table, [0, 1, 0], 5)[1]["SearchResults"] == []


def test_create_table_validation(module_server):
    s = module_server
    t = f"vec-{uuid.uuid4().hex[:8]}"
    status, out = create(s, t, [vindex()], billing="PROVISIONED")
    assert status == 400 and "PAY_PER_REQUEST" in out["message"]
    status, out = create(s, t, [vindex(schema=[("cat", "HASH")])])
    assert status == 400
    assert out["message"] == "One element in SearchSchema is not defined in attribute definitions"
    status, out = create(s, t, [vindex(dims=0)])
    assert status == 400 and "vectorIndexes.1.member.dimensions" in out["message"]
    status, out = create(s, t, [vindex(distance="MANHATTAN")])
    assert status == 400 and "vectorIndexes.1.member.distanceFunction" in out["message"]
    status, out = create(s, t, [vindex(), vindex()])
    assert status == 400 and "Duplicate index name: vix" in out["message"]


def test_update_table_adds_an_index_online_and_deletes_it(module_server):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    ok(s, "CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    rng = random.Random(3)
    items = {}
    for i in range(250):
        v = [rng.randint(-4, 4) for _ in range(3)]
        items[f"k{i:03d}"] = v
        ok(s, "PutItem", {"TableName": table, "Item": {"pk": {"S": f"k{i:03d}"}, "v": vec(v)}})
    out = ok(s, "UpdateTable", {"TableName": table, "VectorIndexUpdates": [
        {"Create": vindex(distance="EUCLIDEAN")}]})
    desc = out["TableDescription"]["VectorIndexes"][0]
    assert desc["IndexStatus"] == "CREATING" and desc["Backfilling"] is True
    deadline = time.time() + 60
    while True:
        desc = vector_indexes(s, table)[0]
        if desc["IndexStatus"] == "ACTIVE":
            break
        status, out = op(s, "SearchVectors", {"TableName": table, "IndexName": "vix",
                                               "SearchVector": vec([1, 0, 0])["L"], "TopK": 1})
        # The backfill may end between DescribeTable and the search.
        assert status == 200 or out["message"] == "Cannot search backfilling vector index: vix"
        assert time.time() < deadline
        time.sleep(0.1)
    assert "Backfilling" not in desc and desc["ItemCount"] == 250
    got = search(s, table, [1, 1, 1], 10)[1]["SearchResults"]
    want = brute(items, [1, 1, 1], 10, "EUCLIDEAN")
    assert [round(r["Score"], 9) for r in got] == [round(w[0], 9) for w in want]
    ok(s, "UpdateTable", {"TableName": table, "VectorIndexUpdates": [{"Delete": {"IndexName": "vix"}}]})
    deadline = time.time() + 60
    while vector_indexes(s, table):
        assert time.time() < deadline
        time.sleep(0.1)
    assert err(s, "SearchVectors", {"TableName": table, "IndexName": "vix",
                                    "SearchVector": vec([1, 0, 0])["L"], "TopK": 1})[1] == \
        "The table does not have the specified index: vix"


def test_writes_report_vector_write_request_bytes(module_server):
    s = module_server
    table = f"vec-{uuid.uuid4().hex[:8]}"
    assert create(s, table, [vindex(schema=[("cat", "HASH")],
                                    projection={"ProjectionType": "KEYS_ONLY"})],
                  defs=(("pk", "S"), ("cat", "S")))[0] == 200
    item = {"pk": {"S": "k1"}, "cat": {"S": "x"}, "v": vec([1, 2, 3]), "note": {"S": "o"}}
    # The vector at 4 bytes a dimension, plus pk (2 + 2) and cat (3 + 1).
    entry_bytes = 3 * 4 + 4 + 4

    def consumed(operation, body, mode="INDEXES"):
        out = ok(s, operation, dict(body, ReturnConsumedCapacity=mode))
        c = out["ConsumedCapacity"]
        return c[0] if isinstance(c, list) else c

    c = consumed("PutItem", {"TableName": table, "Item": item})
    assert c["VectorIndexes"] == {"vix": {"VectorWriteRequestBytes": entry_bytes}}
    assert c["CapacityUnits"] == c["Table"]["CapacityUnits"] == 1  # not capacity units
    assert "VectorIndexes" not in consumed("PutItem", {"TableName": table, "Item": item}, "TOTAL")
    # Nothing the index holds changes: no vector write.
    c = consumed("UpdateItem", {"TableName": table, "Key": {"pk": {"S": "k1"}},
                                "UpdateExpression": "SET note = :o",
                                "ExpressionAttributeValues": {":o": {"S": "changed"}}})
    assert "VectorIndexes" not in c
    c = consumed("UpdateItem", {"TableName": table, "Key": {"pk": {"S": "k1"}},
                                "UpdateExpression": "SET cat = :c",
                                "ExpressionAttributeValues": {":c": {"S": "yy"}}})
    assert c["VectorIndexes"] == {"vix": {"VectorWriteRequestBytes": entry_bytes + 1}}
    c = consumed("BatchWriteItem", {"RequestItems": {table: [
        {"PutRequest": {"Item": dict(item, pk={"S": "k2"})}},
        {"PutRequest": {"Item": dict(item, pk={"S": "k3"})}}]}})
    assert c["VectorIndexes"] == {"vix": {"VectorWriteRequestBytes": 2 * entry_bytes}}
    c = consumed("DeleteItem", {"TableName": table, "Key": {"pk": {"S": "k1"}}})
    assert c["VectorIndexes"] == {"vix": {"VectorWriteRequestBytes": 4}}  # the key, removed
    c = consumed("PutItem", {"TableName": table, "Item": {"pk": {"S": "k4"}}})
    assert "VectorIndexes" not in c  # never in the index
