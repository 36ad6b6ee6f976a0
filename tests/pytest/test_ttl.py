"""Time to Live, black-box: UpdateTimeToLive and DescribeTimeToLive with DynamoDB's states and
validations, expired items hidden from every read and deleted by the sweeper with the whole
write path (indexes, counts, stream records with the Time to Live identity).

fdyno-specific where it shortens the sweep interval or the fixed interval between TTL changes
(flags); the validation cases hold against DynamoDB too. The request rules that one request
shows are in cases/ttl.txt.
"""
import time

import botocore.exceptions
import pytest

from conftest import Server


def create(ddb, name, stream=None, gsi=False):
    kw = {}
    if stream:
        kw["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream}
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    if gsi:
        attrs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=attrs, BillingMode="PAY_PER_REQUEST", **kw)


def error(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def ttl(ddb, name, enabled, attr="exp"):
    return ddb.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": enabled, "AttributeName": attr})


def describe(ddb, name):
    return ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]


def wait_enabled(ddb, name):
    for _ in range(200):
        if describe(ddb, name)["TimeToLiveStatus"] == "ENABLED":
            return
        time.sleep(0.02)
    raise AssertionError("TTL never became ENABLED")


def test_states_and_the_rules_of_changing_them(server):
    ddb = server.client()
    create(ddb, "ttl_rules")
    assert describe(ddb, "ttl_rules") == {"TimeToLiveStatus": "DISABLED"}
    assert error(lambda: ttl(ddb, "ttl_rules", False)) == (
        "ValidationException", "TimeToLive is already disabled")
    r = ttl(ddb, "ttl_rules", True)
    assert r["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "exp"}
    assert describe(ddb, "ttl_rules") == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    # Content errors come before the fixed interval.
    assert error(lambda: ttl(ddb, "ttl_rules", True)) == (
        "ValidationException", "TimeToLive is already enabled")
    assert error(lambda: ttl(ddb, "ttl_rules", True, "other")) == (
        "ValidationException",
        "TimeToLive is active on a different AttributeName: current AttributeName is exp")
    assert error(lambda: ttl(ddb, "ttl_rules", False, "other")) == (
        "ValidationException",
        "TimeToLive is active on a different AttributeName: current AttributeName is exp")
    assert error(lambda: ttl(ddb, "ttl_rules", False)) == (
        "ValidationException",
        "Time to live has been modified multiple times within a fixed interval")
    assert describe(ddb, "ttl_rules")["TimeToLiveStatus"] == "ENABLED"


@pytest.fixture
def fast(start_server):
    """A server that sweeps every 0.2 s and allows any TTL change."""
    return start_server("--ttl-sweep-interval", "0.2", "--ttl-update-interval", "0")


def test_expired_items_are_hidden_then_deleted_with_their_index_entries(fast):
    ddb = fast.client()
    create(ddb, "ttl_sweep", stream="NEW_AND_OLD_IMAGES", gsi=True)
    past, future = int(time.time()) - 60, int(time.time()) + 3600
    ddb.put_item(TableName="ttl_sweep", Item={"pk": {"S": "keep"}, "g": {"S": "x"},
                                              "exp": {"N": str(future)}})
    ddb.put_item(TableName="ttl_sweep", Item={"pk": {"S": "gone"}, "g": {"S": "x"},
                                              "exp": {"N": str(past)}})
    ddb.put_item(TableName="ttl_sweep", Item={"pk": {"S": "plain"}, "g": {"S": "x"}})
    ttl(ddb, "ttl_sweep", True)
    wait_enabled(ddb, "ttl_sweep")
    # Once the expiry index holds the items that existed (DescribeTimeToLive says ENABLED from
    # the call on, as DynamoDB does), hidden on every read path at once (DynamoDB shows expired
    # items until it deletes them: docs/compatibility.md).
    key = {"pk": {"S": "gone"}}
    for _ in range(200):
        if "Item" not in ddb.get_item(TableName="ttl_sweep", Key=key, ConsistentRead=True):
            break
        time.sleep(0.05)
    assert "Item" not in ddb.get_item(TableName="ttl_sweep", Key=key, ConsistentRead=True)
    scanned = {i["pk"]["S"] for i in ddb.scan(TableName="ttl_sweep")["Items"]}
    assert "gone" not in scanned
    q = ddb.query(TableName="ttl_sweep", IndexName="by_g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "x"}})
    assert {i["pk"]["S"] for i in q["Items"]} == {"keep", "plain"}
    got = ddb.batch_get_item(RequestItems={"ttl_sweep": {"Keys": [key, {"pk": {"S": "keep"}}]}})
    assert [i["pk"]["S"] for i in got["Responses"]["ttl_sweep"]] == ["keep"]
    tg = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": "ttl_sweep", "Key": key}}])
    assert "Item" not in tg["Responses"][0]
    # Deleted by the sweeper, with its index entry and count, and streamed as a TTL delete.
    for _ in range(100):
        if ddb.describe_table(TableName="ttl_sweep")["Table"]["ItemCount"] == 2:
            break
        time.sleep(0.05)
    table = ddb.describe_table(TableName="ttl_sweep")["Table"]
    assert table["ItemCount"] == 2
    assert table["GlobalSecondaryIndexes"][0]["ItemCount"] == 2
    streams = fast.client("dynamodbstreams")
    arn = table["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = streams.get_records(ShardIterator=it)["Records"]
    removes = [r for r in records if r["eventName"] == "REMOVE"]
    assert len(removes) == 1
    assert removes[0]["dynamodb"]["Keys"] == key
    assert removes[0]["dynamodb"]["OldImage"]["exp"] == {"N": str(past)}
    assert removes[0]["userIdentity"] == {"PrincipalId": "dynamodb.amazonaws.com",
                                          "Type": "Service"}
    assert all("userIdentity" not in r for r in records if r["eventName"] != "REMOVE")


def test_a_refreshed_item_is_not_deleted_and_disable_stops_expiry(fast):
    ddb = fast.client()
    create(ddb, "ttl_refresh")
    ttl(ddb, "ttl_refresh", True)
    wait_enabled(ddb, "ttl_refresh")
    soon = int(time.time()) + 1
    ddb.put_item(TableName="ttl_refresh", Item={"pk": {"S": "a"}, "exp": {"N": str(soon)}})
    ddb.update_item(TableName="ttl_refresh", Key={"pk": {"S": "a"}}, UpdateExpression="SET exp = :e",
                    ExpressionAttributeValues={":e": {"N": str(soon + 3600)}})
    time.sleep(2.5)
    assert "Item" in ddb.get_item(TableName="ttl_refresh", Key={"pk": {"S": "a"}})
    # Disabled: an expired item is neither hidden nor deleted.
    ttl(ddb, "ttl_refresh", False)
    assert describe(ddb, "ttl_refresh") == {"TimeToLiveStatus": "DISABLED"}
    ddb.put_item(TableName="ttl_refresh", Item={"pk": {"S": "b"}, "exp": {"N": "1700000000"}})
    time.sleep(0.6)
    assert "Item" in ddb.get_item(TableName="ttl_refresh", Key={"pk": {"S": "b"}})
    # Enabled again on another attribute: the backfill indexes the existing items.
    ttl(ddb, "ttl_refresh", True, "exp")
    wait_enabled(ddb, "ttl_refresh")
    for _ in range(100):
        if "Item" not in ddb.get_item(TableName="ttl_refresh", Key={"pk": {"S": "b"}},
                                      ConsistentRead=True) and \
                ddb.describe_table(TableName="ttl_refresh")["Table"]["ItemCount"] == 1:
            break
        time.sleep(0.05)
    assert ddb.describe_table(TableName="ttl_refresh")["Table"]["ItemCount"] == 1


def test_the_fixed_interval_can_be_shortened(tmp_path):
    server = Server(tmp_path, ["--ttl-update-interval", "0.5"]).wait_ready()
    try:
        ddb = server.client()
        create(ddb, "ttl_interval")
        ttl(ddb, "ttl_interval", True)
        assert error(lambda: ttl(ddb, "ttl_interval", False))[1] == \
            "Time to live has been modified multiple times within a fixed interval"
        time.sleep(0.6)
        ttl(ddb, "ttl_interval", False)
    finally:
        server.stop()
