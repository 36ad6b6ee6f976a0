"""Online global secondary index changes (UpdateTable Create/Delete) through boto3."""
import time
import uuid

import botocore.exceptions




def _index(ddb, table, name):
    for g in ddb.describe_table(TableName=table)["Table"].get("GlobalSecondaryIndexes", []):
        if g["IndexName"] == name:
            return g
    return None


def _query_all(ddb, table, index, g):
    out, start = [], None
    while True:
        kw = dict(TableName=table, IndexName=index, KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": g}}, Limit=7)
        if start:
            kw["ExclusiveStartKey"] = start
        r = ddb.query(**kw)
        out += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return out


def test_create_gsi_online_with_writes_then_delete(ddb):
    table = f"online-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=table,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    model = {}
    for i in range(300):
        item = {"pk": {"S": f"k{i}"}, "v": {"N": str(i)}}
        if i % 3:
            item["g"] = {"S": f"g{i % 4}"}
        ddb.put_item(TableName=table, Item=item)
        model[f"k{i}"] = item
    ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    assert _index(ddb, table, "by_g")["IndexStatus"] in ("CREATING", "ACTIVE")
    # Writes during the backfill.
    for i in range(0, 300, 7):
        item = {"pk": {"S": f"k{i}"}, "v": {"N": "-1"}, "g": {"S": "g9"}}
        ddb.put_item(TableName=table, Item=item)
        model[f"k{i}"] = item
    for i in range(1, 300, 11):
        ddb.delete_item(TableName=table, Key={"pk": {"S": f"k{i}"}})
        model.pop(f"k{i}", None)
    deadline = time.time() + 30
    while _index(ddb, table, "by_g")["IndexStatus"] != "ACTIVE":
        assert time.time() < deadline
        time.sleep(0.05)
    assert not _index(ddb, table, "by_g").get("Backfilling", False)
    for g in ("g0", "g1", "g2", "g3", "g9"):
        got = sorted(i["pk"]["S"] for i in _query_all(ddb, table, "by_g", g))
        want = sorted(k for k, it in model.items() if it.get("g", {}).get("S") == g)
        assert got == want, g
    ddb.update_table(TableName=table,
                     GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_g"}}])
    deadline = time.time() + 30
    while _index(ddb, table, "by_g") is not None:
        assert time.time() < deadline
        time.sleep(0.05)


def _batch_put(ddb, table, items):
    for i in range(0, len(items), 25):
        reqs = [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]
        while reqs:
            r = ddb.batch_write_item(RequestItems={table: reqs})
            reqs = r.get("UnprocessedItems", {}).get(table, [])


def _counts(ddb, table):
    t = ddb.describe_table(TableName=table)["Table"]
    out = {"": t["ItemCount"]}
    for i in t.get("LocalSecondaryIndexes", []) + t.get("GlobalSecondaryIndexes", []):
        out[i["IndexName"]] = i["ItemCount"]
    return out


def test_item_count_of_table_and_indexes_follows_writes(ddb):
    """ItemCount is exact (DynamoDB refreshes its figure about every six hours; an exact one is
    within that): puts, updates that add and remove index keys, deletes, batches, transactions."""
    table = f"counts-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "l", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "by_l", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}]}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        BillingMode="PAY_PER_REQUEST")
    assert _counts(ddb, table) == {"": 0, "by_l": 0, "by_g": 0}
    model = {}

    def key(i):
        return {"pk": {"S": f"p{i % 3}"}, "sk": {"N": str(i)}}

    items = []
    for i in range(60):
        it = dict(key(i))
        if i % 2:
            it["g"] = {"S": f"g{i % 5}"}
        if i % 3 == 0:
            it["l"] = {"S": f"l{i}"}
        items.append(it)
        model[i] = it
    _batch_put(ddb, table, items)
    for i in range(0, 60, 4):  # SET g on some, REMOVE g from others
        if "g" in model[i]:
            ddb.update_item(TableName=table, Key=key(i), UpdateExpression="REMOVE g")
            del model[i]["g"]
        else:
            ddb.update_item(TableName=table, Key=key(i), UpdateExpression="SET g = :g",
                            ExpressionAttributeValues={":g": {"S": "new"}})
            model[i]["g"] = {"S": "new"}
    for i in range(1, 60, 7):
        ddb.delete_item(TableName=table, Key=key(i))
        del model[i]
    ddb.delete_item(TableName=table, Key=key(1000))  # absent: no change
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table, "Item": {**key(100), "g": {"S": "t"}, "l": {"S": "t"}}}},
        {"Delete": {"TableName": table, "Key": key(2)}}])
    model[100] = {**key(100), "g": {"S": "t"}, "l": {"S": "t"}}
    del model[2]
    want = {"": len(model), "by_l": sum("l" in it for it in model.values()),
            "by_g": sum("g" in it for it in model.values())}
    assert _counts(ddb, table) == want
    assert want["by_g"] == len(ddb.scan(TableName=table, IndexName="by_g")["Items"])


def test_item_count_while_backfilling_then_exact(ddb):
    """DescribeTable shows a new index's ItemCount while it is CREATING with Backfilling (the
    entries written so far) and its exact count once ACTIVE, with writes during the backfill."""
    table = f"bfcount-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=table,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    model = {}
    items = []
    for i in range(3000):
        it = {"pk": {"S": f"k{i}"}}
        if i % 4:
            it["g"] = {"S": f"g{i % 7}"}
        items.append(it)
        model[f"k{i}"] = it
    _batch_put(ddb, table, items)
    ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "late", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    seen = []
    i = 0
    deadline = time.time() + 60
    while True:
        g = _index(ddb, table, "late")
        assert isinstance(g["ItemCount"], int) and g["ItemCount"] >= 0
        if g["IndexStatus"] == "ACTIVE":
            break
        assert g["IndexStatus"] == "CREATING" and g.get("Backfilling") is True
        seen.append(g["ItemCount"])
        # Writes during the backfill: add, move and drop index keys, delete.
        for _ in range(5):
            k = f"k{(i * 37) % 3200}"
            i += 1
            if i % 5 == 0:
                ddb.delete_item(TableName=table, Key={"pk": {"S": k}})
                model.pop(k, None)
            else:
                it = {"pk": {"S": k}}
                if i % 3:
                    it["g"] = {"S": "moved"}
                ddb.put_item(TableName=table, Item=it)
                model[k] = it
        assert time.time() < deadline
    assert seen, "the backfill finished before the first DescribeTable"
    want = sum("g" in it for it in model.values())
    assert _counts(ddb, table) == {"": len(model), "late": want}
    assert not _index(ddb, table, "late").get("Backfilling", False)


def test_reading_a_backfilling_index(ddb):
    """Query and Scan of a GSI that is still backfilling answer DynamoDB's ValidationException
    ("Cannot read from backfilling global secondary index: <name>"). The worker may finish
    before the first read, so a few indexes are tried; one is enough."""
    table = f"bfread-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=table,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    _batch_put(ddb, table, [{"pk": {"S": f"k{i}"}, "a": {"S": str(i % 3)},
                             "b": {"S": str(i % 5)}, "c": {"S": str(i % 2)}}
                            for i in range(3000)])
    observed = []
    for attr in ("a", "b", "c"):
        name = f"by_{attr}"
        ddb.update_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": attr, "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": name, "KeySchema": [{"AttributeName": attr, "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}])
        for read in (lambda: ddb.query(TableName=table, IndexName=name,
                                       KeyConditionExpression="#k = :v",
                                       ExpressionAttributeNames={"#k": attr},
                                       ExpressionAttributeValues={":v": {"S": "1"}}),
                     lambda: ddb.scan(TableName=table, IndexName=name, Limit=1)):
            try:
                read()
            except botocore.exceptions.ClientError as e:
                assert e.response["Error"]["Code"] == "ValidationException"
                assert e.response["Error"]["Message"] == (
                    f"Cannot read from backfilling global secondary index: {name}")
                observed.append(name)
        deadline = time.time() + 60
        while _index(ddb, table, name)["IndexStatus"] != "ACTIVE":
            assert time.time() < deadline
            time.sleep(0.05)
        if observed:
            break
    assert observed


def test_redeclaring_a_key_attribute_with_another_type_keeps_its_type(ddb):
    # DynamoDB accepts an UpdateTable whose AttributeDefinitions give an attribute the table
    # already defines another type, and keeps the type the table has.
    table = f"redeclare-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=table,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    described = ddb.describe_table(TableName=table)["Table"]
    assert sorted((d["AttributeName"], d["AttributeType"])
                  for d in described["AttributeDefinitions"]) == [("g", "S"), ("pk", "S")]
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "g": {"S": "x"}})
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})["Item"]["g"] == {"S": "x"}
