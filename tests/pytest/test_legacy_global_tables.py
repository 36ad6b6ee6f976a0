"""Global tables version 2017.11.29 as DynamoDB answers them today: none can be created, so none
exists."""
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
    assert client_error(ddb.update_global_table, GlobalTableName="missing-gt",
                        ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}]) == \
        ("ValidationException", REFUSED)
    for n in (name, "missing-gt"):
        assert client_error(ddb.describe_global_table, GlobalTableName=n) == (
            "GlobalTableNotFoundException",
            f"Global table not found: Global table with name: '{n}' does not exist.")
        assert client_error(ddb.describe_global_table_settings, GlobalTableName=n) == (
            "GlobalTableNotFoundException", f"Global table with name: '{n}' does not exist.")
        assert client_error(ddb.update_global_table_settings, GlobalTableName=n,
                            GlobalTableBillingMode="PAY_PER_REQUEST") == (
            "GlobalTableNotFoundException", f"Global table with name: '{n}' does not exist.")
        assert client_error(ddb.update_global_table, GlobalTableName=n,
                            ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}])[0] == \
            "GlobalTableNotFoundException"
    assert client_error(ddb.update_global_table, GlobalTableName=name, ReplicaUpdates=[]) == (
        "ValidationException", "One or more parameter values were invalid")
    out = ddb.list_global_tables(Limit=1)
    assert out["GlobalTables"] == [] and "LastEvaluatedGlobalTableName" not in out
    # The table itself is untouched.
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"


def test_names_and_entries_are_checked_before_a_global_table_is_looked_up(ddb):
    # DynamoDB's answers to degenerate requests, recorded in 2026.
    from test_items import raw_call

    def answer(operation, body):
        r = raw_call(ddb, operation, body)
        return r.status_code, r.json()["__type"].rsplit("#", 1)[-1], r.json()["message"]

    short = "TableName must be at least 3 characters long and at most 255 characters long"
    for operation in ("DescribeGlobalTable", "DescribeGlobalTableSettings"):
        assert answer(operation, {"GlobalTableName": ""}) == (400, "ValidationException", short)
    assert answer("UpdateGlobalTable", {"GlobalTableName": "missing-gt",
                                        "ReplicaUpdates": [{}]}) == (
        400, "ValidationException", "One or more parameter values were invalid")
    assert answer("UpdateGlobalTableSettings", {"GlobalTableName": "missing-gt",
                                                "ReplicaSettingsUpdate": [{}]}) == (
        400, "ValidationException", "1 validation error detected: Value null at "
        "'replicaSettingsUpdate.1.member.regionName' failed to satisfy constraint: Member must "
        "not be null")
