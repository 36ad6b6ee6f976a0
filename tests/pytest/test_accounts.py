"""Accounts, black-box through boto3: with --credentials naming two accounts, each sees only its
own tables, backups, streams and tokens, as in DynamoDB. Account B cannot list, describe, read,
write, delete, tag, back up or restore account A's tables, by name (ResourceNotFoundException or
TableNotFoundException, as for a table that does not exist) or by ARN (AccessDeniedException, as
DynamoDB answers without a resource-based policy). The same table name in both accounts is two
tables. Open mode keeps one namespace that every caller shares; a data directory written before
accounts keeps its tables, which belong to open mode's account (000000000001).
"""
import os
import shutil
import time
import uuid

import botocore.exceptions
import pytest

from conftest import REGION, Server

A_KEY, A_SECRET, A_ACCOUNT = "AKIDACCOUNTA00000001", "secret-of-account-a-0000000000000000001", \
    "111111111111"
B_KEY, B_SECRET, B_ACCOUNT = "AKIDACCOUNTB00000001", "secret-of-account-b-0000000000000000001", \
    "222222222222"
SHARED_ACCOUNT = "000000000001"  # open mode's, and the owner of tables from before accounts

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def two_account_server(tmp_path, extra_lines=""):
    creds = tmp_path / "two-accounts"
    creds.write_text(f"{A_KEY} {A_SECRET} {A_ACCOUNT}\n{B_KEY} {B_SECRET} {B_ACCOUNT}\n"
                     + extra_lines)
    return Server(tmp_path, ["--credentials", str(creds)], credentials=False)


@pytest.fixture(scope="module")
def accounts(tmp_path_factory):
    server = two_account_server(tmp_path_factory.mktemp("accounts")).wait_ready()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def a(accounts):
    return accounts.client(access_key=A_KEY, secret_key=A_SECRET)


@pytest.fixture(scope="module")
def b(accounts):
    return accounts.client(access_key=B_KEY, secret_key=B_SECRET)


def unique(prefix="acct"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def error(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def arn(account, name):
    return f"arn:aws:dynamodb:{REGION}:{account}:table/{name}"


def create(ddb, name, key="pk", **kw):
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": key, "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}], **kw)


def scan(ddb, name):
    return ddb.scan(TableName=name, ConsistentRead=True)["Items"]


def all_table_names(ddb):
    return [n for page in ddb.get_paginator("list_tables").paginate() for n in page["TableNames"]]


def wait(predicate, what, timeout=60):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# ---- tables by name --------------------------------------------------------------------------


def test_each_account_lists_only_its_own_tables(a, b):
    mine, theirs = unique(), unique()
    create(a, mine)
    create(b, theirs)
    assert mine in all_table_names(a) and theirs not in all_table_names(a)
    assert theirs in all_table_names(b) and mine not in all_table_names(b)
    # Paging from the other account's name skips nothing of one's own and shows none of theirs.
    after = b.list_tables(ExclusiveStartTableName=mine, Limit=100)["TableNames"]
    assert mine not in after


def test_another_accounts_table_is_not_found_by_name(a, b):
    name = unique()
    create(a, name)
    a.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "a's"}})
    key = {"pk": {"S": "k"}}
    not_found = ("ResourceNotFoundException", "Requested resource not found")
    table_not_found = ("ResourceNotFoundException",
                       f"Requested resource not found: Table: {name} not found")
    assert error(lambda: b.describe_table(TableName=name)) == table_not_found
    assert error(lambda: b.get_item(TableName=name, Key=key)) == not_found
    assert error(lambda: b.put_item(TableName=name, Item={**key, "v": {"S": "b's"}})) == not_found
    assert error(lambda: b.update_item(
        TableName=name, Key=key, UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "b's"}})) == not_found
    assert error(lambda: b.delete_item(TableName=name, Key=key)) == not_found
    assert error(lambda: b.scan(TableName=name))[0] == "ResourceNotFoundException"
    assert error(lambda: b.query(
        TableName=name, KeyConditionExpression="pk = :k",
        ExpressionAttributeValues={":k": {"S": "k"}}))[0] == "ResourceNotFoundException"
    assert error(lambda: b.batch_get_item(
        RequestItems={name: {"Keys": [key]}}))[0] == "ResourceNotFoundException"
    assert error(lambda: b.batch_write_item(
        RequestItems={name: [{"DeleteRequest": {"Key": key}}]}))[0] == "ResourceNotFoundException"
    assert error(lambda: b.transact_write_items(
        TransactItems=[{"Delete": {"TableName": name, "Key": key}}]))[0] == \
        "ResourceNotFoundException"
    assert error(lambda: b.transact_get_items(
        TransactItems=[{"Get": {"TableName": name, "Key": key}}]))[0] == "ResourceNotFoundException"
    assert error(lambda: b.execute_statement(
        Statement=f'DELETE FROM "{name}" WHERE pk = \'k\''))[0] == "ResourceNotFoundException"
    assert error(lambda: b.execute_statement(
        Statement=f'SELECT * FROM "{name}"'))[0] == "ResourceNotFoundException"
    assert error(lambda: b.update_table(
        TableName=name, BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}))[0] == \
        "ResourceNotFoundException"
    assert error(lambda: b.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "t"}))[0] == \
        "ResourceNotFoundException"
    assert error(lambda: b.describe_time_to_live(TableName=name))[0] == \
        "ResourceNotFoundException"
    assert error(lambda: b.describe_continuous_backups(TableName=name))[0] == \
        "TableNotFoundException"
    assert error(lambda: b.update_continuous_backups(
        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}))[0] \
        == "TableNotFoundException"
    assert error(lambda: b.create_backup(TableName=name, BackupName="steal")) == \
        ("TableNotFoundException", f"Table not found: {name}")
    assert error(lambda: b.delete_table(TableName=name)) == table_not_found
    # A's table is untouched.
    assert scan(a, name) == [{"pk": {"S": "k"}, "v": {"S": "a's"}}]
    table = a.describe_table(TableName=name)["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_another_accounts_table_arn_is_access_denied(a, b):
    name = unique()
    create(a, name)
    a_arn = a.describe_table(TableName=name)["Table"]["TableArn"]
    assert a_arn == arn(A_ACCOUNT, name)
    for operation, call in [
            ("DescribeTable", lambda: b.describe_table(TableName=a_arn)),
            ("DeleteTable", lambda: b.delete_table(TableName=a_arn)),
            ("TagResource", lambda: b.tag_resource(ResourceArn=a_arn,
                                                   Tags=[{"Key": "k", "Value": "v"}])),
            ("UntagResource", lambda: b.untag_resource(ResourceArn=a_arn, TagKeys=["k"])),
            ("ListTagsOfResource", lambda: b.list_tags_of_resource(ResourceArn=a_arn))]:
        code, message = error(call)
        assert code == "AccessDeniedException", operation
        assert f"is not authorized to perform: dynamodb:{operation} on resource: {a_arn}" \
            in message, (operation, message)
    # B's own ARN of the same name names no table of B's.
    assert error(lambda: b.describe_table(TableName=arn(B_ACCOUNT, name)))[0] == \
        "ResourceNotFoundException"
    assert error(lambda: b.list_tags_of_resource(ResourceArn=arn(B_ACCOUNT, name)))[0] == \
        "ResourceNotFoundException"
    assert a.describe_table(TableName=a_arn)["Table"]["TableName"] == name
    assert a.list_tags_of_resource(ResourceArn=a_arn)["Tags"] == []


def test_the_same_name_in_two_accounts_is_two_tables(a, b):
    name = unique()
    create(a, name, key="a_key", Tags=[{"Key": "owner", "Value": "a"}])
    create(b, name, key="b_key", Tags=[{"Key": "owner", "Value": "b"}])
    table_a = a.describe_table(TableName=name)["Table"]
    table_b = b.describe_table(TableName=name)["Table"]
    assert table_a["TableId"] != table_b["TableId"]
    assert table_a["KeySchema"][0]["AttributeName"] == "a_key"
    assert table_b["KeySchema"][0]["AttributeName"] == "b_key"
    assert (table_a["TableArn"], table_b["TableArn"]) == (arn(A_ACCOUNT, name), arn(B_ACCOUNT, name))
    a.put_item(TableName=name, Item={"a_key": {"S": "1"}})
    b.put_item(TableName=name, Item={"b_key": {"S": "2"}})
    assert scan(a, name) == [{"a_key": {"S": "1"}}]
    assert scan(b, name) == [{"b_key": {"S": "2"}}]
    assert a.list_tags_of_resource(ResourceArn=arn(A_ACCOUNT, name))["Tags"] == \
        [{"Key": "owner", "Value": "a"}]
    assert b.list_tags_of_resource(ResourceArn=arn(B_ACCOUNT, name))["Tags"] == \
        [{"Key": "owner", "Value": "b"}]
    # Creating it again is each account's own conflict; deleting one leaves the other.
    assert error(lambda: create(b, name, key="b_key"))[0] == "ResourceInUseException"
    a.delete_table(TableName=name)
    assert name not in all_table_names(a)
    assert scan(b, name) == [{"b_key": {"S": "2"}}]
    create(a, name, key="a_key")
    assert scan(a, name) == []


def test_client_request_tokens_of_two_accounts_are_independent(a, b):
    name = unique()
    create(a, name)
    create(b, name)
    token = str(uuid.uuid4())  # 36 characters, the most a token may have

    def write(ddb, value):
        ddb.transact_write_items(ClientRequestToken=token, TransactItems=[
            {"Put": {"TableName": name, "Item": {"pk": {"S": "k"}, "v": {"S": value}}}}])

    write(a, "from a")
    # The same token with another request in B is B's first use, not a mismatch or a replay.
    write(b, "from b")
    assert scan(a, name) == [{"pk": {"S": "k"}, "v": {"S": "from a"}}]
    assert scan(b, name) == [{"pk": {"S": "k"}, "v": {"S": "from b"}}]
    # Each account's own resend replays; another request with it is each one's mismatch.
    write(a, "from a")
    assert error(lambda: write(a, "changed"))[0] == "IdempotentParameterMismatchException"
    assert error(lambda: write(b, "changed"))[0] == "IdempotentParameterMismatchException"


# ---- backups, point-in-time restore, streams -----------------------------------------------


def test_backups_belong_to_their_account(a, b):
    name = unique()
    create(a, name)
    a.put_item(TableName=name, Item={"pk": {"S": "secret"}})
    backup_arn = a.create_backup(TableName=name, BackupName="mine")["BackupDetails"]["BackupArn"]
    assert backup_arn.startswith(arn(A_ACCOUNT, name) + "/backup/")
    listed = lambda ddb: [s["BackupArn"] for s in ddb.list_backups()["BackupSummaries"]]
    assert backup_arn in listed(a)
    assert backup_arn not in listed(b)
    assert b.list_backups(TableName=name)["BackupSummaries"] == []
    # A's ARN is access denied; the same backup id under B's account names no backup of B's.
    assert error(lambda: b.describe_backup(BackupArn=backup_arn))[0] == "AccessDeniedException"
    assert error(lambda: b.delete_backup(BackupArn=backup_arn))[0] == "AccessDeniedException"
    assert error(lambda: b.restore_table_from_backup(
        BackupArn=backup_arn, TargetTableName=unique()))[0] == "AccessDeniedException"
    as_b = backup_arn.replace(f":{A_ACCOUNT}:", f":{B_ACCOUNT}:")
    assert error(lambda: b.describe_backup(BackupArn=as_b)) == \
        ("BackupNotFoundException", f"Backup not found: {as_b}")
    assert error(lambda: b.delete_backup(BackupArn=as_b))[0] == "BackupNotFoundException"
    assert error(lambda: b.restore_table_from_backup(
        BackupArn=as_b, TargetTableName=unique()))[0] == "BackupNotFoundException"
    # A restores its own backup into its own account.
    wait(lambda: a.describe_backup(BackupArn=backup_arn)["BackupDescription"]["BackupDetails"]
         ["BackupStatus"] == "AVAILABLE", "the backup")
    target = unique()
    a.restore_table_from_backup(BackupArn=backup_arn, TargetTableName=target)
    wait(lambda: a.describe_table(TableName=target)["Table"]["TableStatus"] == "ACTIVE",
         "the restore")
    assert scan(a, target) == [{"pk": {"S": "secret"}}]
    assert target not in all_table_names(b)
    assert a.describe_table(TableName=target)["Table"]["TableArn"] == arn(A_ACCOUNT, target)


def test_point_in_time_restore_reads_only_ones_own_tables(a, b):
    name = unique()
    create(a, name)
    a.update_continuous_backups(
        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    a.put_item(TableName=name, Item={"pk": {"S": "secret"}})
    assert error(lambda: b.restore_table_to_point_in_time(
        SourceTableName=name, TargetTableName=unique(), UseLatestRestorableTime=True))[0] == \
        "TableNotFoundException"
    assert error(lambda: b.restore_table_to_point_in_time(
        SourceTableArn=arn(A_ACCOUNT, name), TargetTableName=unique(),
        UseLatestRestorableTime=True))[0] == "AccessDeniedException"
    # A's own restore lands in A's account, and B may use the target's name for itself.
    target = unique()
    a.restore_table_to_point_in_time(SourceTableName=name, TargetTableName=target,
                                     UseLatestRestorableTime=True)
    wait(lambda: a.describe_table(TableName=target)["Table"]["TableStatus"] == "ACTIVE",
         "the restore")
    assert scan(a, target) == [{"pk": {"S": "secret"}}]
    create(b, target)
    assert scan(b, target) == []


def test_streams_belong_to_their_account(accounts, a, b):
    name = unique()
    spec = {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    create(a, name, StreamSpecification=spec)
    create(b, name, StreamSpecification=spec)
    a_stream = a.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    b_stream = b.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert a_stream.startswith(arn(A_ACCOUNT, name) + "/stream/")
    assert b_stream.startswith(arn(B_ACCOUNT, name) + "/stream/")
    a_streams = accounts.client("dynamodbstreams", access_key=A_KEY, secret_key=A_SECRET)
    b_streams = accounts.client("dynamodbstreams", access_key=B_KEY, secret_key=B_SECRET)
    listed = lambda s, **kw: [x["StreamArn"] for x in s.list_streams(**kw)["Streams"]]
    assert listed(a_streams, TableName=name) == [a_stream]
    assert listed(b_streams, TableName=name) == [b_stream]
    assert a_stream not in listed(b_streams) and b_stream not in listed(a_streams)
    assert error(lambda: b_streams.describe_stream(StreamArn=a_stream))[0] == \
        "ResourceNotFoundException"
    # B's records are B's writes only.
    b.put_item(TableName=name, Item={"pk": {"S": "b"}})
    a.put_item(TableName=name, Item={"pk": {"S": "a"}})
    shard = b_streams.describe_stream(StreamArn=b_stream)["StreamDescription"]["Shards"][0]
    iterator = b_streams.get_shard_iterator(StreamArn=b_stream, ShardId=shard["ShardId"],
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = b_streams.get_records(ShardIterator=iterator)["Records"]
    assert [r["dynamodb"]["Keys"] for r in records] == [{"pk": {"S": "b"}}]


# ---- open mode and data directories from before accounts -----------------------------------


def test_open_mode_keeps_one_namespace_for_every_key(start_server):
    server = start_server(credentials=False)
    one = server.client(access_key="AKIDANYONE0000000001", secret_key="x")
    two = server.client(access_key="AKIDSOMEONEELSE00001", secret_key="y")
    name = unique()
    create(one, name)
    two.put_item(TableName=name, Item={"pk": {"S": "k"}})
    assert scan(one, name) == [{"pk": {"S": "k"}}]
    assert one.describe_table(TableName=name)["Table"]["TableArn"] == arn(SHARED_ACCOUNT, name)
    assert name in all_table_names(two)


def test_tables_from_before_accounts_belong_to_the_shared_account(tmp_path):
    # The fixture directory was written before tables had accounts (catalog format 1).
    data = tmp_path / "data"
    shutil.copytree(os.path.join(FIXTURES, "unopenable-after-receipt-expiry"), data)
    for root, dirs, files in os.walk(data):
        for f in dirs + files:
            os.chmod(os.path.join(root, f), 0o755 if f in dirs else 0o644)
    shared_key, shared_secret = "AKIDSHARED0000000001", "secret-of-the-shared-account-000001"
    server = two_account_server(
        tmp_path, f"{shared_key} {shared_secret} {SHARED_ACCOUNT}\n").wait_ready()
    try:
        assert "1 table(s) from before accounts now belong to account 000000000001" in \
            server.output()
        shared = server.client(access_key=shared_key, secret_key=shared_secret)
        other = server.client(access_key=A_KEY, secret_key=A_SECRET)
        assert "tbl" in all_table_names(shared)
        assert "tbl" not in all_table_names(other)
        assert error(lambda: other.scan(TableName="tbl"))[0] == "ResourceNotFoundException"
        keys = {i["p"]["S"] for i in scan(shared, "tbl")}
        assert {f"k{i}" for i in range(200)} | {"after"} <= keys
    finally:
        assert server.stop() == 0, server.output()
    # The migration ran once: the next start moves nothing, and open mode sees the table.
    server = Server(tmp_path, [], credentials=False).wait_ready()
    try:
        assert "from before accounts" not in server.output()
        assert "tbl" in all_table_names(server.client())
    finally:
        server.stop()
