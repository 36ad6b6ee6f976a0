"""Online global secondary index changes (UpdateTable Create/Delete) through boto3."""
import time
import uuid




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
