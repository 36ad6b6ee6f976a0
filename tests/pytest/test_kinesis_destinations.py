"""Kinesis Data Streams destinations: DynamoDB's state machine and messages. fdyno serves no
Kinesis stream yet, so every destination ends ENABLE_FAILED with DynamoDB's description for the
ARN given, as DynamoDB leaves a destination whose stream it cannot deliver to. The requests on
tables that do not exist, and their answers, are in cases/kinesis.txt."""
import json
import uuid

from conftest import ACCOUNT_ID, client_error
from signing import call

PREFIX = "Table is not in a valid state to enable Kinesis Streaming Destination: "


def stream(name, region="us-east-1", account=ACCOUNT_ID, service="kinesis"):
    return f"arn:aws:{service}:{region}:{account}:stream/{name}"


def table(ddb):
    name = "kd" + uuid.uuid4().hex[:10]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    return name


def test_enable_then_describe(ddb):
    t = table(ddb)
    assert ddb.describe_kinesis_streaming_destination(TableName=t)[
        "KinesisDataStreamDestinations"] == []
    out = ddb.enable_kinesis_streaming_destination(TableName=t, StreamArn=stream("missing"))
    assert out["DestinationStatus"] == "ENABLING" and out["StreamArn"] == stream("missing")
    ddb.enable_kinesis_streaming_destination(TableName=t, StreamArn=stream("far", "eu-west-1"))
    ddb.enable_kinesis_streaming_destination(TableName=t,
                                             StreamArn=stream("theirs", account="999999999999"))
    listed = ddb.describe_kinesis_streaming_destination(TableName=t)[
        "KinesisDataStreamDestinations"]
    belongs = ("The kinesis Arn used to enable kinesis replication belongs to a stream which is ")
    assert listed == [
        {"StreamArn": stream("theirs", account="999999999999"), "DestinationStatus": "ENABLE_FAILED",
         "DestinationStatusDescription": belongs + "not in Active state"},
        {"StreamArn": stream("far", "eu-west-1"), "DestinationStatus": "ENABLE_FAILED",
         "DestinationStatusDescription": belongs + "not in the current region"},
        {"StreamArn": stream("missing"), "DestinationStatus": "ENABLE_FAILED",
         "DestinationStatusDescription": "User does not have a permission to use kinesis stream"}]
    # Enabling a failed stream again flips its entry rather than adding one.
    ddb.enable_kinesis_streaming_destination(TableName=t, StreamArn=stream("missing"))
    listed = ddb.describe_kinesis_streaming_destination(TableName=t)[
        "KinesisDataStreamDestinations"]
    assert [d["StreamArn"] for d in listed] == [stream("missing"), stream("theirs", account="999999999999"),
                                                stream("far", "eu-west-1")]


def test_disable_and_update_need_an_active_destination(module_server, ddb):
    t = table(ddb)
    ddb.enable_kinesis_streaming_destination(TableName=t, StreamArn=stream("missing"))
    assert client_error(ddb.disable_kinesis_streaming_destination, TableName=t,
                        StreamArn=stream("missing")) == (
        "ValidationException",
        PREFIX + "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation.")

    def update(body):
        r = call(module_server, "UpdateKinesisStreamingDestination", json.dumps(body))
        assert r.status_code == 400
        return r.json()["message"]

    assert update({"TableName": t, "StreamArn": stream("missing")}) == (
        "Streaming destination cannot be updated with given parameters: "
        "UpdateKinesisStreamingConfiguration cannot be null or contain only null values")
    config = {"ApproximateCreationDateTimePrecision": "MICROSECOND"}
    assert update({"TableName": t, "StreamArn": stream("never-attached"),
                   "UpdateKinesisStreamingConfiguration": config}) == (
        PREFIX + "No streaming destination with streamArn: " + stream("never-attached"))
    assert update({"TableName": t, "StreamArn": stream("missing"),
                   "UpdateKinesisStreamingConfiguration": config}) == (
        PREFIX + "Kinesis streaming is not in ACTIVE state. Updates are only allowed in ACTIVE "
        f"state. TableName: {t}, kdsArn: {stream('missing')}")
