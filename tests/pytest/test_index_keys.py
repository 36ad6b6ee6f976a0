"""Errors for secondary index key values, as DynamoDB words and orders them: the error names the
alphabetically first index with a bad key attribute; an update expression that writes an empty
string or binary into an index key gets the update wording, and fails a transaction as a whole
(a ValidationException, not a cancellation); an update is checked only on what it changed."""
import time
import uuid

import pytest

from conftest import client_error


@pytest.fixture(scope="module")
def table(ddb):
    name = f"ikeys-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "k", "AttributeType": "B"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "lsi1",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "k", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi1",
            "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        BillingMode="PAY_PER_REQUEST")
    return name


def _hash_table(ddb, prefix):
    """A new on-demand table keyed by pk (S), without indexes."""
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=name,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    return name


def _add_index_on_g(ddb, name):
    """Adds GSI by_g (g S, KEYS_ONLY) to a table with data; returns once it is ACTIVE."""
    ddb.update_table(
        TableName=name, AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    deadline = time.time() + 30
    while ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0][
            "IndexStatus"] != "ACTIVE":
        assert time.time() < deadline, "the backfill never finished"
        time.sleep(0.05)


KEY = {"pk": {"S": "p"}, "sk": {"S": "s"}}


def test_put_names_the_alphabetically_first_index(ddb, table):
    assert client_error(ddb.put_item, TableName=table, Item={**KEY, "k": {"S": "x"}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key k Expected: B "
        "Actual: S IndexName: gsi1")
    assert client_error(ddb.put_item, TableName=table, Item={**KEY, "k": {"B": b""}}) == (
        "ValidationException",
        "One or more parameter values are not valid. A value specified for a secondary index key "
        "is not supported. The AttributeValue for a key attribute cannot contain an empty binary "
        "value. IndexName: gsi1, IndexKey: k")


def test_update_writing_an_empty_index_key_uses_the_update_wording(ddb, table):
    assert client_error(ddb.update_item, TableName=table, Key=KEY, UpdateExpression="SET k = :e",
                ExpressionAttributeValues={":e": {"B": b""}}) == (
        "ValidationException",
        "One or more parameter values are not valid. The update expression attempted to update "
        "a secondary index key to a value that is not supported. The AttributeValue for a key "
        "attribute cannot contain an empty binary value.")
    # In a transaction it fails the request itself.
    code, msg = client_error(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": table, "Item": {"pk": {"S": "other"}, "sk": {"S": "s"}}}},
        {"Update": {"TableName": table, "Key": KEY, "UpdateExpression": "SET k = :e",
                    "ExpressionAttributeValues": {":e": {"B": b""}}}}])
    assert code == "ValidationException"
    assert "The update expression attempted to update a secondary index key" in msg
    assert "Item" not in ddb.get_item(TableName=table,
                                      Key={"pk": {"S": "other"}, "sk": {"S": "s"}})


def test_update_is_checked_only_on_what_it_changed(ddb):
    # An item whose attribute became an index key of another type after it was written (the
    # index was added later) can still be updated elsewhere.
    name = _hash_table(ddb, "ikeys-u-")
    key = {"pk": {"S": "a"}}
    ddb.put_item(TableName=name, Item={**key, "g": {"N": "1"}, "n": {"N": "1"}})
    _add_index_on_g(ddb, name)
    ddb.update_item(TableName=name, Key=key, UpdateExpression="SET n = :two",
                    ExpressionAttributeValues={":two": {"N": "2"}})
    assert ddb.get_item(TableName=name, Key=key)["Item"]["n"] == {"N": "2"}
    assert client_error(ddb.update_item, TableName=name, Key=key, UpdateExpression="SET g = :g",
                ExpressionAttributeValues={":g": {"N": "2"}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S "
        "Actual: N IndexName: by_g")


def test_index_key_size_limits(ddb):
    """An index partition key value may hold 2,048 bytes and a sort key value 1,024; one more is
    DynamoDB's "Size limit exceeded" naming the index, for a put, an update and a transaction."""
    name = f"ikeys-s-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "h", "r")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_hr", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"},
                                                {"AttributeName": "r", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        BillingMode="PAY_PER_REQUEST")
    ok = {"pk": {"S": "a"}, "h": {"S": "h" * 2048}, "r": {"S": "r" * 1024}}
    ddb.put_item(TableName=name, Item=ok)
    too_long = ("ValidationException",
                "One or more parameter values were invalid: Size limit exceeded for Index Key h "
                "Actual Size: 2049 bytes Max Size: 2048 bytes IndexName: by_hr")
    assert client_error(ddb.put_item, TableName=name, Item={**ok, "h": {"S": "h" * 2049}}) == (
        too_long)
    assert client_error(ddb.put_item, TableName=name, Item={**ok, "r": {"S": "r" * 1025}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Size limit exceeded for Index Key r "
        "Actual Size: 1025 bytes Max Size: 1024 bytes IndexName: by_hr")
    assert client_error(ddb.update_item, TableName=name, Key={"pk": {"S": "a"}},
                        UpdateExpression="SET h = :h",
                        ExpressionAttributeValues={":h": {"S": "h" * 2049}}) == too_long
    assert client_error(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": name, "Item": {**ok, "h": {"S": "h" * 2049}}}}]) == too_long
    assert ddb.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"] == ok


def test_a_backfill_skips_items_whose_key_the_index_cannot_hold(ddb):
    name = _hash_table(ddb, "ikeys-b-")
    for pk, g in (("empty", ""), ("long", "x" * 2049), ("longest", "x" * 2048), ("ok", "g")):
        ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "g": {"S": g}})
    _add_index_on_g(ddb, name)
    items = ddb.scan(TableName=name, IndexName="by_g")["Items"]
    assert sorted(i["pk"]["S"] for i in items) == ["longest", "ok"]
