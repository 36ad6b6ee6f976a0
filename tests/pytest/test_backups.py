"""On-demand backups, black-box through boto3: CreateBackup, DescribeBackup, ListBackups,
DeleteBackup and RestoreTableFromBackup with DynamoDB's states, errors and overrides; a restored
table equals its source (items, and its indexes through Query); SIGKILL during a backup and
during a restore: after a restart the backup becomes AVAILABLE and the restore finishes, and a
table is never ACTIVE before it holds every item. The request rules and errors that one request
shows are in cases/backups.txt.

The crash tests are fdyno-specific: they pause the server's backup worker half-way
(FDYNO_TEST_BACKUP_PAUSE_AFTER) before killing it.
"""
import signal
import time

import botocore.exceptions
import pytest

from conftest import ACCOUNT_ID, REGION, Server, scan_by_pk_sk as scan
from test_items import raw_call


def error(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def create(ddb, name, billing="PAY_PER_REQUEST"):
    kw = {"BillingMode": billing}
    gsi_throughput = {}
    if billing == "PROVISIONED":
        kw["ProvisionedThroughput"] = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6}
        gsi_throughput = {"ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                              for a, t in (("pk", "S"), ("sk", "N"), ("l", "N"), ("g", "S"))],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[
            {"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}, **gsi_throughput},
            {"IndexName": "by_g_sk", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v"]},
             **gsi_throughput}],
        **kw)


def item(i, payload=20):
    it = {"pk": {"S": f"p{i % 13}"}, "sk": {"N": str(i)}, "v": {"S": "x" * payload}}
    if i % 3:
        it["l"] = {"N": str(i * 7 % 101)}
    if i % 4:
        it["g"] = {"S": f"g{i % 5}"}
    return it


def load(ddb, name, n, payload=20):
    for start in range(0, n, 25):
        requests = [{"PutRequest": {"Item": item(i, payload)}} for i in range(start, min(n, start + 25))]
        r = ddb.batch_write_item(RequestItems={name: requests})
        assert not r.get("UnprocessedItems")


def wait(predicate, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def backup_status(ddb, arn):
    return ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"]


def table_status(ddb, name):
    return ddb.describe_table(TableName=name)["Table"]["TableStatus"]


def backup(ddb, table, name="bk1"):
    r = ddb.create_backup(TableName=table, BackupName=name)["BackupDetails"]
    wait(lambda: backup_status(ddb, r["BackupArn"]) == "AVAILABLE", "the backup")
    return r


def test_backup_lifecycle_and_descriptions(server):
    ddb = server.client()
    create(ddb, "bk_src", billing="PROVISIONED")
    load(ddb, "bk_src", 60)
    created = ddb.create_backup(TableName="bk_src", BackupName="first")["BackupDetails"]
    arn = created["BackupArn"]
    prefix = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/bk_src/backup/"
    assert arn.startswith(prefix) and len(arn) - len(prefix) == 23
    assert created["BackupName"] == "first"
    assert created["BackupStatus"] == "CREATING"
    assert created["BackupType"] == "USER"
    wait(lambda: backup_status(ddb, arn) == "AVAILABLE", "the backup")
    d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
    assert d["BackupDetails"]["BackupSizeBytes"] > 0
    src = d["SourceTableDetails"]
    table = ddb.describe_table(TableName="bk_src")["Table"]
    assert src["TableName"] == "bk_src" and src["TableId"] == table["TableId"]
    assert src["TableArn"] == table["TableArn"]
    assert src["ItemCount"] == 60
    assert src["BillingMode"] == "PROVISIONED"
    assert src["ProvisionedThroughput"] == {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6}
    assert src["KeySchema"] == table["KeySchema"]
    features = d["SourceTableFeatureDetails"]
    assert [i["IndexName"] for i in features["LocalSecondaryIndexes"]] == ["by_l"]
    assert [i["IndexName"] for i in features["GlobalSecondaryIndexes"]] == ["by_g", "by_g_sk"]
    assert features["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"] == {
        "ReadCapacityUnits": 3, "WriteCapacityUnits": 4}

    second = backup(ddb, "bk_src", "second")
    listed = ddb.list_backups(TableName="bk_src")["BackupSummaries"]
    assert [b["BackupArn"] for b in listed] == [arn, second["BackupArn"]]
    assert listed[0]["BackupStatus"] == "AVAILABLE" and listed[0]["TableName"] == "bk_src"
    page = ddb.list_backups(TableName="bk_src", Limit=1)
    assert [b["BackupArn"] for b in page["BackupSummaries"]] == [arn]
    assert page["LastEvaluatedBackupArn"] == arn
    rest = ddb.list_backups(TableName="bk_src", ExclusiveStartBackupArn=arn)
    assert [b["BackupArn"] for b in rest["BackupSummaries"]] == [second["BackupArn"]]
    assert "LastEvaluatedBackupArn" not in rest
    assert ddb.list_backups(TableName="bk_src", BackupType="SYSTEM")["BackupSummaries"] == []
    assert len(ddb.list_backups(TableName="bk_src", BackupType="ALL")["BackupSummaries"]) == 2
    # Bounds in whole seconds (this botocore sends timestamps so): lower inclusive, upper exclusive.
    first_s = int(created["BackupCreationDateTime"].timestamp())
    second_s = int(second["BackupCreationDateTime"].timestamp())
    both = [arn, second["BackupArn"]]

    def listed_between(**bounds):
        return [b["BackupArn"] for b in
                ddb.list_backups(TableName="bk_src", **bounds)["BackupSummaries"]]

    assert listed_between(TimeRangeLowerBound=first_s) == both
    assert listed_between(TimeRangeLowerBound=second_s + 1) == []
    assert listed_between(TimeRangeUpperBound=first_s) == []
    assert listed_between(TimeRangeUpperBound=second_s + 1) == both
    assert listed_between(TimeRangeLowerBound=first_s, TimeRangeUpperBound=first_s) == []
    assert error(lambda: listed_between(TimeRangeLowerBound=second_s + 1,
                                        TimeRangeUpperBound=first_s)) == (
        "ValidationException", "One or more parameter values were invalid: Time range lower bound "
                               "must be less than or equal to upper bound")

    deleted = ddb.delete_backup(BackupArn=arn)["BackupDescription"]
    assert deleted["BackupDetails"]["BackupStatus"] == "DELETED"
    assert error(lambda: ddb.describe_backup(BackupArn=arn)) == (
        "BackupNotFoundException", f"Backup not found: {arn}")
    assert error(lambda: ddb.delete_backup(BackupArn=arn))[0] == "BackupNotFoundException"
    assert [b["BackupArn"] for b in ddb.list_backups(TableName="bk_src")["BackupSummaries"]] == [
        second["BackupArn"]]


def test_restore_equals_the_source_and_is_unusable_until_active(server):
    ddb = server.client()
    create(ddb, "rs_src")
    load(ddb, "rs_src", 300)
    b = backup(ddb, "rs_src")
    indexes = ("by_l", "by_g", "by_g_sk")
    source_indexes = {index: scan(ddb, "rs_src", index) for index in indexes}
    # Writes after the backup are not in it.
    ddb.put_item(TableName="rs_src", Item=item(10_000))
    ddb.delete_item(TableName="rs_src", Key={"pk": {"S": "p0"}, "sk": {"N": "0"}})
    r = ddb.restore_table_from_backup(TargetTableName="rs_copy", BackupArn=b["BackupArn"])
    desc = r["TableDescription"]
    assert desc["TableStatus"] == "CREATING"
    assert desc["RestoreSummary"]["SourceBackupArn"] == b["BackupArn"]
    assert desc["RestoreSummary"]["RestoreInProgress"] is True
    assert desc["RestoreSummary"]["SourceTableArn"].endswith(":table/rs_src")
    wait(lambda: table_status(ddb, "rs_copy") == "ACTIVE", "the restore")
    t = ddb.describe_table(TableName="rs_copy")["Table"]
    assert "RestoreSummary" not in t  # DynamoDB leaves it out once the table is ACTIVE
    assert t["ItemCount"] == 300
    assert [i["IndexStatus"] for i in t["GlobalSecondaryIndexes"]] == ["ACTIVE", "ACTIVE"]
    expected = [item(i) for i in range(300)]
    expected.sort(key=lambda x: (x["pk"]["S"], int(x["sk"]["N"])))
    assert scan(ddb, "rs_copy") == expected
    for index in indexes:
        assert scan(ddb, "rs_copy", index) == source_indexes[index], index
    assert len(source_indexes["by_l"]) == len([x for x in expected if "l" in x])
    q = ddb.query(TableName="rs_copy", IndexName="by_g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "g1"}})
    assert q["Count"] == len([x for x in expected if x.get("g") == {"S": "g1"}])
    assert error(lambda: ddb.restore_table_from_backup(
        TargetTableName="rs_copy", BackupArn=b["BackupArn"])) == (
        "TableAlreadyExistsException", "Table already exists: rs_copy")


def raw_restore(ddb, **body):
    """RestoreTableFromBackup sent raw (OnDemandThroughputOverride is newer than Debian's
    botocore): (status, body)."""
    r = raw_call(ddb, "RestoreTableFromBackup", body)
    return r.status_code, r.json()


def test_restore_overrides(server):
    ddb = server.client()
    create(ddb, "ov_src", billing="PROVISIONED")
    load(ddb, "ov_src", 40)
    b = backup(ddb, "ov_src")
    # An override may rename an index (same key schema and projection), not change it.
    r = ddb.restore_table_from_backup(
        TargetTableName="ov_copy", BackupArn=b["BackupArn"], BillingModeOverride="PAY_PER_REQUEST",
        GlobalSecondaryIndexOverride=[{
            "IndexName": "by_g2", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexOverride=[],
        SSESpecificationOverride={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "k1"})
    desc = r["TableDescription"]
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [i["IndexName"] for i in desc["GlobalSecondaryIndexes"]] == ["by_g2"]
    assert "LocalSecondaryIndexes" not in desc
    assert sorted(a["AttributeName"] for a in desc["AttributeDefinitions"]) == ["g", "pk", "sk"]
    assert desc["SSEDescription"]["KMSMasterKeyArn"].endswith(":key/k1")
    wait(lambda: table_status(ddb, "ov_copy") == "ACTIVE", "the restore")
    assert len(scan(ddb, "ov_copy")) == 40
    assert scan(ddb, "ov_copy", "by_g2") == sorted(
        [item(i) for i in range(40) if "g" in item(i)],
        key=lambda x: (x["pk"]["S"], int(x["sk"]["N"])))
    # The throughput override is the table's; indexes keep the backup's unless overridden.
    # The ARN of another real region names the same backup, as in DynamoDB.
    prov = ddb.restore_table_from_backup(
        TargetTableName="ov_prov", BackupArn=b["BackupArn"].replace(REGION, "eu-west-1"),
        ProvisionedThroughputOverride={"ReadCapacityUnits": 9, "WriteCapacityUnits": 8})
    assert prov["TableDescription"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert {i["IndexName"]: i["ProvisionedThroughput"]["ReadCapacityUnits"]
            for i in prov["TableDescription"]["GlobalSecondaryIndexes"]} == {"by_g": 3,
                                                                            "by_g_sk": 3}
    wait(lambda: table_status(ddb, "ov_prov") == "ACTIVE", "the restore")
    # OnDemandThroughputOverride on a switch to on-demand.
    status, body = raw_restore(ddb, TargetTableName="ov_od", BackupArn=b["BackupArn"],
                               BillingModeOverride="PAY_PER_REQUEST",
                               OnDemandThroughputOverride={"MaxReadRequestUnits": 50,
                                                           "MaxWriteRequestUnits": 40})
    assert status == 200, body
    wait(lambda: table_status(ddb, "ov_od") == "ACTIVE", "the restore")
    described = raw_call(ddb, "DescribeTable", {"TableName": "ov_od"}).json()["Table"]
    assert described["OnDemandThroughput"] == {"MaxReadRequestUnits": 50,
                                               "MaxWriteRequestUnits": 40}
    by_g = {"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}
    units = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    bad = [
        (dict(BillingModeOverride="PAY_PER_REQUEST", ProvisionedThroughputOverride=units),
         "Cannot override ProvisionedThroughput if BillingMode is overridden to PAY_PER_REQUEST"),
        (dict(BillingModeOverride="PAY_PER_REQUEST",
              GlobalSecondaryIndexOverride=[dict(by_g, ProvisionedThroughput=units)]),
         "Cannot override ProvisionedThroughput if BillingMode is overridden to PAY_PER_REQUEST "
         "for index by_g"),
        (dict(BillingModeOverride="PROVISIONED"),
         "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED"),
        (dict(GlobalSecondaryIndexOverride=[by_g]), "Must specify provisioned throughput for index by_g"),
        (dict(OnDemandThroughputOverride={"MaxReadRequestUnits": 5}),
         "Cannot override MaxReadRequestUnits for OnDemandThroughput unless BillingModeOverride is "
         "PAY_PER_REQUEST"),
        (dict(BillingModeOverride="PAY_PER_REQUEST",
              OnDemandThroughputOverride={"MaxReadRequestUnits": 0}),
         "Requested MaxReadRequestUnits for OnDemandThroughput is outside of valid range"),
        (dict(GlobalSecondaryIndexOverride=[dict(by_g, Projection={"ProjectionType": "KEYS_ONLY"},
                                                 ProvisionedThroughput=units)]),
         "Index by_g does not match a secondary index that existed in the source table and cannot "
         "be created during the restore operation"),
    ]
    for overrides, message in bad:
        status, body = raw_restore(ddb, TargetTableName="ov_bad", BackupArn=b["BackupArn"],
                                   **overrides)
        assert (status, body["__type"].rsplit("#")[-1], body["message"]) == (
            400, "ValidationException", "Invalid Request: " + message), overrides
    assert error(lambda: ddb.describe_table(TableName="ov_bad"))[0] == "ResourceNotFoundException"
    # An on-demand backup takes no throughput override without a switch.
    create(ddb, "ov_src_od")
    b = backup(ddb, "ov_src_od", "bk2")
    status, body = raw_restore(ddb, TargetTableName="ov_bad", BackupArn=b["BackupArn"],
                               ProvisionedThroughputOverride=units)
    assert body["message"] == ("Invalid Request: Cannot override ProvisionedThroughput unless "
                               "BillingMode is PROVISIONED")


def test_a_backup_of_another_account_is_refused(server):
    # The other errors' requests and answers are in cases/backups.txt. This answer names the
    # caller, as DynamoDB's does: only its type is checked.
    ddb = server.client()
    create(ddb, "er_src")
    other = f"arn:aws:dynamodb:{REGION}:999999999999:table/er_src/backup/01700000000000-00000000"
    assert error(lambda: ddb.describe_backup(BackupArn=other))[0] == "AccessDeniedException"


def kill(server):
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(30)
    server.stop()


def paused(server):
    return "backup worker paused" in server.output()


def test_sigkill_during_backup_and_restore(tmp_path):
    # A backup of several chunks, killed after its first chunk.
    first = Server(tmp_path, [], env={"FDYNO_TEST_BACKUP_PAUSE_AFTER": "1"}).wait_ready()
    ddb = first.client()
    create(ddb, "k_src")
    load(ddb, "k_src", 2500, payload=1500)  # about 4 MB: several chunks and restore batches
    arn = ddb.create_backup(TableName="k_src", BackupName="kill")["BackupDetails"]["BackupArn"]
    wait(lambda: paused(first), "the worker to pause")
    assert backup_status(ddb, arn) == "CREATING"
    kill(first)

    second = Server(tmp_path, []).wait_ready()
    ddb = second.client()
    wait(lambda: backup_status(ddb, arn) == "AVAILABLE", "the backup after a restart")
    assert "starting again" in second.output()
    d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
    assert d["SourceTableDetails"]["ItemCount"] == 2500
    second.stop()

    # A restore of several batches, killed after its first.
    third = Server(tmp_path, [], env={"FDYNO_TEST_BACKUP_PAUSE_AFTER": "1"}).wait_ready()
    ddb = third.client()
    ddb.restore_table_from_backup(TargetTableName="k_copy", BackupArn=arn)
    wait(lambda: paused(third), "a paused restore")
    assert table_status(ddb, "k_copy") == "CREATING"
    assert error(lambda: ddb.get_item(TableName="k_copy", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}}))[
        0] == "ResourceNotFoundException"
    assert error(lambda: ddb.delete_table(TableName="k_copy")) == (
        "ResourceInUseException",
        "Attempt to change a resource which is still in use: Table is being created: k_copy")
    assert error(lambda: ddb.delete_backup(BackupArn=arn)) == (
        "BackupInUseException", f"Backup is being used to restore table: {arn}")
    assert error(lambda: ddb.restore_table_from_backup(
        TargetTableName="k_copy2", BackupArn=arn)) == (
        "BackupInUseException", f"Backup is being used to restore another table: {arn}")
    # The operations on its settings do not find it yet, as in DynamoDB.
    not_found = ("ResourceNotFoundException", "Requested resource not found: Table: k_copy not found")
    assert error(lambda: ddb.describe_time_to_live(TableName="k_copy")) == not_found
    assert error(lambda: ddb.update_table(TableName="k_copy", TableClass="STANDARD")) == not_found
    copy_arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/k_copy"
    assert error(lambda: ddb.tag_resource(ResourceArn=copy_arn, Tags=[{"Key": "k", "Value": "v"}])) == (
        "ResourceNotFoundException", f"Requested resource not found: ResourceArn: {copy_arn} not found")
    assert error(lambda: ddb.create_backup(TableName="k_copy", BackupName="early")) == (
        "TableNotFoundException", "Table not found: k_copy")
    assert error(lambda: ddb.describe_continuous_backups(TableName="k_copy"))[0] == (
        "TableNotFoundException")
    kill(third)

    fourth = Server(tmp_path, []).wait_ready()
    ddb = fourth.client()
    seen_active_count = []

    def active():
        t = ddb.describe_table(TableName="k_copy")["Table"]
        if t["TableStatus"] == "ACTIVE":
            seen_active_count.append(t["ItemCount"])
            return True
        return False

    wait(active, "the restore after a restart")
    assert seen_active_count == [2500]
    assert scan(ddb, "k_copy") == scan(ddb, "k_src")
    assert scan(ddb, "k_copy", "by_g") == scan(ddb, "k_src", "by_g")
    assert scan(ddb, "k_copy", "by_l") == scan(ddb, "k_src", "by_l")
    fourth.stop()


def enable_pitr(ddb, name):
    ddb.update_continuous_backups(
        TableName=name,
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})


def system_backups(ddb, table):
    return ddb.list_backups(TableName=table, BackupType="SYSTEM")["BackupSummaries"]


def test_deleting_a_table_with_point_in_time_recovery_keeps_a_system_backup(server):
    # DynamoDB keeps a SYSTEM backup "<table>$DeletedTableBackup" of a deleted table that had
    # point-in-time recovery, for 35 days; it cannot be deleted, and restores like any backup.
    ddb = server.client()
    create(ddb, "sys_src")
    load(ddb, "sys_src", 300)
    enable_pitr(ddb, "sys_src")
    items = scan(ddb, "sys_src")
    create(ddb, "sys_plain")
    for name in ("sys_src", "sys_plain"):
        ddb.delete_table(TableName=name)
    assert system_backups(ddb, "sys_plain") == []
    [summary] = system_backups(ddb, "sys_src")
    arn = summary["BackupArn"]
    assert summary["BackupName"] == "sys_src$DeletedTableBackup"
    assert summary["BackupType"] == "SYSTEM" and summary["TableName"] == "sys_src"
    assert arn.endswith("-00000000")
    created = summary["BackupCreationDateTime"].timestamp()
    assert summary["BackupExpiryDateTime"].timestamp() == pytest.approx(created + 35 * 86400)
    assert ddb.list_backups(TableName="sys_src")["BackupSummaries"] == []  # USER only
    assert [b["BackupArn"] for b in
            ddb.list_backups(TableName="sys_src", BackupType="ALL")["BackupSummaries"]] == [arn]
    wait(lambda: backup_status(ddb, arn) == "AVAILABLE", "the system backup")
    details = ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
    assert details["BackupType"] == "SYSTEM" and "BackupExpiryDateTime" in details
    code, message = error(lambda: ddb.delete_backup(BackupArn=arn))
    assert code == "ValidationException"
    prefix = (f"Invalid Request: User is not allowed to delete the system backup with arn {arn}. "
              "It will automatically expire on ")
    assert message.startswith(prefix), message
    ddb.restore_table_from_backup(TargetTableName="sys_back", BackupArn=arn)
    wait(lambda: table_status(ddb, "sys_back") == "ACTIVE", "the restore")
    assert scan(ddb, "sys_back") == items
    assert len(scan(ddb, "sys_back", "by_g")) == sum("g" in i for i in items)


def test_system_backup_survives_a_kill_while_the_table_data_waits(tmp_path):
    # The deleted table's data is held from the purge until its SYSTEM backup is made, also
    # across a kill in the middle of the backup.
    first = Server(tmp_path, [], env={"FDYNO_TEST_BACKUP_PAUSE_AFTER": "1"}).wait_ready()
    ddb = first.client()
    create(ddb, "sk_src")
    load(ddb, "sk_src", 2500, payload=1500)  # about 4 MB: several chunks
    enable_pitr(ddb, "sk_src")
    items = scan(ddb, "sk_src")
    ddb.delete_table(TableName="sk_src")
    wait(lambda: paused(first), "the worker to pause")
    time.sleep(1.5)  # the purge worker runs meanwhile
    [summary] = system_backups(ddb, "sk_src")
    assert backup_status(ddb, summary["BackupArn"]) == "CREATING"
    kill(first)

    second = Server(tmp_path, []).wait_ready()
    ddb = second.client()
    arn = summary["BackupArn"]
    wait(lambda: backup_status(ddb, arn) == "AVAILABLE", "the backup after a restart")
    d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
    assert d["SourceTableDetails"]["ItemCount"] == 2500
    ddb.restore_table_from_backup(TargetTableName="sk_back", BackupArn=arn)
    wait(lambda: table_status(ddb, "sk_back") == "ACTIVE", "the restore")
    assert scan(ddb, "sk_back") == items
    second.stop()


def test_backup_records_on_demand_throughput_and_ttl_as_described(server):
    # A backup's SourceTableDetails carries the table's OnDemandThroughput (and its indexes'),
    # and its TimeToLiveDescription says what DescribeTimeToLive says.
    ddb = server.client()
    limits = {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    r = raw_call(ddb, "CreateTable", {
        "TableName": "odt_src", "BillingMode": "PAY_PER_REQUEST", "OnDemandThroughput": limits,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "OnDemandThroughput": {"MaxReadRequestUnits": 7}}]})
    assert r.status_code == 200, r.text
    ddb.update_time_to_live(TableName="odt_src", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"})
    ttl = ddb.describe_time_to_live(TableName="odt_src")["TimeToLiveDescription"]
    arn = backup(ddb, "odt_src")["BackupArn"]
    d = raw_call(ddb, "DescribeBackup", {"BackupArn": arn}).json()["BackupDescription"]
    assert d["SourceTableDetails"]["OnDemandThroughput"] == limits
    features = d["SourceTableFeatureDetails"]
    assert features["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 7}
    assert features["TimeToLiveDescription"] == ttl
