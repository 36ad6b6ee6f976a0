"""Global secondary indexes with multi-attribute keys (DynamoDB, November 2025): up to four
partition key attributes and up to four sort key attributes, HASH elements first. Written from
DynamoDB's documentation of the feature: every partition key attribute is queried by equality,
the sort key attributes left to right with equality, at most one range condition on the last
constrained one; items missing a key attribute are not indexed."""
import itertools
import time
import uuid

import botocore.exceptions
import pytest


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _err(fn, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(**kw)
    return e.value.response["Error"]


def _defs(**types):
    return [{"AttributeName": n, "AttributeType": t} for n, t in types.items()]


def _ks(*elements):
    return [{"AttributeName": n, "KeyType": k} for n, k in elements]


GSI_KEY = _ks(("tournament", "HASH"), ("area", "HASH"),
              ("round", "RANGE"), ("bracket", "RANGE"), ("game", "RANGE"))


@pytest.fixture(scope="module")
def table(ddb):
    name = _name("multi")
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=_defs(pk="S", tournament="S", area="S", round="N", bracket="S",
                                   game="N"),
        KeySchema=_ks(("pk", "HASH")),
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {"IndexName": "by_match", "KeySchema": GSI_KEY,
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["score"]}},
            {"IndexName": "keys_only", "KeySchema": _ks(("tournament", "HASH"), ("area", "HASH")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
        ])
    items = []
    for t, reg, rnd, br, m in itertools.product(["w24", "s25"], ["eu", "na"], [1, 2, 3],
                                                ["lower", "upper"], [1, 2]):
        pk = f"{t}-{reg}-{rnd}-{br}-{m}"
        items.append({"pk": {"S": pk}, "tournament": {"S": t}, "area": {"S": reg},
                      "round": {"N": str(rnd)}, "bracket": {"S": br}, "game": {"N": str(m)},
                      "score": {"N": str(rnd * 10 + m)}, "extra": {"S": "x"}})
    # Sparse: one key attribute missing, or of another type.
    items.append({"pk": {"S": "no-area"}, "tournament": {"S": "w24"}, "round": {"N": "1"},
                  "bracket": {"S": "lower"}, "game": {"N": "9"}})
    items.append({"pk": {"S": "no-game"}, "tournament": {"S": "w24"}, "area": {"S": "eu"},
                  "round": {"N": "1"}, "bracket": {"S": "lower"}})
    items.append({"pk": {"S": "string-round"}, "tournament": {"S": "w24"},
                  "area": {"S": "eu"}, "round": {"S": "1"}, "bracket": {"S": "lower"},
                  "game": {"N": "7"}})
    with ddb_batch(ddb, name) as put:
        for item in items:
            put(item)
    return name


class ddb_batch:
    def __init__(self, ddb, table):
        self.ddb, self.table, self.pending = ddb, table, []

    def __enter__(self):
        return self.pending.append

    def __exit__(self, *exc):
        for i in range(0, len(self.pending), 25):
            self.ddb.batch_write_item(RequestItems={self.table: [
                {"PutRequest": {"Item": it}} for it in self.pending[i:i + 25]]})


def _query(ddb, table, kce, values, index="by_match", **kw):
    return ddb.query(TableName=table, IndexName=index, KeyConditionExpression=kce,
                     ExpressionAttributeValues=values, **kw)


def _keys(items):
    return [(int(i["round"]["N"]), i["bracket"]["S"], int(i["game"]["N"])) for i in items]


V = {":t": {"S": "w24"}, ":r": {"S": "eu"}}


def test_describe_renders_every_key_element_in_order(ddb, table):
    gsis = {g["IndexName"]: g for g in ddb.describe_table(TableName=table)["Table"][
        "GlobalSecondaryIndexes"]}
    assert gsis["by_match"]["KeySchema"] == GSI_KEY
    assert gsis["keys_only"]["KeySchema"] == _ks(("tournament", "HASH"), ("area", "HASH"))
    # Three items lack a key attribute or have a mistyped one: not indexed.
    assert gsis["by_match"]["ItemCount"] == 48
    assert gsis["keys_only"]["ItemCount"] == 50


def test_query_orders_by_sort_attributes_in_sequence_both_ways(ddb, table):
    expected = sorted(itertools.product([1, 2, 3], ["lower", "upper"], [1, 2]))
    r = _query(ddb, table, "tournament = :t AND area = :r", V)
    assert _keys(r["Items"]) == expected
    r = _query(ddb, table, "tournament = :t AND area = :r", V, ScanIndexForward=False)
    assert _keys(r["Items"]) == expected[::-1]
    # The partition is the combination of every partition key value.
    r = _query(ddb, table, "area = :r AND tournament = :t",
               {":t": {"S": "s25"}, ":r": {"S": "na"}})
    assert {i["pk"]["S"].split("-")[0] for i in r["Items"]} == {"s25"}
    assert len(r["Items"]) == 12


def test_query_sort_attributes_left_to_right(ddb, table):
    q = "tournament = :t AND area = :r AND "
    r = _query(ddb, table, q + "round = :a", {**V, ":a": {"N": "2"}})
    assert _keys(r["Items"]) == [(2, "lower", 1), (2, "lower", 2), (2, "upper", 1),
                                 (2, "upper", 2)]
    r = _query(ddb, table, q + "round = :a AND bracket = :b AND game >= :m",
               {**V, ":a": {"N": "3"}, ":b": {"S": "upper"}, ":m": {"N": "2"}})
    assert _keys(r["Items"]) == [(3, "upper", 2)]
    r = _query(ddb, table, q + "round BETWEEN :a AND :b",
               {**V, ":a": {"N": "2"}, ":b": {"N": "3"}}, ScanIndexForward=False)
    assert [k[0] for k in _keys(r["Items"])] == [3] * 4 + [2] * 4
    r = _query(ddb, table, q + "round = :a AND begins_with(bracket, :p)",
               {**V, ":a": {"N": "1"}, ":p": {"S": "up"}})
    assert _keys(r["Items"]) == [(1, "upper", 1), (1, "upper", 2)]
    r = _query(ddb, table, q + "round < :a", {**V, ":a": {"N": "2"}})
    assert {k[0] for k in _keys(r["Items"])} == {1}
    r = _query(ddb, table, q + "round = :a AND bracket > :b",
               {**V, ":a": {"N": "1"}, ":b": {"S": "lower"}})
    assert _keys(r["Items"]) == [(1, "upper", 1), (1, "upper", 2)]


@pytest.mark.parametrize("kce,values", [
    # A partition key attribute missing, or not compared by equality.
    ("tournament = :t", {":t": {"S": "w24"}}),
    ("tournament = :t AND area > :r", V),
    ("tournament = :t AND area BETWEEN :r AND :s", {**V, ":s": {"S": "zz"}}),
    ("tournament = :t AND begins_with(area, :r)", V),
    ("tournament = :t AND round = :a", {":t": {"S": "w24"}, ":a": {"N": "1"}}),
    # A sort key attribute skipped, conditions out of order, two range conditions.
    ("tournament = :t AND area = :r AND bracket = :b", {**V, ":b": {"S": "lower"}}),
    ("tournament = :t AND area = :r AND round = :a AND game = :m",
     {**V, ":a": {"N": "1"}, ":m": {"N": "1"}}),
    ("tournament = :t AND area = :r AND round > :a AND bracket = :b",
     {**V, ":a": {"N": "1"}, ":b": {"S": "lower"}}),
    ("tournament = :t AND area = :r AND round > :a AND bracket > :b",
     {**V, ":a": {"N": "1"}, ":b": {"S": "lower"}}),
    # A condition on an attribute that is not in the key, and a wrongly typed value.
    ("tournament = :t AND area = :r AND score = :s", {**V, ":s": {"N": "1"}}),
    ("tournament = :t AND area = :r AND round = :a", {**V, ":a": {"S": "1"}}),
])
def test_query_invalid_key_conditions(ddb, table, kce, values):
    e = _err(_query, ddb=ddb, table=table, kce=kce, values=values)
    assert e["Code"] == "ValidationException"


def _range_error(earlier, later):
    return (f"RANGE key attributes {earlier} must have equality conditions specified in the query "
            f"because a condition is present on key attribute {later}")


@pytest.mark.parametrize("kce,values,message", [
    # The first sort key attribute skipped.
    ("tournament = :t AND area = :r AND bracket = :b", {**V, ":b": {"S": "lower"}},
     _range_error("round", "bracket")),
    # A gap between two constrained attributes.
    ("tournament = :t AND area = :r AND round = :a AND game = :m",
     {**V, ":a": {"N": "1"}, ":m": {"N": "1"}}, _range_error("bracket", "game")),
    # A range condition before the last attribute named.
    ("tournament = :t AND area = :r AND round > :a AND bracket = :b",
     {**V, ":a": {"N": "1"}, ":b": {"S": "lower"}}, _range_error("round", "bracket")),
    ("tournament = :t AND area = :r AND round BETWEEN :a AND :c AND bracket > :b",
     {**V, ":a": {"N": "1"}, ":c": {"N": "2"}, ":b": {"S": "lower"}},
     _range_error("round", "bracket")),
])
def test_query_sort_attributes_need_equality_before_a_later_condition(ddb, table, kce, values,
                                                                      message):
    e = _err(_query, ddb=ddb, table=table, kce=kce, values=values)
    assert (e["Code"], e["Message"]) == ("ValidationException", message)


def test_query_pagination_round_trips_every_limit(ddb, table):
    all_items = _query(ddb, table, "tournament = :t AND area = :r", V)["Items"]
    for forward in (True, False):
        for limit in (1, 2, 3, 5, 7):
            got, start = [], None
            while True:
                kw = {"Limit": limit, "ScanIndexForward": forward}
                if start:
                    kw["ExclusiveStartKey"] = start
                r = _query(ddb, table, "tournament = :t AND area = :r AND round >= :a",
                           {**V, ":a": {"N": "2"}}, **kw)
                got += r["Items"]
                start = r.get("LastEvaluatedKey")
                if start:
                    # The start key carries the table key and every index key attribute.
                    assert set(start) == {"pk", "tournament", "area", "round", "bracket",
                                          "game"}
                if not start:
                    break
            want = [i for i in all_items if int(i["round"]["N"]) >= 2]
            assert got == (want if forward else want[::-1])


def test_filter_on_index_key_attribute_rejected_other_allowed(ddb, table):
    for attr in ("round", "area", "game"):
        e = _err(_query, ddb=ddb, table=table, kce="tournament = :t AND area = :r", values={
            **V, ":x": {"N": "1"} if attr != "area" else {"S": "eu"}},
            FilterExpression=f"{attr} = :x")
        assert e["Code"] == "ValidationException"
        assert e["Message"] == ("Filter Expression can only contain non-primary key attributes: "
                                f"Primary key attribute: {attr}")
    r = _query(ddb, table, "tournament = :t AND area = :r", {**V, ":s": {"N": "20"}},
               FilterExpression="score > :s")
    assert sorted(int(i["score"]["N"]) for i in r["Items"]) == [21, 21, 22, 22, 31, 31, 32, 32]


def test_projections(ddb, table):
    r = _query(ddb, table, "tournament = :t AND area = :r AND round = :a",
               {**V, ":a": {"N": "1"}}, Limit=1)
    assert set(r["Items"][0]) == {"pk", "tournament", "area", "round", "bracket", "game",
                                  "score"}
    r = _query(ddb, table, "tournament = :t AND area = :r", V, index="keys_only", Limit=1)
    assert set(r["Items"][0]) == {"pk", "tournament", "area"}


def test_writes_keep_the_index_exact(ddb):
    name = _name("multi-w")
    ddb.create_table(
        TableName=name, AttributeDefinitions=_defs(pk="S", a="S", b="N", c="S", d="N"),
        KeySchema=_ks(("pk", "HASH")), BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": _ks(
            ("a", "HASH"), ("b", "HASH"), ("c", "RANGE"), ("d", "RANGE")),
            "Projection": {"ProjectionType": "ALL"}}])
    vals = {":a": {"S": "x"}, ":b": {"N": "1"}}

    def indexed():
        r = _query(ddb, name, "a = :a AND b = :b", vals, index="gsi")
        return [(i["c"]["S"], int(i["d"]["N"]), i["pk"]["S"]) for i in r["Items"]]

    with ddb_batch(ddb, name) as put:
        for i in range(6):
            put({"pk": {"S": f"k{i}"}, "a": {"S": "x"}, "b": {"N": "1"}, "c": {"S": f"c{i % 2}"},
                 "d": {"N": str(5 - i)}})
    assert indexed() == [("c0", 1, "k4"), ("c0", 3, "k2"), ("c0", 5, "k0"), ("c1", 0, "k5"),
                         ("c1", 2, "k3"), ("c1", 4, "k1")]
    # Moving an item to another partition, removing a key attribute, deleting.
    ddb.update_item(TableName=name, Key={"pk": {"S": "k0"}}, UpdateExpression="SET b = :n",
                    ExpressionAttributeValues={":n": {"N": "2"}})
    ddb.update_item(TableName=name, Key={"pk": {"S": "k1"}}, UpdateExpression="REMOVE d")
    ddb.batch_write_item(RequestItems={name: [{"DeleteRequest": {"Key": {"pk": {"S": "k2"}}}}]})
    ddb.update_item(TableName=name, Key={"pk": {"S": "k3"}}, UpdateExpression="SET c = :c",
                    ExpressionAttributeValues={":c": {"S": "c0"}})
    assert indexed() == [("c0", 1, "k4"), ("c0", 2, "k3"), ("c1", 0, "k5")]
    g = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert g["ItemCount"] == 4  # k0 moved to partition (x, 2)


def test_online_creation_backfills(ddb):
    name = _name("multi-o")
    ddb.create_table(TableName=name, AttributeDefinitions=_defs(pk="S"),
                     KeySchema=_ks(("pk", "HASH")), BillingMode="PAY_PER_REQUEST")
    with ddb_batch(ddb, name) as put:
        for i in range(40):
            item = {"pk": {"S": f"k{i}"}, "a": {"S": f"a{i % 2}"}, "b": {"N": str(i % 5)}}
            if i % 4:
                item["c"] = {"N": str(i)}
            put(item)
    ddb.update_table(
        TableName=name, AttributeDefinitions=_defs(a="S", b="N", c="N"),
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gsi", "KeySchema": _ks(("a", "HASH"), ("b", "HASH"), ("c", "RANGE")),
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    deadline = time.time() + 30
    while True:
        g = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
        if g["IndexStatus"] == "ACTIVE":
            break
        assert time.time() < deadline
        time.sleep(0.1)
    assert g["KeySchema"] == _ks(("a", "HASH"), ("b", "HASH"), ("c", "RANGE"))
    r = _query(ddb, name, "a = :a AND b = :b", {":a": {"S": "a1"}, ":b": {"N": "3"}},
               index="gsi", ScanIndexForward=False)
    assert [int(i["c"]["N"]) for i in r["Items"]] == [33, 23, 13, 3]
    r = _query(ddb, name, "a = :a AND b = :b", {":a": {"S": "a0"}, ":b": {"N": "0"}}, index="gsi")
    assert [int(i["c"]["N"]) for i in r["Items"]] == [10, 30]  # 0 and 20 have no c


def _create(ddb, key, defs=None, lsi=False, **kw):
    defs = defs or _defs(pk="S", sk="S", a="S", b="S", c="S", d="S", e="S")
    index = {"IndexName": "gsi", "KeySchema": key, "Projection": {"ProjectionType": "ALL"}}
    extra = {"LocalSecondaryIndexes": [index]} if lsi else {"GlobalSecondaryIndexes": [index]}
    return ddb.create_table(TableName=_name("multi-v"), AttributeDefinitions=defs,
                            KeySchema=_ks(("pk", "HASH"), ("sk", "RANGE")),
                            BillingMode="PAY_PER_REQUEST", **extra, **kw)


@pytest.mark.parametrize("key", [
    _ks(("a", "HASH"), ("b", "HASH"), ("c", "HASH"), ("d", "HASH"), ("e", "HASH")),
    _ks(("a", "HASH"), ("b", "RANGE"), ("c", "RANGE"), ("d", "RANGE"), ("e", "RANGE"),
        ("sk", "RANGE")),
    _ks(("a", "HASH"), ("b", "RANGE"), ("c", "HASH")),
    _ks(("a", "RANGE"), ("b", "HASH"), ("c", "HASH")),
    _ks(("a", "HASH"), ("b", "HASH"), ("a", "RANGE")),
    _ks(("a", "HASH"), ("b", "HASH"), ("undefined", "RANGE")),
])
def test_create_table_rejects_invalid_multi_attribute_keys(ddb, key):
    e = _err(_create, ddb=ddb, key=key)
    assert e["Code"] == "ValidationException"


def test_create_table_multi_attribute_key_limits(ddb):
    # Four of each, with a table key attribute among them.
    key = _ks(("a", "HASH"), ("b", "HASH"), ("c", "HASH"), ("pk", "HASH"), ("d", "RANGE"),
              ("e", "RANGE"), ("sk", "RANGE"), ("x", "RANGE"))
    r = _create(ddb, key, defs=_defs(pk="S", sk="S", a="S", b="S", c="S", d="S", e="S", x="N"))
    assert r["TableDescription"]["GlobalSecondaryIndexes"][0]["KeySchema"] == key
    e = _err(_create, ddb=ddb, key=key + _ks(("y", "RANGE")),
             defs=_defs(pk="S", sk="S", a="S", b="S", c="S", d="S", e="S", x="N", y="S"))
    assert e["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 8" in e["Message"]
    # Local secondary indexes keep one partition and one sort key attribute.
    e = _err(_create, ddb=ddb, key=_ks(("pk", "HASH"), ("a", "RANGE"), ("b", "RANGE")), lsi=True)
    assert e["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 2" in e["Message"]


def test_update_table_create_validates_multi_attribute_keys(ddb):
    name = _name("multi-u")
    ddb.create_table(TableName=name, AttributeDefinitions=_defs(pk="S"),
                     KeySchema=_ks(("pk", "HASH")), BillingMode="PAY_PER_REQUEST")

    def create(key, defs):
        return ddb.update_table(TableName=name, AttributeDefinitions=defs,
                                GlobalSecondaryIndexUpdates=[{"Create": {
                                    "IndexName": "gsi", "KeySchema": key,
                                    "Projection": {"ProjectionType": "ALL"}}}])

    e = _err(create, key=_ks(("a", "HASH"), ("b", "RANGE"), ("c", "HASH")),
             defs=_defs(a="S", b="S", c="S"))
    assert e["Code"] == "ValidationException"
    e = _err(create, key=_ks(("a", "HASH"), ("b", "HASH")), defs=_defs(a="S"))
    assert e["Code"] == "ValidationException"
    assert "Some index key attributes are not defined in AttributeDefinitions" in e["Message"]
    r = create(_ks(("a", "HASH"), ("pk", "HASH"), ("b", "RANGE"), ("c", "RANGE")),
               _defs(a="S", pk="S", b="N", c="B"))
    assert r["TableDescription"]["GlobalSecondaryIndexes"][0]["KeySchema"] == _ks(
        ("a", "HASH"), ("pk", "HASH"), ("b", "RANGE"), ("c", "RANGE"))
