"""Table operations, black-box through boto3 against the real binary: CreateTable,
DescribeTable, ListTables, DeleteTable, UpdateTable, TagResource, UntagResource,
ListTagsOfResource, DescribeContinuousBackups, DescribeTimeToLive.

Every expectation is DynamoDB's behaviour (error types and exact messages). Members this
botocore does not know (DeletionProtectionEnabled) go as raw signed JSON. The request rules that
one request shows (an invalid request and its exact answer) are in cases/tables.txt.
"""
import datetime
import json
import time
import uuid

import botocore.exceptions
import pytest

from conftest import REGION
from signing import call

INVALID = "One or more parameter values were invalid: "
ACCOUNT_ID = None  # set by the caller_account fixture


@pytest.fixture(scope="module")
def server(module_server):
    return module_server


@pytest.fixture(scope="module", autouse=True)
def caller_account(ddb):
    """The caller's account, as the server puts it in ARNs."""
    global ACCOUNT_ID
    name = unique("acct")
    ACCOUNT_ID = ddb.create_table(**on_demand(name))["TableDescription"]["TableArn"].split(":")[4]
    return ACCOUNT_ID


def unique(prefix="tbl"):
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def error(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


def simple(name, **extra):
    args = dict(TableName=name,
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    args.update(extra)
    return args


def on_demand(name, **extra):
    args = dict(TableName=name,
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                BillingMode="PAY_PER_REQUEST")
    args.update(extra)
    return args


def arn(name):
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


# ---- CreateTable / DescribeTable -----------------------------------------------------------


def test_create_and_describe_hash_table(ddb):
    name = unique()
    created = ddb.create_table(**simple(name))["TableDescription"]
    assert created["TableStatus"] == "CREATING"
    assert created["TableName"] == name
    assert created["TableArn"] == arn(name)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert t["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert t["ProvisionedThroughput"]["WriteCapacityUnits"] == 5
    assert t["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 0
    assert t["ItemCount"] == 0 and t["TableSizeBytes"] == 0
    assert len(t["TableId"]) == 36
    assert t["CreationDateTime"] is not None
    assert "BillingModeSummary" not in t


def test_create_composite_on_demand_with_indexes(ddb):
    name = unique()
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "lsk", "AttributeType": "S"},
                              {"AttributeName": "gpk", "AttributeType": "B"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "lsi1",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "lsk", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi1",
                                 "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"},
                                               {"AttributeName": "sk", "KeyType": "RANGE"}],
                                 "Projection": {"ProjectionType": "INCLUDE",
                                                "NonKeyAttributes": ["a", "b"]}}],
        BillingMode="PAY_PER_REQUEST")
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    lsi = t["LocalSecondaryIndexes"][0]
    assert lsi["IndexName"] == "lsi1"
    assert lsi["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert lsi["IndexArn"] == arn(name) + "/index/lsi1"
    gsi = t["GlobalSecondaryIndexes"][0]
    assert gsi["IndexStatus"] == "ACTIVE"
    assert gsi["KeySchema"][1] == {"AttributeName": "sk", "KeyType": "RANGE"}
    assert gsi["Projection"]["NonKeyAttributes"] == ["a", "b"]


def test_create_with_stream_sse_class_and_tags(ddb):
    name = unique()
    ddb.create_table(**on_demand(
        name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        SSESpecification={"Enabled": True}, TableClass="STANDARD_INFREQUENT_ACCESS",
        Tags=[{"Key": "team", "Value": "db"}]))
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["StreamSpecification"] == {"StreamEnabled": True,
                                        "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert t["LatestStreamArn"] == arn(name) + "/stream/" + t["LatestStreamLabel"]
    assert t["SSEDescription"]["Status"] == "ENABLED"
    assert t["SSEDescription"]["SSEType"] == "KMS"
    assert t["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert ddb.list_tags_of_resource(ResourceArn=arn(name))["Tags"] == [
        {"Key": "team", "Value": "db"}]


def test_create_existing_table(ddb):
    name = unique()
    ddb.create_table(**simple(name))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.create_table(**simple(name))
    assert error(e) == ("ResourceInUseException", f"Table already exists: {name}")


def test_key_attribute_names_of_255_characters(ddb):
    # 255 two-byte characters (510 bytes of UTF-8) are a valid key attribute name.
    name, pk = unique(), "\u00e9" * 255
    ddb.create_table(**on_demand(name, AttributeDefinitions=[
        {"AttributeName": pk, "AttributeType": "S"}],
        KeySchema=[{"AttributeName": pk, "KeyType": "HASH"}]))
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    assert ddb.describe_table(TableName=name)["Table"]["KeySchema"] == [
        {"AttributeName": pk, "KeyType": "HASH"}]
    ddb.put_item(TableName=name, Item={pk: {"S": "v"}})
    assert ddb.get_item(TableName=name, Key={pk: {"S": "v"}}, ConsistentRead=True)["Item"] == {
        pk: {"S": "v"}}
    ddb.delete_table(TableName=name)


# ---- ListTables ----------------------------------------------------------------------------


def test_list_tables_pages_in_order(ddb):
    prefix = "lst_" + uuid.uuid4().hex[:6]
    names = sorted(f"{prefix}_{i}" for i in range(5))
    for n in names:
        ddb.create_table(**on_demand(n))
    listed = []
    start = None
    for _ in range(100):
        args = {"Limit": 2}
        if start:
            args["ExclusiveStartTableName"] = start
        page = ddb.list_tables(**args)
        assert len(page["TableNames"]) <= 2
        listed += page["TableNames"]
        start = page.get("LastEvaluatedTableName")
        if not start:
            break
    assert listed == sorted(listed)
    assert [n for n in listed if n.startswith(prefix)] == names
    everything = ddb.list_tables()["TableNames"]
    assert everything == sorted(everything)


# ---- DeleteTable ---------------------------------------------------------------------------


def test_delete_table_and_recreate_sees_no_old_items(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    ddb.put_item(TableName=name, Item={"pk": {"S": "old"}, "v": {"N": "1"}})
    deleted = ddb.delete_table(TableName=name)["TableDescription"]
    assert deleted["TableStatus"] == "DELETING"
    assert deleted["TableName"] == name
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.describe_table(TableName=name)
    assert error(e)[0] == "ResourceNotFoundException"
    assert name not in ddb.list_tables()["TableNames"]
    # The name is reusable at once, and the new table is empty.
    ddb.create_table(**on_demand(name))
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "old"}})


def test_delete_table_description_leaves_out_schema_and_creation_time(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    deleted = ddb.delete_table(TableName=name)["TableDescription"]
    for member in ("AttributeDefinitions", "KeySchema", "CreationDateTime"):
        assert member not in deleted
    assert deleted["TableStatus"] == "DELETING"
    assert deleted["TableArn"] == arn(name)
    assert deleted["ItemCount"] == 0


def test_deletion_protection(server, ddb):
    name = unique()
    body = json.dumps(dict(on_demand(name), DeletionProtectionEnabled=True))
    r = call(server, "CreateTable", body)
    assert r.status_code == 200, r.text
    assert r.json()["TableDescription"]["DeletionProtectionEnabled"] is True
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.delete_table(TableName=name)
    assert error(e) == ("ValidationException",
                        "Resource cannot be deleted as it is currently protected against "
                        "deletion. Disable deletion protection first.")
    r = call(server, "UpdateTable",
             json.dumps({"TableName": name, "DeletionProtectionEnabled": False}))
    assert r.status_code == 200, r.text
    ddb.delete_table(TableName=name)


def _dp(server, name, enabled):
    return call(server, "UpdateTable",
                json.dumps({"TableName": name, "DeletionProtectionEnabled": enabled}))


def test_deletion_protection_changes_wait_fifteen_seconds(server, ddb, start_server):
    # DynamoDB refuses any setting of deletion protection (a re-send too) within 15 s of its
    # last change; a re-send with no recent change is accepted, and creation starts no wait.
    name = unique()
    assert call(server, "CreateTable", json.dumps(dict(
        on_demand(name), DeletionProtectionEnabled=True))).status_code == 200
    assert _dp(server, name, True).status_code == 200
    before = time.time()
    assert _dp(server, name, False).status_code == 200
    after = time.time()
    prefix = (f"Deletion protection setting for table {name} modified within the previous 15000 "
              "milliseconds. Please try again after ")
    for enabled in (False, True):
        r = _dp(server, name, enabled)
        assert (r.status_code, r.json()["__type"].split("#")[-1]) == (400, "ThrottlingException")
        message = r.json()["message"]
        assert message.startswith(prefix), message
        again = datetime.datetime.strptime(message[len(prefix):], "%Y-%m-%dT%H:%M:%S.%fZ")
        again = again.replace(tzinfo=datetime.timezone.utc).timestamp()
        assert before + 15 - 0.01 <= again <= after + 15 + 0.01, message
    described = call(server, "DescribeTable", json.dumps({"TableName": name})).json()
    assert described["Table"]["DeletionProtectionEnabled"] is False
    ddb.delete_table(TableName=name)  # the wait gates deletion protection only

    quick = start_server("--deletion-protection-interval", "0.5")
    assert call(quick, "CreateTable", json.dumps(on_demand(name))).status_code == 200
    assert _dp(quick, name, True).status_code == 200
    assert _dp(quick, name, False).status_code == 400
    time.sleep(0.6)
    assert _dp(quick, name, False).status_code == 200


def _long_time(t):
    """DynamoDB's long form of a time in its decrease quota message."""
    return (f"{t:%A}, {t:%B} {t.day}, {t.year} at {t.hour % 12 or 12}:{t:%M:%S} "
            f"{'AM' if t.hour < 12 else 'PM'} Coordinated Universal Time")


def test_throughput_decreases_are_limited_to_four_then_one_an_hour(ddb):
    name = unique()
    ten = {"ReadCapacityUnits": 10, "WriteCapacityUnits": 10}
    ddb.create_table(**simple(name, ProvisionedThroughput=ten))
    for read in (9, 8, 7, 6):
        ddb.update_table(TableName=name, ProvisionedThroughput=dict(ten, ReadCapacityUnits=read))
    pt = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    if pt["NumberOfDecreasesToday"] != 4:
        pytest.skip("the decreases straddled midnight UTC")
    last = pt["LastDecreaseDateTime"].astimezone(datetime.timezone.utc).replace(microsecond=0)
    midnight = (last + datetime.timedelta(days=1)).replace(hour=0, minute=0, second=0)
    expected = (
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given "
        "UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can "
        "be performed at most once every 3600 seconds. Number of decreases today: 4. Last "
        f"decrease at {_long_time(last)}. Next decrease can be made at "
        f"{_long_time(min(last + datetime.timedelta(hours=1), midnight))}")
    for read, write in ((5, 10), (7, 9)):  # a decrease of either kind
        with pytest.raises(botocore.exceptions.ClientError) as e:
            ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": read,
                                                                   "WriteCapacityUnits": write})
        assert error(e) == ("LimitExceededException", expected)
    ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 7,
                                                           "WriteCapacityUnits": 11})
    pt = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (7, 11)
    assert pt["NumberOfDecreasesToday"] == 4


def test_table_class_changes_twice_in_thirty_days(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    before = time.time()
    r = ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    assert "TableClassSummary" not in r["TableDescription"]  # the old summary: none
    first = ddb.describe_table(TableName=name)["Table"]["TableClassSummary"]
    assert first["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert before - 1 <= first["LastUpdateDateTime"].timestamp() <= time.time() + 1
    # A re-send of the current class changes nothing and spends nothing.
    r = ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    assert r["TableDescription"]["TableClassSummary"] == first
    time.sleep(0.01)
    r = ddb.update_table(TableName=name, TableClass="STANDARD")
    assert r["TableDescription"]["TableClassSummary"] == first
    second = ddb.describe_table(TableName=name)["Table"]["TableClassSummary"]
    assert second["TableClass"] == "STANDARD"
    assert second["LastUpdateDateTime"] > first["LastUpdateDateTime"]
    # Both changes spent: a third, and even a re-send of the current class, are refused.
    for table_class in ("STANDARD_INFREQUENT_ACCESS", "STANDARD"):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            ddb.update_table(TableName=name, TableClass=table_class)
        assert error(e) == ("LimitExceededException", "Subscriber limit exceeded: Updates to "
                            "TableClass are limited to 2 times in 30 day(s).")
    assert ddb.describe_table(TableName=name)["Table"]["TableClassSummary"] == second


def test_sse_resend_changes_nothing_only_with_the_exact_key_arn(ddb):
    # DynamoDB refuses only a re-send of the current key's exact ARN; its alias, or no key,
    # is a change (the table is encrypted again).
    name = unique()
    ddb.create_table(**on_demand(name))
    ddb.update_table(TableName=name, SSESpecification={
        "Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "alias/mine"})
    key_arn = ddb.describe_table(TableName=name)["Table"]["SSEDescription"]["KMSMasterKeyArn"]
    for again in ({"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "alias/mine"},
                  {"Enabled": True}):
        r = ddb.update_table(TableName=name, SSESpecification=again)["TableDescription"]
        assert r["SSEDescription"]["Status"] == "UPDATING"
    key_arn = ddb.describe_table(TableName=name)["Table"]["SSEDescription"]["KMSMasterKeyArn"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, SSESpecification={
            "Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": key_arn})
    assert error(e) == ("ValidationException", INVALID + "Table is already encrypted with given "
                        "KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to change "
                        "Master Key")


# ---- UpdateTable ---------------------------------------------------------------------------


def test_update_throughput(ddb):
    name = unique()
    ddb.create_table(**simple(name))
    out = ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 20,
                                                                  "WriteCapacityUnits": 15})
    assert out["TableDescription"]["TableStatus"] == "UPDATING"
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 20
    assert t["ProvisionedThroughput"]["WriteCapacityUnits"] == 15
    assert "LastIncreaseDateTime" in t["ProvisionedThroughput"]


def test_switch_billing_modes(ddb):
    name = unique()
    ddb.create_table(**simple(name))
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "LastUpdateToPayPerRequestDateTime" in t["BillingModeSummary"]
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")  # no-op is accepted
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 1,
                                                                "WriteCapacityUnits": 1})
    assert error(e) == ("ValidationException",
                        INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                        "specified when BillingMode is PAY_PER_REQUEST")
    ddb.update_table(TableName=name, BillingMode="PROVISIONED",
                     ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4})
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 3


def test_update_streams(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    assert error(e) == ("ValidationException", f"Table has no stream to disable: TableName: {name}")
    ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": True,
                                                          "StreamViewType": "KEYS_ONLY"})
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": True,
                                                              "StreamViewType": "KEYS_ONLY"})
    assert error(e) == ("ValidationException",
                        f"Table already has an enabled stream: TableName: {name}")
    ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    t = ddb.describe_table(TableName=name)["Table"]
    assert "StreamSpecification" not in t
    assert "LatestStreamArn" in t


# ---- tags ----------------------------------------------------------------------------------


def test_tag_untag_list(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    ddb.tag_resource(ResourceArn=arn(name), Tags=[{"Key": "env", "Value": "test"},
                                                  {"Key": "project", "Value": "fdyno"}])
    ddb.tag_resource(ResourceArn=arn(name), Tags=[{"Key": "env", "Value": "prod"}])
    tags = ddb.list_tags_of_resource(ResourceArn=arn(name))["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "prod"), ("project", "fdyno")]
    ddb.untag_resource(ResourceArn=arn(name), TagKeys=["project", "absent"])
    assert ddb.list_tags_of_resource(ResourceArn=arn(name))["Tags"] == [
        {"Key": "env", "Value": "prod"}]


def test_tag_lengths_count_characters_not_bytes(ddb):
    # A tag key of 128 characters and a value of 256, each character two bytes in UTF-8.
    name = unique()
    ddb.create_table(**on_demand(name))
    key, value = "\u00e9" * 128, "\u00fc" * 256
    ddb.tag_resource(ResourceArn=arn(name), Tags=[{"Key": key, "Value": value}])
    assert ddb.list_tags_of_resource(ResourceArn=arn(name))["Tags"] == [
        {"Key": key, "Value": value}]
    ddb.untag_resource(ResourceArn=arn(name), TagKeys=[key])
    assert ddb.list_tags_of_resource(ResourceArn=arn(name))["Tags"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.tag_resource(ResourceArn=arn(name), Tags=[{"Key": key + "\u00e9", "Value": "v"}])
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_tag_and_untag_answer_with_an_empty_body(server, ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    r = call(server, "TagResource",
             json.dumps({"ResourceArn": arn(name), "Tags": [{"Key": "k", "Value": "v"}]}))
    assert (r.status_code, r.content) == (200, b"")
    r = call(server, "UntagResource", json.dumps({"ResourceArn": arn(name), "TagKeys": ["k"]}))
    assert (r.status_code, r.content) == (200, b"")


def test_item_operations_take_a_table_arn_in_open_mode(start_server):
    # DynamoDB takes a table's ARN wherever it takes its name, item operations included; with
    # --credentials the policy guard resolves ARNs, in open mode the registry does.
    ddb = start_server(credentials=False).client()
    name = unique()
    own = ddb.create_table(**on_demand(name))["TableDescription"]["TableArn"]
    ddb.put_item(TableName=own, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    assert ddb.get_item(TableName=own, Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}
    ddb.transact_write_items(TransactItems=[{"Update": {
        "TableName": own, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": {"N": "2"}}}}])
    assert ddb.query(TableName=own, KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "a"}})["Items"][0]["v"] == {"N": "2"}
    # Another account's ARN is not the caller's table.
    other = own.replace(own.split(":")[4], "000000000000")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.get_item(TableName=other, Key={"pk": {"S": "a"}})
    assert error(e)[0] == "ValidationException"


def test_open_mode_account_is_not_the_all_zero_account(start_server):
    # Clients name DynamoDB Local's account 000000000000 as another account's: in open mode an
    # ARN naming it must not be the caller's.
    open_ddb = start_server(credentials=False).client()
    name = unique()
    own = open_ddb.create_table(**on_demand(name))["TableDescription"]["TableArn"]
    assert own.split(":")[4] not in ("000000000000", "")
    open_ddb.tag_resource(ResourceArn=own, Tags=[{"Key": "k", "Value": "v"}])
    assert open_ddb.list_tags_of_resource(ResourceArn=own)["Tags"] == [{"Key": "k", "Value": "v"}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        open_ddb.list_tags_of_resource(
            ResourceArn=f"arn:aws:dynamodb:{REGION}:000000000000:table/{name}")
    assert error(e)[0] == "AccessDeniedException"


def test_tags_of_another_account_are_access_denied(ddb):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        other = "999999999999" if ACCOUNT_ID != "999999999999" else "888888888888"
        ddb.list_tags_of_resource(ResourceArn=f"arn:aws:dynamodb:{REGION}:{other}:table/x")
    code, message = error(e)
    assert code == "AccessDeniedException"
    assert "is not authorized to perform: dynamodb:ListTagsOfResource" in message


def test_too_many_tags(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    ddb.tag_resource(ResourceArn=arn(name),
                     Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.tag_resource(ResourceArn=arn(name), Tags=[{"Key": "one_more", "Value": "v"}])
    assert error(e) == ("ValidationException",
                        "Number of Tags exceed the current limit for the provided ResourceArn")


def test_on_demand_throughput_is_returned_and_updated_alone(server, ddb):
    name = unique()
    body = dict(on_demand(name), OnDemandThroughput={"MaxReadRequestUnits": 100,
                                                     "MaxWriteRequestUnits": 50})
    r = call(server, "CreateTable", json.dumps(body))
    assert r.status_code == 200, r.text
    assert r.json()["TableDescription"]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    r = call(server, "UpdateTable", json.dumps(
        {"TableName": name, "OnDemandThroughput": {"MaxReadRequestUnits": 200}}))
    assert r.status_code == 200, r.text
    r = call(server, "DescribeTable", json.dumps({"TableName": name}))
    assert r.json()["Table"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 200,
                                                       "MaxWriteRequestUnits": 50}
    # -1 removes a member; the response echoes it as -1, DescribeTable leaves it out, and a
    # member cleared earlier is not echoed again (DynamoDB, recorded in 2026).
    r = call(server, "UpdateTable", json.dumps(
        {"TableName": name, "OnDemandThroughput": {"MaxWriteRequestUnits": -1}}))
    assert r.status_code == 200, r.text
    assert r.json()["TableDescription"]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 200, "MaxWriteRequestUnits": -1}
    r = call(server, "DescribeTable", json.dumps({"TableName": name}))
    assert r.json()["Table"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 200}
    r = call(server, "UpdateTable", json.dumps(
        {"TableName": name, "OnDemandThroughput": {"MaxReadRequestUnits": 300}}))
    assert r.json()["TableDescription"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 300}
    r = call(server, "UpdateTable", json.dumps({"TableName": name, "OnDemandThroughput": {
        "MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}}))
    assert r.json()["TableDescription"]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}
    r = call(server, "DescribeTable", json.dumps({"TableName": name}))
    assert "OnDemandThroughput" not in r.json()["Table"]
    r = call(server, "UpdateTable", json.dumps(
        {"TableName": name, "OnDemandThroughput": {"MaxReadRequestUnits": 200}}))
    assert r.status_code == 200, r.text
    plain = unique()
    r = call(server, "CreateTable", json.dumps(on_demand(plain)))
    assert "OnDemandThroughput" not in r.json()["TableDescription"]

    def refused(operation, request):
        r = call(server, operation, json.dumps(request))
        assert r.status_code == 400, r.text
        return r.json()["message"]

    # Only alone (or with BillingMode), only at least 1 (-1 clears), only for on-demand tables.
    # Beside deletion protection DynamoDB names the latter (recorded in 2026).
    assert refused("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": True,
                                   "OnDemandThroughput": {"MaxReadRequestUnits": 10}}) == (
        INVALID + "DeletionProtection modification must be the only operation in the request")
    assert refused("UpdateTable", {"TableName": name,
                                   "OnDemandThroughput": {"MaxReadRequestUnits": 0}}) == (
        INVALID + "Requested MaxReadRequestUnits for OnDemandThroughput for table is outside of "
        "valid range")
    assert refused("CreateTable", dict(on_demand(unique()), OnDemandThroughput={
        "MaxWriteRequestUnits": -1})) == (
        INVALID + "Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of "
        "valid range")
    provisioned = dict(simple(unique()), OnDemandThroughput={"MaxReadRequestUnits": 10})
    assert refused("CreateTable", provisioned) == (
        INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when table "
        "BillingMode is PROVISIONED.")


def create_with_index(ddb, name, index):
    """A PROVISIONED 5/5 table with a global secondary index `index` (1/1) on `g`."""
    ddb.create_table(**simple(name, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": index, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]))


def test_update_table_answers_with_what_dynamodb_shows_of_each_change(ddb):
    # DynamoDB's UpdateTable response shows the old provisioned throughputs (table and indexes)
    # and table class, and an SSE change as in progress; DescribeTable shows the new settings.
    name = unique()
    create_with_index(ddb, name, "gsi")
    two = {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
    r = ddb.update_table(TableName=name, ProvisionedThroughput=two, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "gsi", "ProvisionedThroughput": two}}])["TableDescription"]
    assert r["TableStatus"] == "UPDATING"
    assert r["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert r["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 1
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 2

    # An index's throughput alone: the index is UPDATING (old values), not the table.
    three = {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}
    r = ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "gsi", "ProvisionedThroughput": three}}])["TableDescription"]
    assert r["TableStatus"] == "ACTIVE"
    [index] = r["GlobalSecondaryIndexes"]
    assert (index["IndexStatus"], index["ProvisionedThroughput"]["ReadCapacityUnits"]) == (
        "UPDATING", 2)
    # A new index is CREATING, its backfill not begun.
    r = ddb.update_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "h", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gsi2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": three}}])
    new = [i for i in r["TableDescription"]["GlobalSecondaryIndexes"] if i["IndexName"] == "gsi2"]
    assert (new[0]["IndexStatus"], new[0]["Backfilling"]) == ("CREATING", False)

    # STANDARD on a table that never had a class: nothing to show, as in DynamoDB.
    r = ddb.update_table(TableName=name, TableClass="STANDARD")["TableDescription"]
    assert r["TableStatus"] == "UPDATING" and "TableClassSummary" not in r
    assert "TableClassSummary" not in ddb.describe_table(TableName=name)["Table"]
    r = ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")["TableDescription"]
    assert "TableClassSummary" not in r
    assert ddb.describe_table(TableName=name)["Table"]["TableClassSummary"]["TableClass"] == (
        "STANDARD_INFREQUENT_ACCESS")

    r = ddb.update_table(TableName=name, SSESpecification={"Enabled": True})["TableDescription"]
    assert r["SSEDescription"] == {"Status": "UPDATING"} and r["TableStatus"] == "ACTIVE"
    enabled = ddb.describe_table(TableName=name)["Table"]["SSEDescription"]
    assert enabled["Status"] == "ENABLED"
    r = ddb.update_table(TableName=name, SSESpecification={"Enabled": False})["TableDescription"]
    assert r["SSEDescription"] == dict(enabled, Status="UPDATING") and r["TableStatus"] == "ACTIVE"
    assert "SSEDescription" not in ddb.describe_table(TableName=name)["Table"]

    r = ddb.update_table(TableName=name, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    assert r["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}


def test_billing_mode_switches_answer_as_made_and_spend_no_table_decrease(server, ddb):
    # DynamoDB's response to a switch shows the new mode and throughputs; a switch to on-demand
    # is no decrease of the table's throughput (its indexes' count), and a switch to provisioned
    # drops OnDemandThroughput.
    name = unique()
    create_with_index(ddb, name, "gsi")
    r = ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert r["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}
    assert r["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 0
    assert "LastDecreaseDateTime" not in t["ProvisionedThroughput"]
    assert t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 1
    assert "LastUpdateToPayPerRequestDateTime" in t["BillingModeSummary"]
    r = call(server, "UpdateTable", json.dumps({"TableName": name, "OnDemandThroughput": {
        "MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 100}}))
    assert r.status_code == 200, r.text
    fifty = {"ReadCapacityUnits": 50, "WriteCapacityUnits": 50}
    r = ddb.update_table(TableName=name, BillingMode="PROVISIONED", ProvisionedThroughput=fifty,
                         GlobalSecondaryIndexUpdates=[{"Update": {
                             "IndexName": "gsi", "ProvisionedThroughput": fifty}}])
    shown = r["TableDescription"]
    assert shown["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert shown["ProvisionedThroughput"]["ReadCapacityUnits"] == 50
    assert shown["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 50
    described = call(server, "DescribeTable", json.dumps({"TableName": name})).json()["Table"]
    assert "OnDemandThroughput" not in described
    # A throughput change answers the old units with the new increase time.
    r = ddb.update_table(TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 60,
                                                                "WriteCapacityUnits": 50})
    pt = r["TableDescription"]["ProvisionedThroughput"]
    assert pt["ReadCapacityUnits"] == 50 and "LastIncreaseDateTime" in pt
    created = ddb.create_table(**on_demand(unique()))["TableDescription"]
    assert created["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}


def test_update_table_while_an_index_is_being_built_or_deleted(start_server):
    # Indexes held CREATING / DELETING (--index-status-delay), as DynamoDB's are for a while.
    ddb = start_server("--index-status-delay", "120").client()
    name = unique()
    create_with_index(ddb, name, "old")
    units = {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
    new_index = {"Create": {"IndexName": "new", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                            "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": units}}
    ddb.update_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "h", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[new_index])
    assert ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][1][
        "IndexStatus"] == "CREATING"
    limit = ("LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be "
             "created or deleted simultaneously per table")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "old"}}])
    assert error(e) == limit
    in_flight = ("ResourceInUseException", "Attempt to change a resource which is still in use: "
                 "Cannot delete table while indexes are being created, updated, or deleted.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.delete_table(TableName=name)
    assert error(e) == in_flight
    other = unique()
    create_with_index(ddb, other, "old")
    ddb.update_table(TableName=other, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "old"}}])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=other, ProvisionedThroughput=units)
    assert error(e) == ("ResourceInUseException", "Attempt to change a resource which is still in "
                        f"use: Can't change table IOPS when an index is being deleted. Table: {other} "
                        "Indexes: [old]")
    # An Update, a second Delete, or a Create of the same name, of the index being deleted.
    defs = {"AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}]}
    for change, extra in (({"Update": {"IndexName": "old", "ProvisionedThroughput": units}}, {}),
                          ({"Delete": {"IndexName": "old"}}, {}),
                          ({"Create": dict(new_index["Create"], IndexName="old")}, defs)):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            ddb.update_table(TableName=other, GlobalSecondaryIndexUpdates=[change], **extra)
        assert error(e) == ("ResourceInUseException", "Attempt to change a resource which is still "
                            f"in use: Index is being deleted. Table: {other} Index: old"), change
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.delete_table(TableName=other)
    assert error(e) == in_flight


def test_an_on_demand_table_while_an_index_is_being_deleted(start_server):
    # DynamoDB, recorded in 2026: the dying index is named first when the request updates it; a
    # billing switch is an IOPS change but a re-send of the current mode is not; an
    # OnDemandThroughput change waits for the deletion.
    server = start_server("--index-status-delay", "120")
    ddb = server.client()
    name = unique()
    ddb.create_table(**on_demand(name, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "old",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}]))
    ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "old"}}])
    units = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    in_use = "Attempt to change a resource which is still in use: "

    def answer(**request):
        r = call(server, "UpdateTable", json.dumps(dict(TableName=name, **request)))
        body = r.json()
        return ("ok",) if r.status_code == 200 else (
            body["__type"].rsplit("#", 1)[-1], body["message"])

    assert answer(BillingMode="PROVISIONED", ProvisionedThroughput=units) == (
        "ResourceInUseException",
        in_use + f"Can't change table IOPS when an index is being deleted. Table: {name} "
        "Indexes: [old]")
    assert answer(BillingMode="PROVISIONED", ProvisionedThroughput=units,
                  GlobalSecondaryIndexUpdates=[{"Update": {
                      "IndexName": "old", "ProvisionedThroughput": units}}]) == (
        "ResourceInUseException", in_use + f"Index is being deleted. Table: {name} Index: old")
    assert answer(BillingMode="PAY_PER_REQUEST") == ("ok",)
    assert answer(OnDemandThroughput={"MaxReadRequestUnits": 100}) == (
        "ResourceInUseException", in_use + "OnDemandThroughput cannot be updated while index "
        "deletion is in progress for indexes: [old]")


def test_attribute_definitions_are_listed_by_name_and_pruned_with_their_index(ddb):
    name = unique()
    index = lambda n, a, **p: {"IndexName": n, "KeySchema": [{"AttributeName": a, "KeyType": "HASH"}],
                               "Projection": p or {"ProjectionType": "ALL"}}
    r = ddb.create_table(**on_demand(name, AttributeDefinitions=[
        {"AttributeName": n, "AttributeType": "S"} for n in ("z", "a", "m", "pk")],
        GlobalSecondaryIndexes=[index("by_z", "z", ProjectionType="INCLUDE",
                                      NonKeyAttributes=["zz", "aa", "mm"]),
                                index("by_a", "a"), index("by_m", "m")]))
    names = lambda t: [d["AttributeName"] for d in t["AttributeDefinitions"]]
    assert names(r["TableDescription"]) == ["a", "m", "pk", "z"]
    t = ddb.describe_table(TableName=name)["Table"]
    assert names(t) == ["a", "m", "pk", "z"]
    assert t["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"] == ["aa", "mm", "zz"]
    ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_m"}}])
    deadline = time.time() + 30
    while len(ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"]) > 2:
        assert time.time() < deadline, "the index was not removed"
        time.sleep(0.05)
    assert names(ddb.describe_table(TableName=name)["Table"]) == ["a", "pk", "z"]


def test_update_table_billing_switches_and_index_limits(ddb):
    # A switch to on-demand goes with a stream change or a new index (not an IOPS change).
    name = unique()
    ddb.create_table(**simple(name))
    r = ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]
    assert r["StreamSpecification"]["StreamEnabled"]
    # A re-send of the billing mode answers UPDATING, as DynamoDB does.
    r = ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert r["TableStatus"] == "UPDATING"
    other = unique()
    ddb.create_table(**simple(other))
    ddb.update_table(TableName=other, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=[
        {"AttributeName": "g", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    # At most 20 global secondary indexes, also through UpdateTable.
    full = unique()
    ddb.create_table(**on_demand(full, AttributeDefinitions=[
        {"AttributeName": n, "AttributeType": "S"} for n in ["pk"] + [f"a{i}" for i in range(20)]],
        GlobalSecondaryIndexes=[{"IndexName": f"g{i:02}", "KeySchema": [
            {"AttributeName": f"a{i}", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
            for i in range(20)]))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=full, AttributeDefinitions=[
            {"AttributeName": "a20", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": "g20", "KeySchema": [{"AttributeName": "a20", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}])
    assert error(e) == ("LimitExceededException", "Subscriber limit exceeded: Number of global "
                        "secondary indexes exceeds per-table limit of 20")


def test_sse_type_without_enabled_turns_encryption_on(ddb):
    name = unique()
    ddb.create_table(**on_demand(name, SSESpecification={"SSEType": "KMS"}))
    sse = ddb.describe_table(TableName=name)["Table"]["SSEDescription"]
    assert (sse["Status"], sse["SSEType"]) == ("ENABLED", "KMS")


def test_update_table_gsi_creation_rules(ddb):
    name = unique()
    ddb.create_table(**simple(name))
    create = {"IndexName": "gix1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
              "Projection": {"ProjectionType": "ALL"},
              "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}
    # The new index's key attributes must be defined in the request.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[{"Create": create}])
    assert error(e) == ("ValidationException",
                        INVALID + "AttributeDefinitions is not specified for index: gix1")
    # Two indexes in one call.
    second = dict(create, IndexName="gix2")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, AttributeDefinitions=[
            {"AttributeName": "g", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": create}, {"Create": second}])
    assert error(e) == ("LimitExceededException", "Subscriber limit exceeded: Only 1 online "
                        "index can be created or deleted simultaneously per table")
    # Attribute names over 255 bytes in the new index's definitions and key schema.
    long_name = "a" * 256
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, AttributeDefinitions=[
            {"AttributeName": long_name, "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": dict(create, KeySchema=[
                {"AttributeName": long_name, "KeyType": "HASH"}])}])
    code, message = error(e)
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 255" in message
    # A projected attribute name over 255 bytes, as in CreateTable.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, AttributeDefinitions=[
            {"AttributeName": "g", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": dict(create, Projection={
                "ProjectionType": "INCLUDE", "NonKeyAttributes": ["n" * 256]})}])
    assert error(e) == (
        "ValidationException",
        "1 validation error detected: Value '" + "n" * 256 + "' at 'globalSecondaryIndexUpdates.1"
        ".member.create.projection.nonKeyAttributes.1.member' failed to satisfy constraint: "
        "Member must have length less than or equal to 255")
    ddb.update_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": create}])


# ---- DescribeContinuousBackups, DescribeTimeToLive ----------------------------------------


def test_describe_continuous_backups(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    d = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
    assert d["ContinuousBackupsStatus"] == "ENABLED"
    assert d["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.describe_continuous_backups(TableName="no_such_table")
    assert error(e) == ("TableNotFoundException", "Table not found: no_such_table")


def test_describe_time_to_live(ddb):
    name = unique()
    ddb.create_table(**on_demand(name))
    d = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert d == {"TimeToLiveStatus": "DISABLED"}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.describe_time_to_live(TableName="no_such_table")
    assert error(e) == ("ResourceNotFoundException",
                        "Requested resource not found: Table: no_such_table not found")


