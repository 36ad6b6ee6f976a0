"""--enforce-capacity: provisioned tables and indexes throttle at their capacity, on-demand tables at
their OnDemandThroughput maximums, and every partition key at DynamoDB's per-partition limits;
capacity units are counted as ConsumedCapacity reports them, and a throttled request has no
effect.

Rates are measured over a few seconds of real time with generous bounds: these tests check the
behaviour (a 10 WCU table sustains about 10 writes of 1 KB a second), not the speed of anything."""
import json
import threading
import time
import uuid

import botocore.exceptions
import pytest

from conftest import client_error
from signing import call

KB = "x" * 1000  # with the key, a 1 KB item: one write unit


@pytest.fixture(scope="module")
def cs(capacity_server):
    return capacity_server


@pytest.fixture
def ddb(cs):
    return cs.client()


def provisioned(ddb, rcu, wcu, gsi=None):
    name = "c" + uuid.uuid4().hex[:10]
    kw = {}
    attrs = [{"AttributeName": "id", "AttributeType": "S"}]
    if gsi:
        attrs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": gsi[0], "WriteCapacityUnits": gsi[1]}}]
    ddb.create_table(TableName=name, AttributeDefinitions=attrs,
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     ProvisionedThroughput={"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu},
                     **kw)
    return name


def on_demand(ddb, **kw):
    name = "c" + uuid.uuid4().hex[:10]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}], **kw)
    return name


def raw_put(cs, table, key, payload=KB):
    """A PutItem sent raw, so that members newer than Debian's botocore (ThrottlingReasons) are
    seen: (status, body)."""
    r = call(cs, "PutItem", json.dumps({"TableName": table, "Item": {
        "id": {"S": key}, "p": {"S": payload}}}))
    return r.status_code, r.json()


def reasons(body):
    return [(x["reason"], x["resource"]) for x in body.get("ThrottlingReasons", [])]


def put(ddb, table, key, payload=KB, **extra):
    item = {"id": {"S": key}, "p": {"S": payload}}
    item.update({k: {"S": v} for k, v in extra.items()})
    return ddb.put_item(TableName=table, Item=item)


def try_put(ddb, table, key, payload=KB, **extra):
    """True when the put went through, False when throttled."""
    try:
        put(ddb, table, key, payload, **extra)
        return True
    except botocore.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException", e.response
        return False


def drain(ddb, table, most=5000):
    """Writes until the first throttle: what the table's bucket held (failing past `most`,
    rather than writing for ever to a bucket that refills faster than one client writes)."""
    n = 0
    while try_put(ddb, table, f"drain-{n}"):
        n += 1
        assert n < most, f"{table} never throttled in {most} writes"
    return n


def count(ddb, table):
    return ddb.scan(TableName=table, Select="COUNT")["Count"]


def test_a_10_wcu_table_sustains_about_10_writes_a_second(ddb):
    t = provisioned(ddb, 5, 10)
    drain(ddb, t)  # the second's worth it starts with
    ok, attempts, start = 0, 0, time.monotonic()
    while time.monotonic() - start < 4:
        attempts += 1
        ok += try_put(ddb, t, f"k{attempts}")
    rate = ok / (time.monotonic() - start)
    print(f"measured {rate:.1f} writes of 1 KB a second at 10 WCU ({attempts} attempts)")
    assert 7 <= rate <= 13
    assert attempts > ok  # the rest were throttled


def test_throttled_write_has_no_effect_and_says_why(ddb, cs):
    t = provisioned(ddb, 5, 1)
    drain(ddb, t)
    before = count(ddb, t)
    status, body = raw_put(cs, t, "late")
    assert status == 400
    assert body["__type"].endswith("#ProvisionedThroughputExceededException")
    assert body["message"] == (
        "The level of configured provisioned throughput for the table was exceeded. Consider "
        "increasing your provisioning level with the UpdateTable API.")
    assert reasons(body) == [("TableWriteProvisionedThroughputExceeded",
                              f"arn:aws:dynamodb:us-east-1:123456789012:table/{t}")]
    assert count(ddb, t) == before
    assert not ddb.get_item(TableName=t, Key={"id": {"S": "late"}}).get("Item")


def test_unused_capacity_is_banked_as_burst(ddb):
    t = provisioned(ddb, 5, 10)
    drain(ddb, t)
    time.sleep(3)  # 30 units banked
    burst = drain(ddb, t)
    assert 25 <= burst <= 45, burst


def test_update_table_takes_effect_at_once(ddb):
    t = provisioned(ddb, 5, 1)
    drain(ddb, t)
    ddb.update_table(TableName=t, ProvisionedThroughput={"ReadCapacityUnits": 5,
                                                         "WriteCapacityUnits": 1000})
    time.sleep(0.2)  # 200 units at the new rate: the next 100 writes all go through
    assert sum(try_put(ddb, t, f"u{i}") for i in range(100)) == 100


def test_reads_throttle_at_read_capacity(ddb, cs):
    t = provisioned(ddb, 1, 100)
    put(ddb, t, "a", payload="y" * 12000)  # 3 strongly consistent read units
    answers = [call(cs, "GetItem", json.dumps({"TableName": t, "Key": {"id": {"S": "a"}},
                                                "ConsistentRead": True})) for _ in range(10)]
    assert [a.status_code for a in answers].count(200) == 1
    throttled = [a.json() for a in answers if a.status_code != 200]
    assert {reasons(b)[0][0] for b in throttled} == {"TableReadProvisionedThroughputExceeded"}


def test_a_hot_partition_key_throttles_while_others_proceed(ddb, cs):
    t = on_demand(ddb)  # no table limit: only the per-key 1,000 write units a second
    big = "z" * 200_000  # 196 units a write
    hot = 0
    while try_put(ddb, t, "hot", big):
        hot += 1
        assert hot < 50, "the hot key never throttled"
    assert 4 <= hot <= 7, hot
    status, body = raw_put(cs, t, "hot", big)
    assert status == 400
    assert reasons(body)[0][0] == "TableWriteKeyRangeThroughputExceeded"
    assert try_put(ddb, t, "cold", big)


def test_on_demand_maximum(ddb, cs):
    t = "c" + uuid.uuid4().hex[:10]
    r = call(cs, "CreateTable", json.dumps({
        "TableName": t, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "OnDemandThroughput": {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 5}}))
    assert r.status_code == 200, r.text
    n = drain(ddb, t)
    assert 4 <= n <= 6
    status, body = raw_put(cs, t, "over")
    assert reasons(body)[0][0] == "TableWriteMaxOnDemandThroughputExceeded"


def test_an_on_demand_global_index_throttles_at_its_maximum(ddb, cs):
    t = "c" + uuid.uuid4().hex[:10]
    r = call(cs, "CreateTable", json.dumps({
        "TableName": t, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [{
            "IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "OnDemandThroughput": {"MaxWriteRequestUnits": 3}}]}))
    assert r.status_code == 200, r.text
    written = 0
    while try_put(ddb, t, f"i{written}", g="v"):
        written += 1
        assert written < 50
    assert 2 <= written <= 5, written
    status, body = raw_put(cs, t, "next")  # no index entry, but the index is out of writes
    assert status == 400
    assert reasons(body) == [("IndexWriteMaxOnDemandThroughputExceeded",
                              f"arn:aws:dynamodb:us-east-1:123456789012:table/{t}/index/gsi")]
    assert body["message"] == ("Throughput exceeds the maximum OnDemandThroughput configured on "
                               "table or index")


def test_a_global_index_out_of_write_capacity_throttles_the_table(ddb, cs):
    t = provisioned(ddb, 100, 100, gsi=(100, 2))
    written = 0
    while try_put(ddb, t, f"i{written}", g="v"):
        written += 1
        assert written < 50
    status, body = raw_put(cs, t, "next")
    assert status == 400
    assert reasons(body) == [("IndexWriteProvisionedThroughputExceeded",
                              f"arn:aws:dynamodb:us-east-1:123456789012:table/{t}/index/gsi")]


def test_query_of_an_index_draws_on_its_read_capacity(ddb):
    t = provisioned(ddb, 100, 100, gsi=(1, 100))
    for i in range(3):
        put(ddb, t, f"q{i}", payload="w" * 7000, g="v")
    kw = dict(TableName=t, IndexName="gsi", KeyConditionExpression="g = :v",
              ExpressionAttributeValues={":v": {"S": "v"}})
    assert ddb.query(**kw)["Count"] == 3
    code, _ = client_error(ddb.query, **kw)
    assert code == "ProvisionedThroughputExceededException"
    ddb.query(TableName=t, KeyConditionExpression="id = :k",
              ExpressionAttributeValues={":k": {"S": "q0"}})  # the table's own capacity


def test_batch_write_leaves_what_it_cannot_write_unprocessed(ddb):
    t = provisioned(ddb, 100, 10)
    drain(ddb, t)
    time.sleep(1)  # about 10 units
    items = [{"PutRequest": {"Item": {"id": {"S": f"b{i}"}, "p": {"S": KB}}}} for i in range(25)]
    r = ddb.batch_write_item(RequestItems={t: items})
    left = r["UnprocessedItems"].get(t, [])
    assert 10 <= len(left) <= 20, len(left)
    rounds = 0
    while left:
        rounds += 1
        assert rounds < 100
        time.sleep(0.3)
        try:
            left = ddb.batch_write_item(RequestItems={t: left})["UnprocessedItems"].get(t, [])
        except botocore.exceptions.ClientError as e:  # none of them admitted this time
            assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    keys = {f"b{i}" for i in range(25)}
    got = ddb.batch_get_item(RequestItems={t: {"Keys": [{"id": {"S": k}} for k in keys]}})
    assert {i["id"]["S"] for i in got["Responses"][t]} == keys


def test_a_transaction_on_a_spent_table_is_cancelled_with_a_throttling_reason(ddb):
    t = provisioned(ddb, 5, 1)
    drain(ddb, t)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": {"id": {"S": "tx"}}}}])
    err = e.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in err["CancellationReasons"]] == ["ThrottlingError"]
    assert not ddb.get_item(TableName=t, Key={"id": {"S": "tx"}}).get("Item")


def test_concurrent_writers_share_one_bucket(ddb, cs):
    t = provisioned(ddb, 5, 20)
    drain(ddb, t)
    ok = []

    def writer(n):
        c = cs.client()
        mine, start = 0, time.monotonic()
        while time.monotonic() - start < 3:
            mine += try_put(c, t, f"w{n}-{uuid.uuid4().hex[:6]}")
        ok.append(mine)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert 40 <= sum(ok) <= 90, ok  # 20 a second for 3 seconds, plus the tail
