"""Regions: a request acts in the region its signature is scoped to, and each region of an account
has its own tables, streams and backups, as DynamoDB's regional endpoints do. One fdyno endpoint
serves every region; --one-region makes every request act in --region (DynamoDB Local's -sharedDb).

DynamoDB behaviour, except where a test says fdyno-specific (flags, one endpoint for all).
"""
import subprocess

import botocore.exceptions
import pytest

from conftest import ACCOUNT_ID, FDYNO_BIN, Server

US, EU = "us-east-1", "eu-west-1"


def error(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def create(ddb, name, key="pk", stream=False):
    spec = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
                KeySchema=[{"AttributeName": key, "KeyType": "HASH"}])
    if stream:
        spec["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    return ddb.create_table(**spec)["TableDescription"]


def test_the_same_name_in_two_regions_is_two_tables(server):
    us, eu = server.client(region=US), server.client(region=EU)
    a = create(us, "orders", key="id")
    b = create(eu, "orders", key="order")
    assert a["TableArn"] == f"arn:aws:dynamodb:{US}:{ACCOUNT_ID}:table/orders"
    assert b["TableArn"] == f"arn:aws:dynamodb:{EU}:{ACCOUNT_ID}:table/orders"
    assert a["TableId"] != b["TableId"]
    create(eu, "only-eu")
    us.put_item(TableName="orders", Item={"id": {"S": "u1"}})
    eu.put_item(TableName="orders", Item={"order": {"S": "e1"}})
    # Each region has its own key schema, items and list of tables.
    assert us.describe_table(TableName="orders")["Table"]["KeySchema"][0]["AttributeName"] == "id"
    assert eu.scan(TableName="orders")["Items"] == [{"order": {"S": "e1"}}]
    assert us.scan(TableName="orders")["Items"] == [{"id": {"S": "u1"}}]
    assert us.list_tables()["TableNames"] == ["orders"]
    assert eu.list_tables()["TableNames"] == ["only-eu", "orders"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.describe_table(TableName="only-eu")
    assert error(e)[0] == "ResourceNotFoundException"
    # Another region's table ARN is refused where a table name or ARN is taken.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.describe_table(TableName=b["TableArn"])
    assert error(e) == ("ValidationException", "1 validation error detected: Invalid AWS region "
                        f"in '{b['TableArn']}'")
    # Deleting one region's table leaves the other's.
    eu.delete_table(TableName="orders")
    assert us.get_item(TableName="orders", Key={"id": {"S": "u1"}},
                       ConsistentRead=True)["Item"] == {"id": {"S": "u1"}}
    assert eu.list_tables()["TableNames"] == ["only-eu"]


def test_streams_and_backups_belong_to_their_region(server):
    us, eu = server.client(region=US), server.client(region=EU)
    create(us, "tbl", stream=True)
    described = create(eu, "tbl", stream=True)
    eu.put_item(TableName="tbl", Item={"pk": {"S": "eu-item"}})
    streams_eu = server.client("dynamodbstreams", region=EU)
    streams_us = server.client("dynamodbstreams", region=US)
    listed = streams_eu.list_streams()["Streams"]
    assert [s["StreamArn"] for s in listed] == [described["LatestStreamArn"]]
    assert f":{EU}:" in described["LatestStreamArn"]
    assert [s["StreamArn"] for s in streams_us.list_streams()["Streams"]] != \
        [described["LatestStreamArn"]]
    shard = streams_eu.describe_stream(
        StreamArn=described["LatestStreamArn"])["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams_eu.get_shard_iterator(StreamArn=described["LatestStreamArn"], ShardId=shard,
                                       ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = streams_eu.get_records(ShardIterator=it)["Records"]
    assert [r["dynamodb"]["Keys"] for r in records] == [{"pk": {"S": "eu-item"}}]
    assert records[0]["awsRegion"] == EU
    # Another region knows neither the stream nor its iterators.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        streams_us.describe_stream(StreamArn=described["LatestStreamArn"])
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        streams_us.get_records(ShardIterator=it)
    assert error(e) == ("ValidationException", "Invalid ShardIterator")

    backup = eu.create_backup(TableName="tbl", BackupName="nightly")["BackupDetails"]
    assert f":{EU}:" in backup["BackupArn"]
    assert [b["BackupArn"] for b in eu.list_backups()["BackupSummaries"]] == [backup["BackupArn"]]
    assert us.list_backups()["BackupSummaries"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.describe_backup(BackupArn=backup["BackupArn"])
    assert error(e)[0] == "BackupNotFoundException"
    assert eu.describe_backup(BackupArn=backup["BackupArn"])["BackupDescription"][
        "BackupDetails"]["BackupArn"] == backup["BackupArn"]


def test_one_region_makes_every_request_act_in_the_servers_region(start_server):
    # fdyno-specific: --one-region (DynamoDB Local's -sharedDb).
    server = start_server("--one-region", "--region", "eu-central-1")
    create(server.client(region=US), "shared")
    eu = server.client(region=EU)
    assert eu.list_tables()["TableNames"] == ["shared"]
    assert eu.describe_table(TableName="shared")["Table"]["TableArn"] == \
        f"arn:aws:dynamodb:eu-central-1:{ACCOUNT_ID}:table/shared"


def test_tables_survive_a_restart_in_their_region(tmp_path):
    server = Server(tmp_path, []).wait_ready()
    create(server.client(region=EU), "kept")
    server.client(region=EU).put_item(TableName="kept", Item={"pk": {"S": "x"}})
    assert server.stop() == 0, server.output()
    again = Server(tmp_path, []).wait_ready()  # the same data directory
    try:
        assert again.client(region=EU).get_item(
            TableName="kept", Key={"pk": {"S": "x"}}, ConsistentRead=True)["Item"] == \
            {"pk": {"S": "x"}}
        assert again.client(region=US).list_tables()["TableNames"] == []
    finally:
        again.stop()


@pytest.mark.parametrize("region", ["", "us:east", "a/b", "x" * 65])
def test_a_region_that_cannot_name_tables_is_refused_at_start(tmp_path, region):
    # fdyno-specific: --region is part of every ARN and of the catalog's keys.
    done = subprocess.run([FDYNO_BIN, "serve", "--region", region, "--data-dir",
                           str(tmp_path / "d"), "--listen", "127.0.0.1:0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--region must be 1 to 64 letters, digits, '-' or '_'" in done.stdout + done.stderr
