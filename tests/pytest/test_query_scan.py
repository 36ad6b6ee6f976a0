"""Query and Scan (base tables and secondary indexes), black-box through boto3 against the
real binary. Set FDYNO_TEST_ENDPOINT to run against another DynamoDB endpoint. The request rules
that one request shows are in cases/query.txt."""
import uuid

import botocore.exceptions
import pytest

from conftest import client_error



def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def table(ddb):
    """pk (S) + sk (N), an LSI on lsk (S), a GSI on g (S) with INCLUDE x, sparse."""
    name = _name("qs")
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "lsk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_lsk",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "lsk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}}],
        BillingMode="PAY_PER_REQUEST")
    for p in ("a", "b"):
        for i in range(10):
            item = {"pk": {"S": p}, "sk": {"N": str(i)}, "lsk": {"S": f"l{9 - i}"},
                    "x": {"N": str(i % 3)}, "y": {"S": "big" * 10}}
            if i % 2 == 0:
                item["g"] = {"S": "even"}
            ddb.put_item(TableName=name, Item=item)
    return name


def _sks(items):
    return [int(i["sk"]["N"]) for i in items]


def test_query_key_conditions(ddb, table):
    q = lambda kce, vals, **kw: ddb.query(TableName=table, KeyConditionExpression=kce,
                                          ExpressionAttributeValues=vals, **kw)
    r = q("pk = :p", {":p": {"S": "a"}})
    assert _sks(r["Items"]) == list(range(10))
    assert r["Count"] == 10 and r["ScannedCount"] == 10 and "LastEvaluatedKey" not in r
    assert _sks(q("pk = :p AND sk < :v", {":p": {"S": "a"}, ":v": {"N": "3"}})["Items"]) == [0, 1, 2]
    assert _sks(q("pk = :p AND sk <= :v", {":p": {"S": "a"}, ":v": {"N": "3"}})["Items"]) == [0, 1, 2, 3]
    assert _sks(q("pk = :p AND sk > :v", {":p": {"S": "a"}, ":v": {"N": "7"}})["Items"]) == [8, 9]
    assert _sks(q("pk = :p AND sk >= :v", {":p": {"S": "a"}, ":v": {"N": "7"}})["Items"]) == [7, 8, 9]
    assert _sks(q("pk = :p AND sk = :v", {":p": {"S": "a"}, ":v": {"N": "7"}})["Items"]) == [7]
    assert _sks(q("pk = :p AND sk BETWEEN :l AND :h",
                  {":p": {"S": "a"}, ":l": {"N": "2"}, ":h": {"N": "4"}})["Items"]) == [2, 3, 4]
    r = q("pk = :p", {":p": {"S": "a"}}, ScanIndexForward=False)
    assert _sks(r["Items"]) == list(range(9, -1, -1))
    assert q("pk = :p", {":p": {"S": "zzz"}})["Items"] == []


def test_query_legacy_key_conditions_and_filter(ddb, table):
    r = ddb.query(TableName=table,
                  KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "b"}]},
                                 "sk": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "5"}]}},
                  QueryFilter={"x": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "0"}]}})
    assert _sks(r["Items"]) == [6, 9]
    assert r["ScannedCount"] == 5


def test_query_filter_projection_select(ddb, table):
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p", FilterExpression="x = :x",
                  ProjectionExpression="sk, #y", ExpressionAttributeNames={"#y": "y"},
                  ExpressionAttributeValues={":p": {"S": "a"}, ":x": {"N": "1"}})
    assert r["Items"] == [{"sk": {"N": str(i)}, "y": {"S": "big" * 10}} for i in (1, 4, 7)]
    assert r["Count"] == 3 and r["ScannedCount"] == 10
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p", Select="COUNT",
                  ExpressionAttributeValues={":p": {"S": "a"}})
    assert "Items" not in r and r["Count"] == 10


def test_query_pagination_every_limit(ddb, table):
    for forward in (True, False):
        for limit in range(1, 12):
            seen, start = [], None
            while True:
                kw = dict(TableName=table, KeyConditionExpression="pk = :p", Limit=limit,
                          ExpressionAttributeValues={":p": {"S": "a"}}, ScanIndexForward=forward)
                if start:
                    kw["ExclusiveStartKey"] = start
                r = ddb.query(**kw)
                assert r["ScannedCount"] <= limit
                seen += _sks(r["Items"])
                start = r.get("LastEvaluatedKey")
                if not start:
                    break
            expected = list(range(10)) if forward else list(range(9, -1, -1))
            assert seen == expected, (forward, limit)


def test_scan_pagination_and_segments(ddb, table):
    full = []
    start = None
    while True:
        kw = dict(TableName=table, Limit=3)
        if start:
            kw["ExclusiveStartKey"] = start
        r = ddb.scan(**kw)
        full += [(i["pk"]["S"], int(i["sk"]["N"])) for i in r["Items"]]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert sorted(full) == sorted([(p, i) for p in "ab" for i in range(10)])
    assert len(full) == len(set(full))
    for total in (1, 2, 3, 7):
        parts = []
        for seg in range(total):
            r = ddb.scan(TableName=table, Segment=seg, TotalSegments=total)
            parts += [(i["pk"]["S"], int(i["sk"]["N"])) for i in r["Items"]]
        assert sorted(parts) == sorted(full)


def test_scan_filter_legacy(ddb, table):
    r = ddb.scan(TableName=table, ScanFilter={
        "x": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "2"}]}})
    assert r["Count"] == 6 and r["ScannedCount"] == 20


def test_query_gsi_include_and_sparse(ddb, table):
    r = ddb.query(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "even"}})
    assert r["Count"] == 10
    for item in r["Items"]:
        assert set(item) == {"pk", "sk", "g", "x"}
    r = ddb.scan(TableName=table, IndexName="by_g")
    assert r["Count"] == 10


def test_query_lsi_order_and_keys_only(ddb, table):
    r = ddb.query(TableName=table, IndexName="by_lsk", KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "a"}})
    assert [i["lsk"]["S"] for i in r["Items"]] == [f"l{i}" for i in range(10)]
    assert set(r["Items"][0]) == {"pk", "sk", "lsk"}
    r = ddb.query(TableName=table, IndexName="by_lsk", KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "a"}}, Select="ALL_ATTRIBUTES")
    assert "y" in r["Items"][0]
    # Pagination over the index.
    seen, start = [], None
    while True:
        kw = dict(TableName=table, IndexName="by_lsk", KeyConditionExpression="pk = :p", Limit=4,
                  ExpressionAttributeValues={":p": {"S": "a"}})
        if start:
            kw["ExclusiveStartKey"] = start
        r = ddb.query(**kw)
        seen += [i["lsk"]["S"] for i in r["Items"]]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
        assert set(start) == {"pk", "sk", "lsk"}
    assert seen == [f"l{i}" for i in range(10)]


def test_index_follows_updates_and_deletes(ddb):
    name = _name("idx")
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "gix",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName=name, Item={"pk": {"S": "1"}, "g": {"S": "x"}})
    q = lambda g: ddb.query(TableName=name, IndexName="gix", KeyConditionExpression="g = :g",
                            ExpressionAttributeValues={":g": {"S": g}})["Items"]
    assert q("x") == [{"pk": {"S": "1"}, "g": {"S": "x"}}]
    ddb.update_item(TableName=name, Key={"pk": {"S": "1"}}, UpdateExpression="SET g = :g",
                    ExpressionAttributeValues={":g": {"S": "y"}})
    assert q("x") == [] and len(q("y")) == 1
    ddb.update_item(TableName=name, Key={"pk": {"S": "1"}}, UpdateExpression="REMOVE g")
    assert q("y") == []
    ddb.put_item(TableName=name, Item={"pk": {"S": "1"}, "g": {"S": "z"}})
    ddb.delete_item(TableName=name, Key={"pk": {"S": "1"}})
    assert q("z") == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.put_item(TableName=name, Item={"pk": {"S": "2"}, "g": {"N": "1"}})
    assert e.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S "
        "Actual: N IndexName: gix")


def test_query_start_key_outside_partition(ddb, table):
    """A Query's ExclusiveStartKey must name an item of the queried partition."""
    kce = {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}
    first = ddb.query(TableName=table, Limit=3, **kce)
    inside = ddb.query(TableName=table, ExclusiveStartKey=first["LastEvaluatedKey"], **kce)
    assert _sks(inside["Items"]) == list(range(3, 10))
    other = {"pk": {"S": "b"}, "sk": {"N": "2"}}
    code, msg = client_error(ddb.query, TableName=table, ExclusiveStartKey=other, **kce)
    assert (code, msg) == (
        "ValidationException",
        "The provided starting key is outside query boundaries based on provided condition")


RANGE_PREDICATE = "The provided starting key does not match the range key predicate"


def test_query_start_key_outside_sort_key_condition(ddb, table):
    """With a sort key condition the start key must lie inside it, and reading on from it in
    the query's direction must still be able to reach the range: DynamoDB rejects a key below
    `sk >= :v` going forward, and one equal to :v going backward."""
    def q(kce, values, start, forward=True, **kw):
        return ddb.query(TableName=table, KeyConditionExpression=kce, ScanIndexForward=forward,
                         ExpressionAttributeValues={":p": {"S": "a"}, **values},
                         ExclusiveStartKey=start, **kw)

    def key(sk, pk="a"):
        return {"pk": {"S": pk}, "sk": {"N": str(sk)}}

    ge = ("pk = :p AND sk >= :v", {":v": {"N": "5"}})
    assert client_error(q, kce=ge[0], values=ge[1], start=key(4)) == ("ValidationException",
                                                             RANGE_PREDICATE)
    assert _sks(q(*ge, key(5))["Items"]) == [6, 7, 8, 9]
    # Backward, the lower bound itself: the LastEvaluatedKey of a page that ended on it is
    # taken back, and nothing follows it.
    assert _sks(q(*ge, key(5), forward=False)["Items"]) == []
    assert client_error(q, kce=ge[0], values=ge[1], start=key(4), forward=False)[1] == RANGE_PREDICATE
    assert _sks(q(*ge, key(6), forward=False)["Items"]) == [5]
    le = ("pk = :p AND sk <= :v", {":v": {"N": "5"}})
    assert client_error(q, kce=le[0], values=le[1], start=key(5))[1] == RANGE_PREDICATE
    assert _sks(q(*le, key(5), forward=False)["Items"]) == [4, 3, 2, 1, 0]
    assert client_error(q, kce=le[0], values=le[1], start=key(6), forward=False)[1] == RANGE_PREDICATE
    between = ("pk = :p AND sk BETWEEN :l AND :h", {":l": {"N": "3"}, ":h": {"N": "6"}})
    assert _sks(q(*between, key(3))["Items"]) == [4, 5, 6]
    assert client_error(q, kce=between[0], values=between[1], start=key(6))[1] == RANGE_PREDICATE
    assert _sks(q(*between, key(6), forward=False)["Items"]) == [5, 4, 3]
    assert client_error(q, kce=between[0], values=between[1], start=key(2), forward=False)[1] == (
        RANGE_PREDICATE)
    lt = ("pk = :p AND sk < :v", {":v": {"N": "5"}})
    assert client_error(q, kce=lt[0], values=lt[1], start=key(5), forward=False)[1] == RANGE_PREDICATE
    # Another partition, under a sort key condition that its sort key would satisfy.
    assert client_error(q, kce=ge[0], values=ge[1], start=key(7, pk="b"))[1] == RANGE_PREDICATE
    # Legacy KeyConditions.
    assert client_error(ddb.query, TableName=table, ExclusiveStartKey=key(2), KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
        "sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "5"}]}})[1] == (
        RANGE_PREDICATE)
    # begins_with on the LSI's string sort key.
    lkey = {"pk": {"S": "a"}, "sk": {"N": "0"}, "lsk": {"S": "k9"}}
    assert client_error(ddb.query, TableName=table, IndexName="by_lsk", ExclusiveStartKey=lkey,
                KeyConditionExpression="pk = :p AND begins_with(lsk, :b)",
                ExpressionAttributeValues={":p": {"S": "a"}, ":b": {"S": "l"}})[1] == (
        RANGE_PREDICATE)
    lkey["lsk"] = {"S": "l"}
    r = ddb.query(TableName=table, IndexName="by_lsk", ExclusiveStartKey=lkey,
                  KeyConditionExpression="pk = :p AND begins_with(lsk, :b)",
                  ExpressionAttributeValues={":p": {"S": "a"}, ":b": {"S": "l"}})
    assert [i["lsk"]["S"] for i in r["Items"]] == [f"l{i}" for i in range(10)]


def test_query_sort_condition_pagination_every_limit(ddb, table):
    """Pages chained by LastEvaluatedKey under a sort key condition return every item once.
    Only a forward chain whose last page ended exactly on the inclusive upper bound of a table
    range has its final start key rejected (nothing can follow it); read backward, a page that
    ended on the inclusive lower bound continues (to nothing), as DynamoDB does."""
    for forward in (True, False):
        for limit in range(1, 6):
            seen, start, rejected = [], None, False
            while True:
                kw = dict(TableName=table, KeyConditionExpression="pk = :p AND sk BETWEEN :l AND :h",
                          Limit=limit, ScanIndexForward=forward,
                          ExpressionAttributeValues={":p": {"S": "a"}, ":l": {"N": "3"},
                                                     ":h": {"N": "6"}})
                if start:
                    kw["ExclusiveStartKey"] = start
                try:
                    r = ddb.query(**kw)
                except botocore.exceptions.ClientError as e:
                    assert e.response["Error"]["Message"] == RANGE_PREDICATE
                    assert forward and _sks([start]) == [6]
                    rejected = True
                    break
                seen += _sks(r["Items"])
                start = r.get("LastEvaluatedKey")
                if not start:
                    break
            assert seen == ([3, 4, 5, 6] if forward else [6, 5, 4, 3]), (forward, limit)
            assert rejected == (forward and 4 % limit == 0), (forward, limit)


def test_legacy_key_conditions_mix_with_projection_and_filter_expressions(ddb, table):
    kc = {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
          "sk": {"ComparisonOperator": "LT", "AttributeValueList": [{"N": "4"}]}}
    r = ddb.query(TableName=table, KeyConditions=kc, ProjectionExpression="sk, x")
    assert [set(i) for i in r["Items"]] == [{"sk", "x"}] * 4
    r = ddb.query(TableName=table, KeyConditions=kc, FilterExpression="x = :x",
                  ExpressionAttributeValues={":x": {"N": "1"}})
    assert _sks(r["Items"]) == [1]
    # KeyConditions with KeyConditionExpression, and the other legacy members with
    # expressions, stay mixes.
    code, msg = client_error(ddb.query, TableName=table, KeyConditions=kc,
                     KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}})
    assert (code, msg) == ("ValidationException",
                           "Can not use both expression and non-expression parameters in the same "
                           "request: Non-expression parameters: {KeyConditions} Expression "
                           "parameters: {KeyConditionExpression}")
    code, msg = client_error(ddb.query, TableName=table, KeyConditions=kc, FilterExpression="x = :x",
                     ExpressionAttributeValues={":x": {"N": "1"}},
                     QueryFilter={"y": {"ComparisonOperator": "NOT_NULL"}})
    assert msg == ("Can not use both expression and non-expression parameters in the same "
                   "request: Non-expression parameters: {QueryFilter, KeyConditions} Expression "
                   "parameters: {FilterExpression}")
    code, msg = client_error(ddb.query, TableName=table, KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "a"}}, AttributesToGet=["x"])
    assert code == "ValidationException" and "Non-expression parameters: {AttributesToGet}" in msg


def test_query_backward_page_ending_on_lower_bound_continues(ddb, table):
    kw = dict(TableName=table, KeyConditionExpression="pk = :p AND sk >= :v",
              ExpressionAttributeValues={":p": {"S": "a"}, ":v": {"N": "7"}},
              ScanIndexForward=False, Limit=3)
    first = ddb.query(**kw)
    assert _sks(first["Items"]) == [9, 8, 7]
    assert first["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "7"}}
    second = ddb.query(ExclusiveStartKey=first["LastEvaluatedKey"], **kw)
    assert second["Items"] == [] and "LastEvaluatedKey" not in second


def test_filter_on_key_attributes_is_rejected(ddb, table):
    values = {":p": {"S": "a"}, ":v": {"N": "1"}}
    for expr, key in (("sk = :v", "sk"), ("x = :v OR sk > :v", "sk"),
                      ("attribute_exists(pk)", "pk")):
        code, msg = client_error(ddb.query, TableName=table, KeyConditionExpression="pk = :p",
                         FilterExpression=expr, ExpressionAttributeValues={
                             k: v for k, v in values.items() if k in expr or k == ":p"})
        assert (code, msg) == ("ValidationException",
                               "Filter Expression can only contain non-primary key attributes: "
                               f"Primary key attribute: {key}")
    code, msg = client_error(ddb.query, TableName=table, KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
        QueryFilter={"sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]}})
    assert (code, msg) == ("ValidationException",
                           "QueryFilter can only contain non-primary key attributes: Primary key "
                           "attribute: sk")
    # On an index, its own key attributes are the key; the table's sort key is not.
    code, msg = client_error(ddb.query, TableName=table, IndexName="by_g",
                     KeyConditionExpression="g = :g", FilterExpression="g = :g",
                     ExpressionAttributeValues={":g": {"S": "even"}})
    assert msg.endswith("Primary key attribute: g")
    r = ddb.query(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  FilterExpression="sk > :v",
                  ExpressionAttributeValues={":g": {"S": "even"}, ":v": {"N": "6"}})
    assert sorted(_sks(r["Items"])) == [8, 8]
    # Scan filters may read keys.
    r = ddb.scan(TableName=table, FilterExpression="sk = :v",
                 ExpressionAttributeValues={":v": {"N": "1"}})
    assert r["Count"] == 2


def test_unprojected_attributes_lsi_reads_base_gsi_rejects(ddb, table):
    # by_lsk projects only keys: attributes beyond them come from the base table.
    r = ddb.query(TableName=table, IndexName="by_lsk", KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
        AttributesToGet=["sk", "x", "y"], Limit=2)
    assert r["Items"] == [{"sk": {"N": "9"}, "x": {"N": "0"}, "y": {"S": "big" * 10}},
                          {"sk": {"N": "8"}, "x": {"N": "2"}, "y": {"S": "big" * 10}}]
    r = ddb.query(TableName=table, IndexName="by_lsk", KeyConditionExpression="pk = :p",
                  FilterExpression="x = :x", ProjectionExpression="sk",
                  ExpressionAttributeValues={":p": {"S": "a"}, ":x": {"N": "1"}})
    assert sorted(_sks(r["Items"])) == [1, 4, 7]
    # by_g projects x (INCLUDE) but not y.
    code, msg = client_error(ddb.query, TableName=table, IndexName="by_g",
                     KeyConditionExpression="g = :g", ProjectionExpression="x, y, sk",
                     ExpressionAttributeValues={":g": {"S": "even"}})
    assert (code, msg) == ("ValidationException", "One or more parameter values were invalid: "
                           "Global secondary index by_g does not project [y]")
    r = ddb.query(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  ProjectionExpression="x, sk",
                  ExpressionAttributeValues={":g": {"S": "even"}}, Limit=1)
    assert set(r["Items"][0]) == {"x", "sk"}


def test_exclusive_start_key_of_a_hash_only_query_and_another_segment(ddb):
    name = _name("esk")
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(40):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"k{i}"}})
    assert client_error(ddb.query, TableName=name, KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "k1"}},
                ExclusiveStartKey={"pk": {"S": "k1"}}) == (
        "ValidationException", "The query can return at most one row and cannot be restarted")
    # Segment 0's last key continues segment 0 but belongs to no other segment.
    page = ddb.scan(TableName=name, Segment=0, TotalSegments=2, Limit=1)
    start = page["LastEvaluatedKey"]
    ddb.scan(TableName=name, Segment=0, TotalSegments=2, ExclusiveStartKey=start)
    assert client_error(ddb.scan, TableName=name, Segment=1, TotalSegments=2,
                ExclusiveStartKey=start) == (
        "ValidationException",
        "Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. "
        "TotalSegments: 2 Segment: 1")


# ---- consumed capacity ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sized(ddb):
    """pk + sk (S), a KEYS_ONLY GSI `gsi` and a KEYS_ONLY LSI `lsi`, and three items of 1,500
    bytes in partition "p" (index entries of 8 and 10 bytes)."""
    name = _name("cap")
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"}
                              for n in ("pk", "sk", "g", "lsk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[{
            "IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "lsk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    fixed = (2 + 1) + (2 + 1) + (1 + 1) + (3 + 1) + 1  # pk, sk, g, lsk and the name "d"
    for i, lsk in enumerate("abc"):
        ddb.put_item(TableName=name, Item={
            "pk": {"S": "p"}, "sk": {"S": str(i)}, "g": {"S": "x"}, "lsk": {"S": lsk},
            "d": {"S": "x" * (1500 - fixed)}})
    return name


def test_read_capacity_counts_every_item_read_summed_per_page(ddb, sized):
    # DynamoDB's documented rule: a Query or Scan sums the sizes of the items it reads (filtered
    # out or not, whatever the projection, also for COUNT) and rounds up to 4 KB once, one unit
    # at least; eventually consistent reads cost half. Three items of 1,500 bytes are 2 units
    # (3 if each item were rounded up on its own, as BatchGetItem does).
    def units(op, **kw):
        r = op(TableName=sized, ReturnConsumedCapacity="TOTAL", **kw)
        assert r["ConsumedCapacity"]["TableName"] == sized
        return r["ConsumedCapacity"]["CapacityUnits"]

    q = dict(KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}})
    assert units(ddb.scan, ConsistentRead=True) == 2.0
    assert units(ddb.scan) == 1.0
    assert units(ddb.query, ConsistentRead=True, **q) == 2.0
    r = ddb.scan(TableName=sized, ConsistentRead=True, FilterExpression="d = :none",
                 ExpressionAttributeValues={":none": {"S": "none"}}, ReturnConsumedCapacity="TOTAL")
    assert (r["Count"], r["ScannedCount"], r["ConsumedCapacity"]["CapacityUnits"]) == (0, 3, 2.0)
    assert units(ddb.scan, ConsistentRead=True, Select="COUNT") == 2.0
    assert units(ddb.query, ConsistentRead=True, ProjectionExpression="sk", **q) == 2.0
    assert units(ddb.scan, ConsistentRead=True, Limit=2) == 1.0  # 3,000 bytes read
    # Nothing read still costs one unit (half eventually consistent).
    none = dict(KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "none"}})
    assert units(ddb.query, ConsistentRead=True, **none) == 1.0
    assert units(ddb.query, **none) == 0.5
    r = ddb.scan(TableName=sized, ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {"TableName": sized, "CapacityUnits": 2.0,
                                     "Table": {"CapacityUnits": 2.0}}


def test_read_capacity_of_index_reads(ddb, sized):
    # An index read is charged to the index, by the sizes of its entries; the base items a local
    # index read fetches (attributes it does not project) are charged to the table, each item
    # rounded up to 4 KB on its own (docs: local secondary indexes, read capacity units).
    def capacity(op, mode="INDEXES", **kw):
        return op(TableName=sized, ReturnConsumedCapacity=mode, **kw)["ConsumedCapacity"]

    g = dict(IndexName="gsi", KeyConditionExpression="g = :g",
             ExpressionAttributeValues={":g": {"S": "x"}})
    assert capacity(ddb.query, **g) == {
        "TableName": sized, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 0.5}}}
    assert capacity(ddb.query, mode="TOTAL", **g) == {"TableName": sized, "CapacityUnits": 0.5}
    assert capacity(ddb.scan, IndexName="gsi") == {
        "TableName": sized, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 0.5}}}

    lsi = dict(IndexName="lsi", KeyConditionExpression="pk = :p",
               ExpressionAttributeValues={":p": {"S": "p"}})
    assert capacity(ddb.query, ConsistentRead=True, **lsi) == {
        "TableName": sized, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 0.0},
        "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 1.0}}}
    # Every attribute: three base items fetched, 1 unit each, besides the index's 1.
    assert capacity(ddb.query, ConsistentRead=True, Select="ALL_ATTRIBUTES", **lsi) == {
        "TableName": sized, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 3.0},
        "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 1.0}}}
    assert capacity(ddb.query, Select="ALL_ATTRIBUTES", **lsi) == {
        "TableName": sized, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.5},
        "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 0.5}}}
    assert capacity(ddb.query, mode="TOTAL", ConsistentRead=True, ProjectionExpression="d",
                    **lsi) == {"TableName": sized, "CapacityUnits": 4.0}
    assert capacity(ddb.scan, IndexName="lsi", ConsistentRead=True, Select="ALL_ATTRIBUTES") == {
        "TableName": sized, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 3.0},
        "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 1.0}}}


def test_items_stored_in_parts_read_whole_in_both_directions(ddb):
    """Items over 100 KB are stored in parts; Query (forward and backward, every page size),
    Scan and a Query of a GSI projecting ALL return each of them whole, between small ones."""
    name = _name("qs-split")
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")
    try:
        items = []
        for i in range(6):
            size = 250_000 if i % 2 else 10  # every other item in three parts
            item = {"pk": {"S": "p"}, "sk": {"N": str(i)}, "g": {"S": "all"},
                    "d": {"S": chr(ord("a") + i) * size}}
            ddb.put_item(TableName=name, Item=item)
            items.append(item)

        def pages(**kw):
            got, start = [], None
            while True:
                args = dict(kw, **({"ExclusiveStartKey": start} if start else {}))
                r = (ddb.query if "KeyConditionExpression" in kw else ddb.scan)(**args)
                got += r["Items"]
                start = r.get("LastEvaluatedKey")
                if not start:
                    return got

        key = {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}
        gsi = {"IndexName": "by_g", "KeyConditionExpression": "g = :g",
               "ExpressionAttributeValues": {":g": {"S": "all"}}}
        for limit in (None, 1, 2, 3):
            lim = {"Limit": limit} if limit else {}
            for forward in (True, False):
                want = items if forward else items[::-1]
                assert pages(TableName=name, ScanIndexForward=forward, **key, **lim) == want
                assert pages(TableName=name, ScanIndexForward=forward, **gsi, **lim) == want
            assert pages(TableName=name, **lim) == items
    finally:
        ddb.delete_table(TableName=name)
