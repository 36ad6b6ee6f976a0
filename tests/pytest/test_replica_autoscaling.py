"""Replica auto scaling: DynamoDB answers DescribeTableReplicaAutoScaling and
UpdateTableReplicaAutoScaling only for a global table, and a regional table as a missing one
("Global table with name: '<name>' does not exist."); every fdyno table is regional. An update's
own rules come first."""
import uuid

from conftest import ACCOUNT_ID, REGION, client_error

POLICY = {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70.0}}


def table(ddb):
    name = "as" + uuid.uuid4().hex[:10]
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    return name


def not_global(name):
    return ("ResourceNotFoundException", f"Global table with name: '{name}' does not exist.")


def test_a_regional_table_is_not_a_global_table(ddb):
    name = table(ddb)
    assert client_error(ddb.describe_table_replica_auto_scaling, TableName=name) == not_global(name)
    arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"
    assert client_error(ddb.describe_table_replica_auto_scaling, TableName=arn) == not_global(name)
    assert client_error(ddb.describe_table_replica_auto_scaling, TableName="nope-table") == (
        not_global("nope-table"))
    assert client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True}) == (
        not_global(name))
    assert client_error(
        ddb.update_table_replica_auto_scaling, TableName=name,
        ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 1, "MaximumUnits": 10,
                                                   "ScalingPolicyUpdate": POLICY}) == (
        not_global(name))


def test_an_update_is_checked_first(ddb):
    name = table(ddb)
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
