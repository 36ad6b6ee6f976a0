"""Global tables version 2017.11.29 as DynamoDB answers them today: none can be created, so none
exists. The requests that name no table, and their answers, are in cases/global_tables.txt."""
import uuid

from conftest import client_error

REFUSED = ("One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 "
           "is not supported. We recommend using DynamoDB global tables version 2019.11.21, "
           "instead of version 2017.11.29 (Legacy).")


def test_nothing_can_be_created_and_nothing_exists(ddb):
    name = "gt" + uuid.uuid4().hex[:10]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     StreamSpecification={"StreamEnabled": True,
                                          "StreamViewType": "NEW_AND_OLD_IMAGES"})
    assert client_error(ddb.create_global_table, GlobalTableName=name,
                        ReplicationGroup=[{"RegionName": "us-east-1"}]) == \
        ("ValidationException", REFUSED)
    # A table is not a global table: answered as the missing one of cases/global_tables.txt.
    assert client_error(ddb.describe_global_table, GlobalTableName=name) == (
        "GlobalTableNotFoundException",
        f"Global table not found: Global table with name: '{name}' does not exist.")
    assert client_error(ddb.describe_global_table_settings, GlobalTableName=name) == (
        "GlobalTableNotFoundException", f"Global table with name: '{name}' does not exist.")
    assert client_error(ddb.update_global_table_settings, GlobalTableName=name,
                        GlobalTableBillingMode="PAY_PER_REQUEST") == (
        "GlobalTableNotFoundException", f"Global table with name: '{name}' does not exist.")
    assert client_error(ddb.update_global_table, GlobalTableName=name,
                        ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}])[0] == \
        "GlobalTableNotFoundException"
    assert client_error(ddb.update_global_table, GlobalTableName=name, ReplicaUpdates=[]) == (
        "ValidationException", "One or more parameter values were invalid")
    out = ddb.list_global_tables(Limit=1)
    assert out["GlobalTables"] == [] and "LastEvaluatedGlobalTableName" not in out
    # The table itself is untouched.
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
