"""DynamoDB Streams, black-box through boto3's dynamodbstreams client: what each write records
for each StreamViewType, the record and shard shapes, iterators of every type, enabling and
disabling streams, streams that outlive their table, and DynamoDB's errors.

The behaviour cases hold against DynamoDB too (allowing for its delay before records appear);
the ones that run the server's clock fast (trimming, iterator expiry) are fdyno-specific.
"""
import re
import time

import botocore.exceptions
import pytest

from conftest import Server

KEY = [{"AttributeName": "pk", "KeyType": "HASH"}]
ATTRS = [{"AttributeName": "pk", "AttributeType": "S"}]


def create(ddb, name, view="NEW_AND_OLD_IMAGES"):
    ddb.create_table(TableName=name, KeySchema=KEY, AttributeDefinitions=ATTRS,
                     BillingMode="PAY_PER_REQUEST",
                     StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
    return ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]


def read_all(streams, arn):
    """Every record of every shard, parents before children, with each shard's last page."""
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    out = []
    for shard in shards:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        for _ in range(1000):
            page = streams.get_records(ShardIterator=it)
            out += page["Records"]
            if not page["Records"] or "NextShardIterator" not in page:
                break
            it = page["NextShardIterator"]
    return out


def error(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


@pytest.fixture(scope="module")
def clients(module_server):
    return module_server.client(), module_server.client("dynamodbstreams")


@pytest.mark.parametrize("view", ["NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"])
def test_each_change_once_with_what_the_view_type_keeps(clients, view):
    ddb, streams = clients
    name = "st_view_" + view.lower()
    arn = create(ddb, name, view)
    v1 = {"pk": {"S": "a"}, "v": {"S": "1"}}
    v2 = {"pk": {"S": "a"}, "v": {"S": "2"}}
    ddb.put_item(TableName=name, Item=v1)
    ddb.put_item(TableName=name, Item=v1)  # identical: no record
    ddb.update_item(TableName=name, Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"S": "2"}})
    ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}})
    ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}})  # absent: no record
    records = read_all(streams, arn)
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    keep_new = view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
    keep_old = view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")
    images = [(r["dynamodb"].get("OldImage"), r["dynamodb"].get("NewImage")) for r in records]
    assert images == [(None, v1 if keep_new else None),
                      (v1 if keep_old else None, v2 if keep_new else None),
                      (v2 if keep_old else None, None)]
    sequence = []
    for r in records:
        assert re.fullmatch(r"[0-9a-f]{32}", r["eventID"])
        assert r["eventVersion"] == "1.1"
        assert r["eventSource"] == "aws:dynamodb"
        assert r["awsRegion"] == "us-east-1"
        d = r["dynamodb"]
        assert d["Keys"] == {"pk": {"S": "a"}}
        assert d["StreamViewType"] == view
        assert d["SizeBytes"] > 0
        assert abs(d["ApproximateCreationDateTime"].timestamp() - time.time()) < 120
        assert re.fullmatch(r"[0-9]{21,40}", d["SequenceNumber"])
        sequence.append(int(d["SequenceNumber"]))
        assert "userIdentity" not in r
    assert sequence == sorted(sequence) and len(set(sequence)) == 3
    assert len({r["eventID"] for r in records}) == 3


def test_a_transaction_and_a_batch_record_every_item(clients):
    ddb, streams = clients
    arn = create(ddb, "st_multi")
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "st_multi", "Item": {"pk": {"S": f"t{i}"}}}} for i in range(5)])
    ddb.batch_write_item(RequestItems={"st_multi": [
        {"PutRequest": {"Item": {"pk": {"S": f"b{i}"}}}} for i in range(7)]})
    keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in read_all(streams, arn)]
    assert keys[:5] == [f"t{i}" for i in range(5)]
    assert sorted(keys[5:]) == sorted(f"b{i}" for i in range(7))


def test_describe_and_list(clients):
    ddb, streams = clients
    arn = create(ddb, "st_describe")
    d = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert d["StreamArn"] == arn
    assert d["StreamStatus"] == "ENABLED"
    assert d["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert d["TableName"] == "st_describe"
    assert d["KeySchema"] == KEY
    assert d["StreamLabel"] == arn.rsplit("/", 1)[1]
    assert re.fullmatch(r"shardId-[0-9]{20}-[0-9a-f]{8}", d["Shards"][0]["ShardId"])
    assert "EndingSequenceNumber" not in d["Shards"][0]["SequenceNumberRange"]
    table = ddb.describe_table(TableName="st_describe")["Table"]
    assert table["StreamSpecification"] == {"StreamEnabled": True,
                                            "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table["LatestStreamLabel"] == d["StreamLabel"]
    listed = streams.list_streams(TableName="st_describe")["Streams"]
    assert listed == [{"StreamArn": arn, "TableName": "st_describe",
                       "StreamLabel": d["StreamLabel"]}]
    every, start = [], None
    for _ in range(100):
        page = streams.list_streams(Limit=2, **({"ExclusiveStartStreamArn": start} if start else {}))
        assert len(page["Streams"]) <= 2
        every += page["Streams"]
        start = page.get("LastEvaluatedStreamArn")
        if not start:
            break
    assert arn in [s["StreamArn"] for s in every]
    assert len(every) == len({s["StreamArn"] for s in every})


def test_iterator_types(clients):
    ddb, streams = clients
    arn = create(ddb, "st_iter")
    for i in range(4):
        ddb.put_item(TableName="st_iter", Item={"pk": {"S": f"k{i}"}})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    records = read_all(streams, arn)
    seqs = [r["dynamodb"]["SequenceNumber"] for r in records]

    def read(kind, seq=None):
        kw = {"SequenceNumber": seq} if seq else {}
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType=kind,
                                        **kw)["ShardIterator"]
        page = streams.get_records(ShardIterator=it, Limit=2)
        return [r["dynamodb"]["SequenceNumber"] for r in page["Records"]], page

    assert read("TRIM_HORIZON")[0] == seqs[:2]
    assert read("AT_SEQUENCE_NUMBER", seqs[1])[0] == seqs[1:3]
    assert read("AFTER_SEQUENCE_NUMBER", seqs[1])[0] == seqs[2:4]
    got, page = read("LATEST")
    assert got == [] and "NextShardIterator" in page
    ddb.put_item(TableName="st_iter", Item={"pk": {"S": "late"}})
    later = streams.get_records(ShardIterator=page["NextShardIterator"])["Records"]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in later] == ["late"]
    assert error(lambda: streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="AT_SEQUENCE_NUMBER"))[0] == \
        "ValidationException"


def test_disabled_and_dropped_streams_stay_readable_and_closed(clients):
    ddb, streams = clients
    arn = create(ddb, "st_life", "KEYS_ONLY")
    ddb.put_item(TableName="st_life", Item={"pk": {"S": "x"}})
    ddb.update_table(TableName="st_life", StreamSpecification={"StreamEnabled": False})
    d = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert d["StreamStatus"] == "DISABLED"
    assert "EndingSequenceNumber" in d["Shards"][0]["SequenceNumberRange"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=d["Shards"][0]["ShardId"],
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    page = streams.get_records(ShardIterator=it)
    assert len(page["Records"]) == 1
    assert "NextShardIterator" not in page  # a closed shard read to its end
    ddb.put_item(TableName="st_life", Item={"pk": {"S": "y"}})  # no stream: nothing recorded
    ddb.update_table(TableName="st_life", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    arn2 = ddb.describe_table(TableName="st_life")["Table"]["LatestStreamArn"]
    assert arn2 != arn
    ddb.put_item(TableName="st_life", Item={"pk": {"S": "z"}})
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in read_all(streams, arn2)] == ["z"]
    assert len(read_all(streams, arn)) == 1
    assert {s["StreamArn"] for s in streams.list_streams(TableName="st_life")["Streams"]} == \
        {arn, arn2}
    ddb.delete_table(TableName="st_life")
    d = streams.describe_stream(StreamArn=arn2)["StreamDescription"]
    assert d["StreamStatus"] == "DISABLED"
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in read_all(streams, arn2)] == ["z"]


def test_errors(clients):
    ddb, streams = clients
    arn = create(ddb, "st_errors")
    missing = arn.replace("st_errors", "st_nope")
    assert error(lambda: streams.describe_stream(StreamArn=missing)) == (
        "ResourceNotFoundException", f"Requested resource not found: Stream: {missing} not found")
    assert error(lambda: streams.get_shard_iterator(
        StreamArn=arn, ShardId="shardId-00000000000000000000-00ffff00",
        ShardIteratorType="TRIM_HORIZON"))[0] == "ResourceNotFoundException"
    # A StreamArn that is no stream ARN at all is a ValidationException (as in cases/streams.txt);
    # a well-formed one of a stream that does not exist (above), or of another account, is not
    # found.
    for malformed in [arn.replace(":dynamodb:", ":kinesis:"), arn.split("/stream/")[0]]:
        assert error(lambda: streams.describe_stream(StreamArn=malformed)) == (
            "ValidationException", "Invalid StreamArn")
        assert error(lambda: streams.get_shard_iterator(
            StreamArn=malformed, ShardId="shardId-00000000000000000000-00ffff00",
            ShardIteratorType="TRIM_HORIZON")) == ("ValidationException", "Invalid StreamArn")
    fields = arn.split(":")
    fields[4] = "123456789012" if fields[4] != "123456789012" else "210987654321"
    other = ":".join(fields)
    assert error(lambda: streams.describe_stream(StreamArn=other))[0] == \
        "ResourceNotFoundException"
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert streams.get_records(ShardIterator=it)["Records"] == []


def test_records_older_than_24_hours_are_trimmed_and_iterators_expire(tmp_path):
    # The server's wall clock at 7200x: 24 hours pass in 12 s, 15 minutes in 0.125 s.
    server = Server(tmp_path, [], env={"FDYNO_TEST_CLOCK_RATE": "7200"}).wait_ready()
    try:
        ddb, streams = server.client(), server.client("dynamodbstreams")
        arn = create(ddb, "st_trim")
        ddb.put_item(TableName="st_trim", Item={"pk": {"S": "old"}})
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        time.sleep(0.5)
        assert error(lambda: streams.get_records(ShardIterator=it))[0] == \
            "ExpiredIteratorException"
        old_seq = read_all(streams, arn)[0]["dynamodb"]["SequenceNumber"]
        deadline = time.time() + 40
        while time.time() < deadline and read_all(streams, arn):
            time.sleep(0.5)
        assert read_all(streams, arn) == [], "the record was never trimmed"
        assert error(lambda: streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="AT_SEQUENCE_NUMBER",
            SequenceNumber=old_seq))[0] == "TrimmedDataAccessException"
        ddb.put_item(TableName="st_trim", Item={"pk": {"S": "new"}})
        assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in read_all(streams, arn)] == ["new"]
    finally:
        server.stop()
