"""Point-in-time recovery, black-box through boto3: UpdateContinuousBackups and
DescribeContinuousBackups with their true states and DynamoDB's errors, and
RestoreTableToPointInTime to chosen moments: the restored table (items, and its indexes through
Query) equals what the table held then, and its description carries RestoreSummary.

Restores to a moment less than 6 seconds old wait for it to settle (docs/format/pitr.md), so
these tests sleep past it once, after their writes. RecoveryPeriodInDays is sent as a raw signed
request: Debian's botocore does not know it. The requests on tables that do not exist, and their
answers, are in cases/pitr.txt.
"""
import json
import time
from datetime import datetime, timezone

import botocore.exceptions
import pytest

from conftest import ACCOUNT_ID, REGION
from signing import call

SETTLE_S = 6.5


def error(call_):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call_()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def create(ddb, name):
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])


def enable(ddb, name, enabled=True):
    return ddb.update_continuous_backups(
        TableName=name,
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": enabled},
    )["ContinuousBackupsDescription"]


def items(ddb, name):
    out = {}
    for page in ddb.get_paginator("scan").paginate(TableName=name):
        for it in page["Items"]:
            out[it["pk"]["S"]] = it
    return out


def wait_active(ddb, name, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE":
            return t
        time.sleep(0.2)
    raise AssertionError(f"{name} is not ACTIVE after {timeout} s")


def test_describe_is_true_and_update_switches_it(ddb):
    create(ddb, "pitr_state")
    d = ddb.describe_continuous_backups(TableName="pitr_state")["ContinuousBackupsDescription"]
    assert d["ContinuousBackupsStatus"] == "ENABLED"
    assert d["PointInTimeRecoveryDescription"] == {"PointInTimeRecoveryStatus": "DISABLED"}

    before = datetime.now(timezone.utc)
    on = enable(ddb, "pitr_state")
    p = on["PointInTimeRecoveryDescription"]
    assert p["PointInTimeRecoveryStatus"] == "ENABLED"
    assert abs((p["EarliestRestorableDateTime"] - before).total_seconds()) < 5
    assert p["LatestRestorableDateTime"] >= p["EarliestRestorableDateTime"]
    d = ddb.describe_continuous_backups(TableName="pitr_state")["ContinuousBackupsDescription"]
    assert d["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"

    off = enable(ddb, "pitr_state", False)
    assert off["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"
    # By ARN, as DynamoDB accepts it.
    arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/pitr_state"
    d = ddb.describe_continuous_backups(TableName=arn)["ContinuousBackupsDescription"]
    assert d["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"


def test_recovery_period_in_days(module_server, ddb):
    create(ddb, "pitr_days")

    def update(spec):
        return call(module_server, "UpdateContinuousBackups", json.dumps(
            {"TableName": "pitr_days", "PointInTimeRecoverySpecification": spec}))

    r = update({"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 7})
    assert r.status_code == 200, r.text
    assert r.json()["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"][
        "RecoveryPeriodInDays"] == 7
    for days, bound in ((0, "greater than or equal to 1"), (36, "less than or equal to 35")):
        r = update({"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": days})
        assert r.status_code == 400
        assert r.json()["__type"].endswith("ValidationException")
        assert r.json()["message"] == (
            f"1 validation error detected: Value '{days}' at "
            f"'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy "
            f"constraint: Member must have value {bound}")
    # A period with a disable: any period, even a valid one, is refused.
    r = update({"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 35})
    assert r.status_code == 400
    assert r.json()["message"] == ("Invalid Request: Cannot specify RecoveryPeriodInDays when "
                                   "disabling point-in-time recovery.")


def test_restore_errors(ddb):
    create(ddb, "pitr_err")
    code, message = error(lambda: ddb.restore_table_to_point_in_time(
        SourceTableName="pitr_err", TargetTableName="pitr_err_x", UseLatestRestorableTime=True))
    assert code == "PointInTimeRecoveryUnavailableException"
    enable(ddb, "pitr_err")
    assert error(lambda: ddb.restore_table_to_point_in_time(
        SourceTableName="pitr_nope", TargetTableName="pitr_err_x",
        UseLatestRestorableTime=True))[0] == "TableNotFoundException"
    assert error(lambda: ddb.restore_table_to_point_in_time(
        SourceTableName="pitr_err", TargetTableName="pitr_err",
        UseLatestRestorableTime=True)) == (
        "TableAlreadyExistsException", "Table already exists: pitr_err")
    assert error(lambda: ddb.restore_table_to_point_in_time(
        SourceTableName="pitr_err", TargetTableName="pitr_err_x",
        RestoreDateTime=datetime(2020, 1, 1, tzinfo=timezone.utc)))[0] == (
        "InvalidRestoreTimeException")
    assert error(lambda: ddb.restore_table_to_point_in_time(
        SourceTableName="pitr_err", TargetTableName="pitr_err_x")) == (
        "ValidationException", "Invalid Request: Either one of RestoreDateTime or "
                               "UseLatestRestorableTime must be specified, but not both")
    assert error(lambda: ddb.restore_table_to_point_in_time(
        TargetTableName="pitr_err_x", UseLatestRestorableTime=True)) == (
        "ValidationException", "Must provide exactly one of: sourceTableArn, sourceTableName")
    assert "pitr_err_x" not in ddb.list_tables()["TableNames"]


def test_restores_to_chosen_moments(ddb):
    create(ddb, "pitr_src")
    enable(ddb, "pitr_src")
    model = {}
    moments = []  # (datetime, the model's state then)

    def put(pk, v, g=None):
        it = {"pk": {"S": pk}, "v": {"N": str(v)}}
        if g:
            it["g"] = {"S": g}
        ddb.put_item(TableName="pitr_src", Item=it)
        model[pk] = it

    def delete(pk):
        ddb.delete_item(TableName="pitr_src", Key={"pk": {"S": pk}})
        model.pop(pk, None)

    def mark():
        # A whole second (boto3 sends RestoreDateTime in whole seconds) after every write so far
        # and before every later one.
        now = time.time()
        second = int(now) + 1
        time.sleep(second - now + 0.05)
        moments.append((datetime.fromtimestamp(second, timezone.utc),
                        {k: dict(v) for k, v in model.items()}))

    for i in range(10):
        put(f"k{i}", i, "even" if i % 2 == 0 else None)
    mark()
    for i in range(0, 10, 3):
        put(f"k{i}", 100 + i, "odd")
    delete("k1")
    ddb.update_item(TableName="pitr_src", Key={"pk": {"S": "k2"}},
                    UpdateExpression="SET v = v + :one", ExpressionAttributeValues={":one": {"N": "1"}})
    model["k2"] = ddb.get_item(TableName="pitr_src", Key={"pk": {"S": "k2"}})["Item"]
    mark()
    ddb.transact_write_items(TransactItems=[
        {"Delete": {"TableName": "pitr_src", "Key": {"pk": {"S": "k4"}}}},
        {"Put": {"TableName": "pitr_src", "Item": {"pk": {"S": "new"}, "v": {"N": "7"}}}}])
    model.pop("k4")
    model["new"] = {"pk": {"S": "new"}, "v": {"N": "7"}}
    ddb.execute_statement(Statement="DELETE FROM pitr_src WHERE pk = 'k5'")
    model.pop("k5")
    mark()
    for i in range(10):
        delete(f"k{i}")
    time.sleep(SETTLE_S)

    for n, (when, expected) in enumerate(moments):
        target = f"pitr_dst{n}"
        kw = {"SourceTableName": "pitr_src"} if n % 2 == 0 else {
            "SourceTableArn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/pitr_src"}
        d = ddb.restore_table_to_point_in_time(TargetTableName=target, RestoreDateTime=when,
                                               **kw)["TableDescription"]
        summary = d["RestoreSummary"]
        assert summary["SourceTableArn"].endswith(":table/pitr_src")
        assert "SourceBackupArn" not in summary
        assert summary["RestoreDateTime"] == when
        t = wait_active(ddb, target)
        assert "RestoreSummary" not in t  # DynamoDB leaves it out once the table is ACTIVE
        assert t["ItemCount"] == len(expected)
        assert items(ddb, target) == expected, f"restore to moment {n}"
        by_g = ddb.query(TableName=target, IndexName="by_g",
                         KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "odd"}})["Items"]
        assert sorted(i["pk"]["S"] for i in by_g) == sorted(
            k for k, v in expected.items() if v.get("g") == {"S": "odd"})
        c = ddb.describe_continuous_backups(TableName=target)["ContinuousBackupsDescription"]
        assert c["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"

    # The latest restorable time: the table as it is now.
    ddb.restore_table_to_point_in_time(SourceTableName="pitr_src", TargetTableName="pitr_latest",
                                       UseLatestRestorableTime=True)
    wait_active(ddb, "pitr_latest")
    assert items(ddb, "pitr_latest") == items(ddb, "pitr_src")
