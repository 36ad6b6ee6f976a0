"""Replica auto scaling: DescribeTableReplicaAutoScaling shows every dimension without auto
scaling, UpdateTableReplicaAutoScaling checks requests with DynamoDB's messages, accepts disabling
and refuses enabling (fdyno does not scale capacity by itself)."""
import uuid

from conftest import client_error

DISABLED = {"AutoScalingDisabled": True, "ScalingPolicies": []}
POLICY = {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70.0}}


def table(ddb, on_demand=False):
    name = "as" + uuid.uuid4().hex[:10]
    kw = {"BillingMode": "PAY_PER_REQUEST"} if on_demand else {
        "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}
    gsi = {"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}
    if not on_demand:
        gsi["ProvisionedThroughput"] = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     GlobalSecondaryIndexes=[gsi], **kw)
    return name


def test_describe_shows_no_auto_scaling(ddb):
    name = table(ddb)
    d = ddb.describe_table_replica_auto_scaling(TableName=name)["TableAutoScalingDescription"]
    assert d["TableName"] == name and d["TableStatus"] == "ACTIVE"
    [replica] = d["Replicas"]
    assert replica["RegionName"] == "us-east-1" and replica["ReplicaStatus"] == "ACTIVE"
    assert replica["ReplicaProvisionedReadCapacityAutoScalingSettings"] == DISABLED
    assert replica["ReplicaProvisionedWriteCapacityAutoScalingSettings"] == DISABLED
    assert replica["GlobalSecondaryIndexes"] == [{
        "IndexName": "byg", "IndexStatus": "ACTIVE",
        "ProvisionedReadCapacityAutoScalingSettings": DISABLED,
        "ProvisionedWriteCapacityAutoScalingSettings": DISABLED}]
    od = ddb.describe_table_replica_auto_scaling(TableName=table(ddb, on_demand=True))
    assert od["TableAutoScalingDescription"]["Replicas"][0]["GlobalSecondaryIndexes"] == []
    assert client_error(ddb.describe_table_replica_auto_scaling, TableName="nope-table") == (
        "ResourceNotFoundException", "Requested resource not found: Table: nope-table not found")


def test_update_rules(ddb):
    name = table(ddb)
    # Disabling is what every dimension already is.
    out = ddb.update_table_replica_auto_scaling(
        TableName=name, ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True})
    assert out["TableAutoScalingDescription"]["TableName"] == name
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 1, "MaximumUnits": 10})
    assert (code, message) == ("ValidationException",
                               f"Failed to update settings for global table with name: \u2018{name}"
                               "\u2019: Parameters 'ScalingPolicyUpdate' are required unless auto "
                               "scaling is being disabled.")
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True, "MinimumUnits": 1,
                                                   "MaximumUnits": 2})
    assert message == (f"Failed to update settings for global table with name \u2018{name}\u2019: "
                       "Parameters 'MaximumUnits', 'MinimumUnits' must be left blank when "
                       "disabling auto scaling.")
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        GlobalSecondaryIndexUpdates=[{"IndexName": "nope", "ProvisionedWriteCapacityAutoScalingUpdate":
                                      {"AutoScalingDisabled": True}}])
    assert code == "ResourceNotFoundException" and "\u2018[nope]\u2019 do not exist" in message
    # Enabling is refused: nothing would honour it.
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 1, "MaximumUnits": 10,
                                                   "ScalingPolicyUpdate": POLICY})
    assert code == "ValidationException" and "does not scale provisioned capacity" in message
    od = table(ddb, on_demand=True)
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=od,
        ReplicaUpdates=[{"RegionName": "us-east-1",
                         "ReplicaProvisionedReadCapacityAutoScalingUpdate": {
                             "MinimumUnits": 1, "MaximumUnits": 10, "ScalingPolicyUpdate": POLICY}}])
    assert message == (f"Failed to update global table with name \u2018{od}\u2018. Replicas "
                       "'US-EAST-1' BillingMode is PayPerRequest. You must convert table's "
                       "BillingMode to PROVISIONED to set parameters: "
                       "'ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate'.")
    code, message = client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ReplicaUpdates=[{"RegionName": "eu-west-1",
                         "ReplicaProvisionedReadCapacityAutoScalingUpdate": {
                             "AutoScalingDisabled": True}}])
    assert code == "ValidationException" and message.endswith("[eu-west-1].")
