"""WarmThroughput on tables and global secondary indexes, and an index's OnDemandThroughput, as
DynamoDB shows and changes them: present on every table and global index of DescribeTable (an
on-demand one at 12,000 reads and 4,000 writes a second, a provisioned one at its capacity),
absent from CreateTable's response unless given, shown with its old values and UPDATING in the
response of the UpdateTable that raises it, never decreasing, keeping the highest throughput
ever provisioned across throughput and billing mode changes, and kept across a restart.

Debian's botocore predates these members, so requests are sent raw. The request rules and their
messages are in cases/table_capacity.txt."""
import json
import uuid

import pytest

from conftest import Server
from test_items import raw_call

ON_DEMAND = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}


def call(ddb, operation, **body):
    r = raw_call(ddb, operation, body)
    assert r.status_code == 200, r.text
    return r.json()


def warm(read, write, status="ACTIVE"):
    return {"ReadUnitsPerSecond": read, "WriteUnitsPerSecond": write, "Status": status}


def create(ddb, provisioned=None, gsi=None, **extra):
    """A table with key `pk` and, with `gsi` (extra members of the index), a global index `gsi1`
    on `g`; PROVISIONED with `provisioned` (read, write) units, else on demand."""
    name = "warm_" + uuid.uuid4().hex[:10]
    body = {"TableName": name,
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "g", "AttributeType": "S"}][:2 if gsi is not None else 1],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    units = None
    if provisioned:
        units = {"ReadCapacityUnits": provisioned[0], "WriteCapacityUnits": provisioned[1]}
        body["ProvisionedThroughput"] = units
    else:
        body["BillingMode"] = "PAY_PER_REQUEST"
    if gsi is not None:
        index = {"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                 "Projection": {"ProjectionType": "ALL"}}
        if units:
            index["ProvisionedThroughput"] = units
        index.update(gsi)
        body["GlobalSecondaryIndexes"] = [index]
    body.update(extra)
    return name, call(ddb, "CreateTable", **body)["TableDescription"]


def describe(ddb, name):
    return call(ddb, "DescribeTable", TableName=name)["Table"]


def index_warm(table):
    return table["GlobalSecondaryIndexes"][0].get("WarmThroughput")


def test_every_table_and_global_index_shows_its_warm_throughput(ddb):
    name, created = create(ddb, gsi={})
    assert "WarmThroughput" not in created
    assert index_warm(created) is None
    table = describe(ddb, name)
    assert table["WarmThroughput"] == ON_DEMAND
    assert index_warm(table) == ON_DEMAND
    deleted = call(ddb, "DeleteTable", TableName=name)["TableDescription"]
    assert "WarmThroughput" not in deleted

    name, _ = create(ddb, provisioned=(5, 7), gsi={})
    table = describe(ddb, name)
    assert table["WarmThroughput"] == warm(5, 7)
    assert index_warm(table) == warm(5, 7)


def test_a_warm_throughput_given_at_creation(ddb):
    name, created = create(ddb, gsi={"WarmThroughput": {"ReadUnitsPerSecond": 13000,
                                                         "WriteUnitsPerSecond": 5000}},
                           WarmThroughput={"ReadUnitsPerSecond": 12001})
    assert created["WarmThroughput"] == warm(12001, 4000, "UPDATING")
    table = describe(ddb, name)
    assert table["WarmThroughput"] == warm(12001, 4000)
    assert index_warm(table) == warm(13000, 5000)
    name, _ = create(ddb, provisioned=(10, 10),
                     WarmThroughput={"ReadUnitsPerSecond": 100, "WriteUnitsPerSecond": 100})
    assert describe(ddb, name)["WarmThroughput"] == warm(100, 100)


def test_raising_the_warm_throughput_of_a_table_and_an_index(ddb):
    name, _ = create(ddb, gsi={})
    updated = call(ddb, "UpdateTable", TableName=name,
                   WarmThroughput={"ReadUnitsPerSecond": 20000})["TableDescription"]
    assert updated["TableStatus"] == "ACTIVE"
    assert updated["WarmThroughput"] == dict(ON_DEMAND, Status="UPDATING")
    assert describe(ddb, name)["WarmThroughput"] == warm(20000, 4000)
    # The same values again are accepted; an empty one beside another change is left out.
    call(ddb, "UpdateTable", TableName=name, WarmThroughput={"ReadUnitsPerSecond": 20000})
    call(ddb, "UpdateTable", TableName=name, WarmThroughput={}, DeletionProtectionEnabled=False)
    assert describe(ddb, name)["WarmThroughput"] == warm(20000, 4000)

    updated = call(ddb, "UpdateTable", TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
        "IndexName": "gsi1", "WarmThroughput": {"WriteUnitsPerSecond": 4001},
        "OnDemandThroughput": {"MaxReadRequestUnits": 50}}}])["TableDescription"]
    assert index_warm(updated) == dict(ON_DEMAND, Status="UPDATING")
    index = describe(ddb, name)["GlobalSecondaryIndexes"][0]
    assert index["WarmThroughput"] == warm(12000, 4001)
    assert index["OnDemandThroughput"] == {"MaxReadRequestUnits": 50}
    # -1 clears a maximum (the response echoes it as -1, as the table's).
    cleared = call(ddb, "UpdateTable", TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
        "IndexName": "gsi1", "OnDemandThroughput": {"MaxReadRequestUnits": -1}}}])
    assert cleared["TableDescription"]["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": -1}
    assert "OnDemandThroughput" not in describe(ddb, name)["GlobalSecondaryIndexes"][0]


def test_warm_throughput_keeps_the_highest_throughput_ever_provisioned(ddb):
    name, _ = create(ddb, provisioned=(1, 1), gsi={})

    def units(read, write, index=True):
        update = {"TableName": name,
                  "ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write}}
        if index:
            update["GlobalSecondaryIndexUpdates"] = [{"Update": {
                "IndexName": "gsi1", "ProvisionedThroughput": update["ProvisionedThroughput"]}}]
        call(ddb, "UpdateTable", **update)

    units(3, 3)
    units(1, 2)
    table = describe(ddb, name)
    assert table["WarmThroughput"] == warm(3, 3)
    assert index_warm(table) == warm(3, 3)
    call(ddb, "UpdateTable", TableName=name, BillingMode="PAY_PER_REQUEST")
    table = describe(ddb, name)
    assert table["WarmThroughput"] == ON_DEMAND
    assert index_warm(table) == ON_DEMAND
    call(ddb, "UpdateTable", TableName=name, BillingMode="PROVISIONED",
         ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
         GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gsi1", "ProvisionedThroughput": {
             "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}])
    table = describe(ddb, name)
    assert table["WarmThroughput"] == ON_DEMAND
    assert index_warm(table) == ON_DEMAND
    r = raw_call(ddb, "UpdateTable", {"TableName": name, "WarmThroughput": {
        "ReadUnitsPerSecond": 11999}})
    assert r.status_code == 400 and "decreasing WarmThroughput" in r.json()["message"]


def test_warm_throughput_and_index_maximums_survive_a_restart(tmp_path):
    server = Server(tmp_path, [])
    server.wait_ready()
    ddb = server.client()
    name, _ = create(ddb, gsi={"OnDemandThroughput": {"MaxWriteRequestUnits": 7}})
    call(ddb, "UpdateTable", TableName=name, WarmThroughput={"WriteUnitsPerSecond": 9000})
    before = describe(ddb, name)
    server.stop()
    server = Server(tmp_path, [])
    try:
        server.wait_ready()
        after = describe(server.client(), name)
    finally:
        server.stop()
    assert after["WarmThroughput"] == before["WarmThroughput"] == warm(12000, 9000)
    assert after["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {"MaxWriteRequestUnits": 7}
