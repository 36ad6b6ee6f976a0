"""BatchGetItem and BatchWriteItem, black-box through boto3 against the real binary. The request
rules that one request shows are in cases/batch.txt."""
import uuid

import pytest

from conftest import client_error



@pytest.fixture(scope="module")
def table(ddb):
    name = f"batch-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")
    return name


def test_write_then_get(ddb, table):
    r = ddb.batch_write_item(RequestItems={table: [
        {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "g": {"S": "grp"}, "v": {"N": str(i)}}}}
        for i in range(25)]}, ReturnConsumedCapacity="TOTAL")
    assert r["UnprocessedItems"] == {}
    # One unit per item and one per index entry written.
    assert r["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 50.0}]
    r = ddb.batch_get_item(RequestItems={table: {
        "Keys": [{"pk": {"S": f"k{i}"}} for i in range(30)],
        "ProjectionExpression": "pk, v"}})
    got = sorted(int(i["v"]["N"]) for i in r["Responses"][table])
    assert got == list(range(25))
    assert r["UnprocessedKeys"] == {}
    # The index follows batch writes.
    q = ddb.query(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "grp"}})
    assert q["Count"] == 25
    ddb.batch_write_item(RequestItems={table: [
        {"DeleteRequest": {"Key": {"pk": {"S": f"k{i}"}}}} for i in range(20)]})
    q = ddb.query(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "grp"}})
    assert q["Count"] == 5


def test_large_batch_splits(ddb, table):
    # 25 items of ~350 KB each (~8.7 MB, plus index copies) exceed one engine transaction.
    big = "x" * 350_000
    r = ddb.batch_write_item(RequestItems={table: [
        {"PutRequest": {"Item": {"pk": {"S": f"big{i}"}, "g": {"S": "big"}, "b": {"S": big}}}}
        for i in range(25)]})
    assert r["UnprocessedItems"] == {}
    # Pages end at 1 MB of evaluated items, so count over every page.
    count, pages, start = 0, 0, None
    while True:
        kw = dict(TableName=table, IndexName="by_g", KeyConditionExpression="g = :g",
                  Select="COUNT", ExpressionAttributeValues={":g": {"S": "big"}})
        if start:
            kw["ExclusiveStartKey"] = start
        q = ddb.query(**kw)
        count, pages, start = count + q["Count"], pages + 1, q.get("LastEvaluatedKey")
        if not start:
            break
    assert count == 25 and pages >= 8


def test_validation(ddb, table):
    # The other request rules are in cases/batch.txt. How this message renders the keys is not
    # recorded from DynamoDB: only its end is checked.
    code, msg = client_error(ddb.batch_get_item, RequestItems={table: {
        "Keys": [{"pk": {"S": f"x{i}"}} for i in range(101)]}})
    assert code == "ValidationException" and "less than or equal to 100" in msg
    # Invalid input writes nothing.
    code, _ = client_error(ddb.batch_write_item, RequestItems={table: [
        {"PutRequest": {"Item": {"pk": {"S": "ok1"}}}},
        {"PutRequest": {"Item": {"pk": {"N": "1"}}}}]})
    assert code == "ValidationException"
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "ok1"}})


def _size(item):
    # DynamoDB's item size for string attributes: name bytes plus value bytes.
    return sum(len(k.encode()) + len(v["S"].encode()) for k, v in item.items())


def test_batch_get_answers_at_most_16_mib_and_the_rest_as_unprocessed_keys(ddb, table):
    # 100 items of about 399 KB (about 40 MB): one page holds at most 16 MiB of them.
    for start in range(0, 100, 25):
        r = ddb.batch_write_item(RequestItems={table: [
            {"PutRequest": {"Item": {"pk": {"S": f"huge{i:03}"}, "b": {"S": "h" * 399_000}}}}
            for i in range(start, start + 25)]})
        assert r["UnprocessedItems"] == {}
    keys = [{"pk": {"S": f"huge{i:03}"}} for i in range(100)]
    seen, pages = [], 0
    request = {table: {"Keys": keys}}
    while request:
        r = ddb.batch_get_item(RequestItems=request)
        got = r["Responses"].get(table, [])
        assert sum(_size(i) for i in got) <= 16 * 1024 * 1024
        assert got, "a page must make progress"
        seen += [i["pk"]["S"] for i in got]
        pages += 1
        request = r["UnprocessedKeys"]
    assert sorted(seen) == [f"huge{i:03}" for i in range(100)]
    assert pages >= 3


