"""Global tables, version 2019.11.21: UpdateTable's ReplicaUpdates adds and removes replicas in
other regions, DescribeTable shows them, and every write in any region reaches every other
asynchronously, once, with the last writer winning.

DynamoDB behaviour as recorded against DynamoDB in 2026 (the shapes of DescribeTable and of the
UpdateTable response, the error texts and their conditions, the stream rules, the 24-hour rule of
a source region), except where a test says fdyno-specific (--replication-delay, kill -9).
"""
import json
import random
import threading
import time

from pathlib import Path

import botocore.exceptions
import pytest

from conftest import Server
from signing import call

US, EU, AP = "us-east-1", "eu-west-1", "ap-southeast-2"


def error(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def create(ddb, name, stream=None, gsi=False):
    spec = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    if stream:
        spec["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream}
    if gsi:
        spec["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        spec["GlobalSecondaryIndexes"] = [{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    return ddb.create_table(**spec)["TableDescription"]


def wait_until(check, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def replicas_active(ddb, name, others):
    """Waits until the table, seen from ddb's region, is ACTIVE with exactly `others` ACTIVE (a
    table's Replicas list the other regions)."""
    def check():
        t = ddb.describe_table(TableName=name)["Table"]
        got = {r["RegionName"]: r["ReplicaStatus"] for r in t.get("Replicas", [])}
        return t["TableStatus"] == "ACTIVE" and got == {r: "ACTIVE" for r in others}
    wait_until(check, what=f"replicas {others} of {name} ACTIVE")


def add_replica(ddb, name, region, others):
    ddb.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": region}}])
    replicas_active(ddb, name, others)


def raw(server, region, operation, body):
    """A signed request as JSON, for what this botocore's model does not know (newer members of
    DescribeTable, DeletionProtectionEnabled): (status code, parsed body)."""
    r = call(server, operation, json.dumps(body), region=region)
    return r.status_code, r.json()


def scan_all(ddb, name):
    items, start = [], None
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        page = ddb.scan(TableName=name, ConsistentRead=True, **kw)
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return sorted(items, key=lambda i: i["pk"]["S"])


def test_a_replica_is_created_filled_and_described(server):
    us, eu = server.client(region=US), server.client(region=EU)
    create(us, "gtab")
    for i in range(30):
        us.put_item(TableName="gtab", Item={"pk": {"S": f"k{i}"}, "v": {"N": str(i)}})
    out = us.update_table(TableName="gtab",
                          ReplicaUpdates=[{"Create": {"RegionName": EU}}])["TableDescription"]
    # The response: UPDATING, a global table already, the new replica not listed yet.
    assert out["TableStatus"] == "UPDATING"
    assert out["GlobalTableVersion"] == "2019.11.21"
    assert out["Replicas"] == []
    # The first replica enables the stream, with both images, as DynamoDB does.
    assert out["StreamSpecification"] == {"StreamEnabled": True,
                                          "StreamViewType": "NEW_AND_OLD_IMAGES"}
    replicas_active(us, "gtab", [EU])
    assert raw(server, US, "DescribeTable", {"TableName": "gtab"})[1]["Table"]["Replicas"] == [{
        "RegionName": EU, "ReplicaStatus": "ACTIVE",
        "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000,
                           "Status": "ACTIVE"},
        "GlobalTableSettingsReplicationMode": "ENABLED_WITH_OVERRIDES"}]
    replica = eu.describe_table(TableName="gtab")["Table"]
    assert replica["TableArn"].startswith(f"arn:aws:dynamodb:{EU}:")
    assert replica["TableStatus"] == "ACTIVE"
    assert [r["RegionName"] for r in replica["Replicas"]] == [US]
    assert raw(server, EU, "DescribeTable", {"TableName": "gtab"})[1]["Table"][
        "GlobalTableSettingsReplicationMode"] == "ENABLED_WITH_OVERRIDES"
    assert replica["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert replica["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert scan_all(eu, "gtab") == scan_all(us, "gtab")
    assert len(scan_all(eu, "gtab")) == 30
    # A regional table shows neither member.
    create(us, "plain")
    plain = us.describe_table(TableName="plain")["Table"]
    assert "Replicas" not in plain and "GlobalTableVersion" not in plain


def test_writes_in_every_region_reach_the_others(server):
    us, eu, ap = (server.client(region=r) for r in (US, EU, AP))
    create(us, "gtab", gsi=True)
    add_replica(us, "gtab", EU, [EU])
    add_replica(eu, "gtab", AP, [US, AP])
    # The order they joined, as each region saw it.
    assert [r["RegionName"] for r in us.describe_table(TableName="gtab")["Table"]["Replicas"]] \
        == [EU, AP]
    us.put_item(TableName="gtab", Item={"pk": {"S": "from-us"}, "g": {"S": "x"}})
    eu.put_item(TableName="gtab", Item={"pk": {"S": "from-eu"}, "g": {"S": "x"}})
    ap.update_item(TableName="gtab", Key={"pk": {"S": "from-ap"}},
                   UpdateExpression="SET g = :g", ExpressionAttributeValues={":g": {"S": "x"}})
    for client in (us, eu, ap):
        wait_until(lambda: len(scan_all(client, "gtab")) == 3, what="three items everywhere")
        # The replica's own indexes are maintained by the replicated writes.
        q = client.query(TableName="gtab", IndexName="by_g", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "x"}})
        assert q["Count"] == 3
    ap.delete_item(TableName="gtab", Key={"pk": {"S": "from-us"}})
    for client in (us, eu, ap):
        wait_until(lambda: len(scan_all(client, "gtab")) == 2, what="the delete everywhere")


def test_the_local_region_and_other_mistakes_are_refused(server):
    us, eu = server.client(region=US), server.client(region=EU)
    create(us, "gtab", stream="KEYS_ONLY")

    def refused(updates, **kw):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            us.update_table(TableName="gtab", ReplicaUpdates=updates, **kw)
        return error(e)
    assert refused([{"Create": {"RegionName": US}}]) == (
        "ValidationException", "Cannot add or delete the local region through ReplicaUpdates. "
        "Use CreateTable, DeleteTable, or UpdateTable as required.")
    assert refused([{"Delete": {"RegionName": EU}}]) == (
        "ValidationException", "Update global table operation failed because one or more "
        "replicas were not part of the global table. Please retry the request without these "
        "replicas: [eu-west-1].")
    code, message = refused([{"Create": {"RegionName": "us-fake-1"}}])
    assert code == "ValidationException" and message.startswith(
        "Region us-fake-1 is not supported. The latest version of global tables are only "
        "supported in the following regions: [")
    assert refused([{"Create": {"RegionName": EU}}, {"Create": {"RegionName": AP}}]) == (
        "ValidationException",
        "Update table operation with more than one create or delete replica actions not allowed")
    assert refused([{"Update": {"RegionName": EU}}]) == (
        "ValidationException",
        "There are no actions specified in the Replica Update Action of the request.")
    # A table of that name in the region already: never adopted.
    create(eu, "gtab")
    assert refused([{"Create": {"RegionName": EU}}]) == (
        "ValidationException", "Failed to create a the new replica of table with name: "
        "\u2018gtab\u2019 because one or more replicas already existed as tables.")
    eu.delete_table(TableName="gtab")
    # Two identical Creates count once.
    us.update_table(TableName="gtab", ReplicaUpdates=[{"Create": {"RegionName": EU}},
                                                      {"Create": {"RegionName": EU}}])
    replicas_active(us, "gtab", [EU])
    # A KEYS_ONLY stream stays KEYS_ONLY (DynamoDB replicates without the images).
    assert us.describe_table(TableName="gtab")["Table"]["StreamSpecification"][
        "StreamViewType"] == "KEYS_ONLY"
    assert refused([{"Create": {"RegionName": EU}}])[1].startswith("Failed to create a the new")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.update_table(TableName="gtab", StreamSpecification={"StreamEnabled": False})
    assert error(e) == ("ValidationException", "One or more parameter values were invalid: "
                        "Disabling Stream is not allowed for a Global Table replica.")
    # A provisioned table's writes are not auto scaled here, so it cannot become global.
    us.create_table(TableName="prov", AttributeDefinitions=[{"AttributeName": "pk",
                                                               "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                    ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.update_table(TableName="prov", ReplicaUpdates=[{"Create": {"RegionName": EU}}])
    assert error(e) == ("ValidationException",
                        "Table write capacity should either be Pay-Per-Request or AutoScaled.")


def test_a_source_region_and_a_protected_replica_may_not_leave(start_server):
    # fdyno-specific flag: deletion protection may be turned off again at once.
    server = start_server("--deletion-protection-interval", "0")
    us, eu, ap = (server.client(region=r) for r in (US, EU, AP))
    create(us, "gtab")
    add_replica(us, "gtab", EU, [EU])
    add_replica(eu, "gtab", AP, [US, AP])  # eu-west-1 filled the ap-southeast-2 replica
    source_rule = ("ValidationException", "Replica cannot be deleted because it has acted as a "
                   "source region for new replica(s) being added to the table in the last 24 "
                   "hours.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.update_table(TableName="gtab", ReplicaUpdates=[{"Delete": {"RegionName": EU}}])
    assert error(e) == source_rule
    with pytest.raises(botocore.exceptions.ClientError) as e:
        eu.delete_table(TableName="gtab")
    assert error(e) == source_rule
    assert raw(server, AP, "UpdateTable", {"TableName": "gtab",
                                           "DeletionProtectionEnabled": True})[0] == 200
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.update_table(TableName="gtab", ReplicaUpdates=[{"Delete": {"RegionName": AP}}])
    assert error(e) == ("ValidationException", "Cannot delete table gtab in region "
                        "ap-southeast-2 because it has deletion protection enabled. Disable "
                        "deletion protection first.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ap.delete_table(TableName="gtab")
    assert error(e)[1].startswith("Cannot delete table gtab in region ap-southeast-2")
    assert raw(server, AP, "UpdateTable", {"TableName": "gtab",
                                           "DeletionProtectionEnabled": False})[0] == 200
    # Leaf first: once the replica it filled is gone, eu-west-1 may leave.
    ap.delete_table(TableName="gtab")
    us.update_table(TableName="gtab", ReplicaUpdates=[{"Delete": {"RegionName": EU}}])


def test_deleting_replicas_leaves_a_regional_table(server):
    us, eu = server.client(region=US), server.client(region=EU)
    create(us, "gtab")
    add_replica(us, "gtab", EU, [EU])
    us.put_item(TableName="gtab", Item={"pk": {"S": "a"}})
    out = us.update_table(TableName="gtab", ReplicaUpdates=[{"Delete": {"RegionName": EU}}])
    # The response: UPDATING, the replica still as it was.
    assert out["TableDescription"]["TableStatus"] == "UPDATING"
    assert [(r["RegionName"], r["ReplicaStatus"])
            for r in out["TableDescription"]["Replicas"]] == [(EU, "ACTIVE")]

    def gone():
        try:
            eu.describe_table(TableName="gtab")
            return False
        except botocore.exceptions.ClientError as e:
            return e.response["Error"]["Code"] == "ResourceNotFoundException"
    wait_until(gone, what="the replica table dropped")
    t = wait_until(lambda: (lambda d: d if d["TableStatus"] == "ACTIVE" else None)(
        us.describe_table(TableName="gtab")["Table"]), what="the table ACTIVE")
    assert "Replicas" not in t and "GlobalTableVersion" not in t
    # The stream stays, and may now be disabled.
    assert t["StreamSpecification"]["StreamEnabled"] is True
    us.update_table(TableName="gtab", StreamSpecification={"StreamEnabled": False})
    assert us.get_item(TableName="gtab", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    # DeleteTable of a replica takes it out of its global table.
    add_replica(us, "gtab", EU, [EU])
    eu.delete_table(TableName="gtab")
    assert "Replicas" not in us.describe_table(TableName="gtab")["Table"]


def test_concurrent_writers_converge_on_the_last_writer(server):
    regions = [US, EU, AP]
    clients = {r: server.client(region=r) for r in regions}
    create(clients[US], "gtab")
    add_replica(clients[US], "gtab", EU, [EU])
    add_replica(clients[US], "gtab", AP, [EU, AP])
    errors = []

    def writer(region, seed):
        rng = random.Random(seed)
        c = server.client(region=region)
        try:
            for i in range(150):
                key = {"pk": {"S": f"k{rng.randrange(15)}"}}
                if rng.random() < 0.2:
                    c.delete_item(TableName="gtab", Key=key)
                else:
                    c.put_item(TableName="gtab", Item={**key, "w": {"S": f"{region}-{i}"}})
        except Exception as e:  # noqa: BLE001: reported below
            errors.append(e)
    threads = [threading.Thread(target=writer, args=(r, n)) for n, r in enumerate(regions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors

    def converged():
        views = [scan_all(clients[r], "gtab") for r in regions]
        return views if views[0] == views[1] == views[2] else None
    views = wait_until(converged, what="every region the same")
    assert views[0] == scan_all(clients[US], "gtab")


def restart(server, *args):
    """The same data directory served again (after a kill)."""
    return Server(Path(server.data_dir).parent, list(args)).wait_ready()


def test_replication_resumes_after_kill_9(start_server):
    server = start_server("--replication-delay", "2")  # fdyno-specific: a visible delay
    us, eu = server.client(region=US), server.client(region=EU)
    create(us, "gtab")
    add_replica(us, "gtab", EU, [EU])
    for i in range(50):
        us.put_item(TableName="gtab", Item={"pk": {"S": f"k{i}"}})
    assert len(scan_all(eu, "gtab")) < 50  # still waiting out the delay
    server.kill()
    again = restart(server, "--replication-delay", "0")
    try:
        eu = again.client(region=EU)
        wait_until(lambda: len(scan_all(eu, "gtab")) == 50, what="every change after the restart")
    finally:
        again.stop()


def test_a_backfill_killed_midway_finishes_after_restart(start_server):
    server = start_server()
    us = server.client(region=US)
    create(us, "gtab")
    for i in range(0, 3000, 25):
        us.batch_write_item(RequestItems={"gtab": [
            {"PutRequest": {"Item": {"pk": {"S": f"k{j}"}, "pad": {"S": "x" * 200}}}}
            for j in range(i, i + 25)]})
    us.update_table(TableName="gtab", ReplicaUpdates=[{"Create": {"RegionName": EU}}])
    server.kill()
    again = restart(server)
    try:
        us, eu = again.client(region=US), again.client(region=EU)
        replicas_active(us, "gtab", [EU])
        assert len(scan_all(eu, "gtab")) == 3000
        assert scan_all(eu, "gtab") == scan_all(us, "gtab")
    finally:
        again.stop()


def test_replica_auto_scaling_describes_a_global_table(server):
    us = server.client(region=US)
    create(us, "gtab", gsi=True)
    with pytest.raises(botocore.exceptions.ClientError) as e:  # regional: not a global table
        us.describe_table_replica_auto_scaling(TableName="gtab")
    assert error(e) == ("ResourceNotFoundException",
                        "Global table with name: 'gtab' does not exist.")
    add_replica(us, "gtab", EU, [EU])
    d = us.describe_table_replica_auto_scaling(TableName="gtab")["TableAutoScalingDescription"]
    assert d["TableName"] == "gtab" and d["TableStatus"] == "ACTIVE"
    # Every region, its own too, in region order.
    assert [(r["RegionName"], r["ReplicaStatus"]) for r in d["Replicas"]] == \
        [(EU, "ACTIVE"), (US, "ACTIVE")]
    assert d["Replicas"][0]["GlobalSecondaryIndexes"] == [{"IndexName": "by_g",
                                                           "IndexStatus": "ACTIVE"}]
    off = us.update_table_replica_auto_scaling(
        TableName="gtab", ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True})
    assert off["TableAutoScalingDescription"] == d
    with pytest.raises(botocore.exceptions.ClientError) as e:
        us.update_table_replica_auto_scaling(
            TableName="gtab", ProvisionedWriteCapacityAutoScalingUpdate={
                "MinimumUnits": 1, "MaximumUnits": 10, "ScalingPolicyUpdate": {
                    "TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70.0}}})
    assert error(e) == (
        "ValidationException", "Failed to update global table with name \u2018gtab\u2018. "
        "Replicas 'EU-WEST-1', 'US-EAST-1' BillingMode is PayPerRequest. You must convert "
        "table's BillingMode to PROVISIONED to set parameters: "
        "'GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate'.")
