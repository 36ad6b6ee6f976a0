"""Data directories written by earlier fdyno binaries open with this one and lose nothing.

tests/fixtures/unopenable-after-receipt-expiry: written by a server whose RocksDB memtable insert
hints corrupted the memtable when expired operation receipts were cleared (a range tombstone);
that server, and every later open of the directory, aborted while replaying the write-ahead log
(docs/format/kv_embedded.md, "RocksDB features"). Table `tbl` (hash key `p`, S) holds the
acknowledged items k0..k199 and `after`; one more write was in flight when the server aborted and
was never acknowledged, so it may or may not be there.

tests/fixtures/before-regions: written in open mode by fdyno 8292e58 (the last binary before
regions: catalog format 2) serving with --region eu-west-1, then stopped cleanly. Table `orders`
(hash key `pk`, S; global index `by_g` on `g`, ALL; a NEW_AND_OLD_IMAGES stream; tag
team=fixtures) holds o0..o19 with g = g<i mod 3>, and an AVAILABLE backup `before-regions` of
it; table `plain` (hash key `id`, N; TTL on `ttl`) holds id 1. Its ARNs, as that server showed
them, are in BEFORE_REGIONS below.

fdyno-specific (it starts servers on prepared data directories).
"""
import os
import shutil
import time

from conftest import Server

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


BEFORE_REGIONS = {
    "TableArn": "arn:aws:dynamodb:eu-west-1:000000000001:table/orders",
    "TableId": "ea056fb6-ac13-4acd-adf9-6ba5820dbc66",
    "LatestStreamArn":
        "arn:aws:dynamodb:eu-west-1:000000000001:table/orders/stream/2026-12-07T19:06:49.176",
    "BackupArn":
        "arn:aws:dynamodb:eu-west-1:000000000001:table/orders/backup/01796670409237-20545863",
}


def open_fixture(tmp_path, name, args=()):
    data = tmp_path / "data"
    shutil.copytree(os.path.join(FIXTURES, name), data)
    for root, dirs, files in os.walk(data):
        for f in dirs + files:
            os.chmod(os.path.join(root, f), 0o755 if f in dirs else 0o644)
    # Open mode: the directory predates accounts, so its tables are open mode's account's
    # (docs/format/catalog.md, "Accounts").
    server = Server(tmp_path, list(args), credentials=False)
    server.wait_ready()
    return server


def scan_keys(ddb, table, key):
    pages = ddb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    return [item[key]["S"] for page in pages for item in page["Items"]]


def test_directory_left_by_the_receipt_expiry_abort_opens_with_every_acknowledged_item(tmp_path):
    server = open_fixture(tmp_path, "unopenable-after-receipt-expiry")
    try:
        ddb = server.client()
        keys = scan_keys(ddb, "tbl", "p")
        acknowledged = {f"k{i}" for i in range(200)} | {"after"}
        assert len(keys) == len(set(keys)), "an item was returned twice"
        assert acknowledged <= set(keys), f"lost: {sorted(acknowledged - set(keys))}"
        assert len(set(keys) - acknowledged) <= 1, f"unexpected: {sorted(set(keys) - acknowledged)}"
        assert ddb.describe_table(TableName="tbl")["Table"]["ItemCount"] == len(keys)
        # The directory takes writes again, and the same clear that broke it works now.
        ddb.put_item(TableName="tbl", Item={"p": {"S": "new"}})
        assert ddb.get_item(TableName="tbl", Key={"p": {"S": "new"}},
                            ConsistentRead=True)["Item"] == {"p": {"S": "new"}}
    finally:
        assert server.stop() == 0, server.output()
    server = Server(tmp_path, [], credentials=False).wait_ready()
    try:
        assert len(scan_keys(server.client(), "tbl", "p")) == len(keys) + 1
    finally:
        server.stop()


def wait_for(predicate, what, timeout=30):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(0.1)


def check_before_regions(server):
    eu, us = server.client(region="eu-west-1"), server.client(region="us-east-1")
    assert eu.list_tables()["TableNames"] == ["orders", "plain"]
    assert us.list_tables()["TableNames"] == []  # the tables stay in the region they were in
    table = eu.describe_table(TableName="orders")["Table"]
    for member in ("TableArn", "TableId", "LatestStreamArn"):
        assert table[member] == BEFORE_REGIONS[member], member
    assert sorted(scan_keys(eu, "orders", "pk")) == sorted(f"o{i}" for i in range(20))
    by_g = eu.query(TableName="orders", IndexName="by_g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "g0"}})["Items"]
    assert sorted(i["pk"]["S"] for i in by_g) == sorted(f"o{i}" for i in range(0, 20, 3))
    assert eu.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == [
        {"Key": "team", "Value": "fixtures"}]
    assert eu.describe_time_to_live(TableName="plain")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    backups = eu.list_backups()["BackupSummaries"]
    assert [b["BackupArn"] for b in backups] == [BEFORE_REGIONS["BackupArn"]]
    streams = server.client("dynamodbstreams", region="eu-west-1")
    assert [s["StreamArn"] for s in streams.list_streams()["Streams"]] == [
        BEFORE_REGIONS["LatestStreamArn"]]
    shard = streams.describe_stream(StreamArn=table["LatestStreamArn"])[
        "StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=table["LatestStreamArn"], ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = streams.get_records(ShardIterator=it)["Records"]
    assert len(records) == 20 and {r["eventName"] for r in records} == {"INSERT"}


def test_directory_from_before_regions_keeps_everything_in_the_region_it_was_served_for(
        tmp_path):
    server = open_fixture(tmp_path, "before-regions", ["--region", "eu-west-1"])
    try:
        check_before_regions(server)
        assert "2 table(s) from before regions now belong to region eu-west-1" in server.output()
        # The backup from before regions restores, by the restore worker, in its region.
        eu = server.client(region="eu-west-1")
        eu.restore_table_from_backup(TargetTableName="restored",
                                     BackupArn=BEFORE_REGIONS["BackupArn"])
        wait_for(lambda: eu.describe_table(TableName="restored")["Table"]["TableStatus"] ==
                 "ACTIVE", "the restore")
        assert len(scan_keys(eu, "restored", "pk")) == 20
        # Writes go on, and the stream from before regions records them.
        eu.put_item(TableName="orders", Item={"pk": {"S": "after"}, "g": {"S": "g0"}})
    finally:
        assert server.stop() == 0, server.output()
    # A second start finds the catalog migrated and moves nothing.
    server = Server(tmp_path, ["--region", "eu-west-1"], credentials=False).wait_ready()
    try:
        assert "from before regions" not in server.output()
        assert server.client(region="eu-west-1").list_tables()["TableNames"] == [
            "orders", "plain", "restored"]
    finally:
        server.stop()
