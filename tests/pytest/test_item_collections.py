"""Item collections of tables with local secondary indexes, through boto3: ItemCollectionMetrics
in PutItem/UpdateItem/DeleteItem, TransactWriteItems and BatchWriteItem, and the item collection
size limit (ItemCollectionSizeLimitExceededException), against a server started with a small
DYNODB_ITEM_COLLECTION_SIZE_LIMIT so the limit is reachable.

What a collection counts (DynamoDB's rule): every base item with the partition key value plus
each local secondary index entry (table key, index key and projected attributes) plus 100 bytes
per entry. With the ALL-projected index below, an item with the index key counts about twice
its size plus 100.
"""
import uuid

import botocore.exceptions
import pytest

from conftest import Server

LIMIT = 4000
PAYLOAD = "p" * 500  # an item with it and the index key counts ~1,130 bytes: three fit
LIMIT_MESSAGE = ("The total size of an item collection has exceeded the maximum limit of 10 "
                 "gigabytes.")
SMALL = [0.0, 1.0]


@pytest.fixture(scope="module")
def ddb(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("item_collections"), [],
               env={"DYNODB_ITEM_COLLECTION_SIZE_LIMIT": str(LIMIT)})
    s.wait_ready()
    yield s.client()
    s.stop()


def _create_lsi_table(ddb):
    name = f"icm-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")
    return name


def _create_plain_table(ddb):
    name = f"plain-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=name,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    return name


@pytest.fixture(scope="module")
def lsi_table(ddb):
    return _create_lsi_table(ddb)


@pytest.fixture(scope="module")
def plain_table(ddb):
    return _create_plain_table(ddb)


def _item(pk, sk, payload=PAYLOAD, with_l=True):
    item = {"pk": {"S": pk}, "sk": {"N": str(sk)}, "p": {"S": payload}}
    if with_l:
        item["l"] = {"S": "x"}
    return item


def _key(pk, sk):
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}}


def _metrics(pk):
    return {"ItemCollectionKey": {"pk": {"S": pk}}, "SizeEstimateRangeGB": SMALL}


def _fill(ddb, table, pk):
    """Puts items into the collection of `pk` until the limit refuses one; returns that error
    and the sort key it refused."""
    for sk in range(1, 20):
        try:
            ddb.put_item(TableName=table, Item=_item(pk, sk))
        except botocore.exceptions.ClientError as e:
            return e, sk
    raise AssertionError("the item collection limit was never reached")


def test_single_item_writes_return_metrics(ddb, lsi_table):
    pk = uuid.uuid4().hex
    r = ddb.put_item(TableName=lsi_table, Item=_item(pk, 1, "v"),
                     ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == _metrics(pk)
    r = ddb.update_item(TableName=lsi_table, Key=_key(pk, 1), UpdateExpression="SET q = :q",
                        ExpressionAttributeValues={":q": {"N": "1"}},
                        ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == _metrics(pk)
    r = ddb.delete_item(TableName=lsi_table, Key=_key(pk, 1), ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == _metrics(pk)
    # NONE or absent: nothing.
    r = ddb.put_item(TableName=lsi_table, Item=_item(pk, 2, "v"),
                     ReturnItemCollectionMetrics="NONE")
    assert "ItemCollectionMetrics" not in r
    r = ddb.put_item(TableName=lsi_table, Item=_item(pk, 3, "v"))
    assert "ItemCollectionMetrics" not in r


def test_tables_without_local_indexes_return_no_metrics(ddb, plain_table):
    r = ddb.put_item(TableName=plain_table, Item={"pk": {"S": "a"}},
                     ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r
    r = ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": plain_table, "Item": {"pk": {"S": "b"}}}}],
        ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r
    r = ddb.batch_write_item(
        RequestItems={plain_table: [{"PutRequest": {"Item": {"pk": {"S": "c"}}}}]},
        ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r


def test_put_past_the_limit_fails_and_other_collections_are_unaffected(ddb, lsi_table):
    pk = uuid.uuid4().hex
    err, refused = _fill(ddb, lsi_table, pk)
    assert err.response["Error"]["Code"] == "ItemCollectionSizeLimitExceededException"
    assert err.response["Error"]["Message"] == LIMIT_MESSAGE
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert refused == 4  # three items of ~1,130 bytes fit in 4,000
    # The refused item was not written.
    assert "Item" not in ddb.get_item(TableName=lsi_table, Key=_key(pk, refused))
    # Growing an existing item fails too.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_item(TableName=lsi_table, Key=_key(pk, 1), UpdateExpression="SET q = :q",
                        ExpressionAttributeValues={":q": {"S": PAYLOAD}})
    assert e.value.response["Error"]["Code"] == "ItemCollectionSizeLimitExceededException"
    # An item without the index key counts only its own size, but still grows the collection.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.put_item(TableName=lsi_table, Item=_item(pk, 9, with_l=False))
    assert e.value.response["Error"]["Code"] == "ItemCollectionSizeLimitExceededException"
    # Another partition key is another collection.
    ddb.put_item(TableName=lsi_table, Item=_item(pk + "-other", 1))


def test_shrinking_writes_succeed_at_the_limit(ddb, lsi_table):
    pk = uuid.uuid4().hex
    _fill(ddb, lsi_table, pk)
    # Same size: allowed.
    ddb.put_item(TableName=lsi_table, Item=_item(pk, 1))
    # Dropping the index key removes the item's index entry; a smaller payload; a delete.
    r = ddb.update_item(TableName=lsi_table, Key=_key(pk, 1), UpdateExpression="REMOVE l",
                        ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == _metrics(pk)
    ddb.put_item(TableName=lsi_table, Item=_item(pk, 2, "small"))
    ddb.delete_item(TableName=lsi_table, Key=_key(pk, 3))
    # The freed room takes a new item again.
    r = ddb.put_item(TableName=lsi_table, Item=_item(pk, 4), ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == _metrics(pk)


def test_transact_write_items_metrics_and_cancellation(ddb, lsi_table, plain_table):
    pk = uuid.uuid4().hex
    r = ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": lsi_table, "Item": _item(pk, 1)}},
                       {"Put": {"TableName": lsi_table, "Item": _item(pk, 2)}},
                       {"Put": {"TableName": plain_table, "Item": {"pk": {"S": pk}}}}],
        ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == {lsi_table: [_metrics(pk), _metrics(pk)]}

    other = pk + "-b"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": lsi_table, "Item": _item(other, 1)}},
            {"Put": {"TableName": lsi_table, "Item": _item(pk, 3)}},
            {"Put": {"TableName": lsi_table, "Item": _item(pk, 4)}}])
    err = e.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert err["Error"]["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[None, ItemCollectionSizeLimitExceeded, ItemCollectionSizeLimitExceeded]")
    assert err["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ItemCollectionSizeLimitExceeded", "Message": "Collection size exceeded."},
        {"Code": "ItemCollectionSizeLimitExceeded", "Message": "Collection size exceeded."}]
    assert "Item" not in ddb.get_item(TableName=lsi_table, Key=_key(other, 1))

    # A delete and a put in one transaction that together shrink the collection succeed.
    ddb.put_item(TableName=lsi_table, Item=_item(pk, 3))  # now full
    r = ddb.transact_write_items(
        TransactItems=[{"Delete": {"TableName": lsi_table, "Key": _key(pk, 1)}},
                       {"Put": {"TableName": lsi_table, "Item": _item(pk, 5, "tiny")}}],
        ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == {lsi_table: [_metrics(pk), _metrics(pk)]}


def test_batch_write_item_metrics_and_limit(ddb, lsi_table, plain_table):
    pk = uuid.uuid4().hex
    r = ddb.batch_write_item(
        RequestItems={
            lsi_table: [{"PutRequest": {"Item": _item(pk, 1)}},
                        {"PutRequest": {"Item": _item(pk + "-x", 1)}},
                        {"DeleteRequest": {"Key": _key(pk, 9)}}],
            plain_table: [{"PutRequest": {"Item": {"pk": {"S": pk}}}}]},
        ReturnItemCollectionMetrics="SIZE")
    assert r["UnprocessedItems"] == {}
    assert r["ItemCollectionMetrics"] == {
        lsi_table: [_metrics(pk), _metrics(pk + "-x"), _metrics(pk)]}

    # Growing past the limit fails the whole request; nothing is written.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.batch_write_item(RequestItems={
            lsi_table: [{"PutRequest": {"Item": _item(pk, sk)}} for sk in range(2, 6)],
            plain_table: [{"PutRequest": {"Item": {"pk": {"S": pk + "-y"}}}}]})
    assert e.value.response["Error"]["Code"] == "ItemCollectionSizeLimitExceededException"
    assert e.value.response["Error"]["Message"] == LIMIT_MESSAGE
    assert "Item" not in ddb.get_item(TableName=lsi_table, Key=_key(pk, 2))
    assert "Item" not in ddb.get_item(TableName=plain_table, Key={"pk": {"S": pk + "-y"}})

    # Filled to the limit, a batch that deletes and puts less succeeds.
    ddb.batch_write_item(RequestItems={
        lsi_table: [{"PutRequest": {"Item": _item(pk, sk)}} for sk in range(2, 4)]})
    with pytest.raises(botocore.exceptions.ClientError):
        ddb.put_item(TableName=lsi_table, Item=_item(pk, 4))
    r = ddb.batch_write_item(
        RequestItems={lsi_table: [{"DeleteRequest": {"Key": _key(pk, 1)}},
                                  {"DeleteRequest": {"Key": _key(pk, 2)}},
                                  {"PutRequest": {"Item": _item(pk, 4)}}]},
        ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"] == {lsi_table: [_metrics(pk)] * 3}


def test_a_dropped_table_takes_its_collections_with_it(ddb):
    table = _create_lsi_table(ddb)
    _fill(ddb, table, "full")
    ddb.delete_table(TableName=table)
    # A new table of the same name starts with empty collections.
    table2 = _create_lsi_table(ddb)
    ddb.delete_table(TableName=table2)
    ddb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")
    for sk in range(1, 4):
        ddb.put_item(TableName=table, Item=_item("full", sk))


def test_a_malformed_limit_stops_start_up(start_server):
    s = start_server(ready=False, env={"DYNODB_ITEM_COLLECTION_SIZE_LIMIT": "lots"})
    assert s.proc.wait(30) != 0
    assert "DYNODB_ITEM_COLLECTION_SIZE_LIMIT" in s.output() or "item-collection" in s.output()
