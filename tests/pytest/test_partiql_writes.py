"""PartiQL writes, black-box through boto3 against the real binary: INSERT, UPDATE and DELETE
through ExecuteStatement, BatchExecuteStatement and ExecuteTransaction, with DynamoDB's errors,
cancellation reasons and ClientRequestToken rules; and a seeded comparison of PartiQL writes
against the equivalent PutItem/UpdateItem/DeleteItem on a twin table (items, a global index and
the stream records must agree). The request rules that one request shows are in
cases/partiql.txt."""
import json
import os
import random
import uuid

import botocore.exceptions
import pytest

import signing

S = lambda v: {"S": v}
N = lambda v: {"N": str(v)}


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _create(ddb, name, **kw):
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}], **kw)
    return name


@pytest.fixture(scope="module")
def table(ddb):
    return _create(ddb, _name("pqw"))


def run(ddb, statement, *params, **kw):
    if params:
        kw["Parameters"] = list(params)
    r = ddb.execute_statement(Statement=statement, **kw)
    r.pop("ResponseMetadata", None)
    return r


def raw(server, operation, body):
    """A signed request with members this botocore does not know (ReturnValuesOnCondition-
    CheckFailure of PartiQL): (error code or "ok", the response body)."""
    r = signing.call(server, operation, json.dumps(body))
    out = r.json()
    return ("ok" if r.status_code == 200 else out["__type"].split("#")[-1]), out


def error_of(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response


def get(ddb, table, pk):
    return ddb.get_item(TableName=table, Key={"pk": S(pk)}, ConsistentRead=True).get("Item")


# ---- ExecuteStatement ---------------------------------------------------------------------

def test_insert_then_duplicate(ddb, table):
    assert run(ddb, f'INSERT INTO "{table}" VALUE {{\'pk\': ?, \'n\': 1}}', S("i1")) == {"Items": []}
    assert get(ddb, table, "i1") == {"pk": S("i1"), "n": N(1)}
    err = error_of(lambda: run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'i1', 'n': 2}}"))
    assert err["Error"] == {"Code": "DuplicateItemException",
                            "Message": "Duplicate primary key exists in table"}
    assert get(ddb, table, "i1")["n"] == N(1)


def test_update_returning_and_conditions(ddb, table, module_server):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'u1', 'n': 1, 'l': [1]}}")
    r = run(ddb, f"UPDATE \"{table}\" SET n = n + 4 SET l = list_append(l, [2]) "
                 f"WHERE pk = 'u1' RETURNING MODIFIED NEW *")
    assert r["Items"] == [{"n": N(5), "l": {"L": [N(1), N(2)]}}]
    r = run(ddb, f"UPDATE \"{table}\" REMOVE l WHERE pk = 'u1' RETURNING ALL OLD *")
    assert r["Items"] == [{"pk": S("u1"), "n": N(5), "l": {"L": [N(1), N(2)]}}]
    # The rest of the WHERE is the condition; a false one answers the old item when asked.
    code, body = raw(module_server, "ExecuteStatement", {
        "Statement": f"UPDATE \"{table}\" SET n = 0 WHERE pk = 'u1' AND n = 9",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
    assert code == "ConditionalCheckFailedException"
    assert body["message"] == "The conditional request failed"
    assert body["Item"] == {"pk": S("u1"), "n": N(5)}
    # An UPDATE never creates the item.
    err = error_of(lambda: run(ddb, f"UPDATE \"{table}\" SET n = 0 WHERE pk = 'nobody'"))
    assert err["Error"]["Code"] == "ConditionalCheckFailedException"
    assert get(ddb, table, "nobody") is None


def test_delete(ddb, table):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'd1', 'n': 1}}")
    err = error_of(lambda: run(ddb, f"DELETE FROM \"{table}\" WHERE pk = 'd1' AND n = 2"))
    assert err["Error"]["Code"] == "ConditionalCheckFailedException"
    r = run(ddb, f"DELETE FROM \"{table}\" WHERE pk = 'd1' RETURNING ALL OLD *")
    assert r["Items"] == [{"pk": S("d1"), "n": N(1)}]
    assert get(ddb, table, "d1") is None
    assert run(ddb, f"DELETE FROM \"{table}\" WHERE pk = 'd1'") == {"Items": []}


def test_write_capacity(ddb, table):
    r = run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'c1', 'blob': '{'x' * 1500}'}}",
            ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 2.0}


def test_write_capacity_counts_the_index_entries_written(ddb, table):
    # A statement is charged like its item operation: the table and each index entry it writes.
    r = run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'ci1', 'g': 'x'}}",
            ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 2.0}
    r = run(ddb, f"UPDATE \"{table}\" SET g = 'y' WHERE pk = 'ci1'",
            ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {
        "TableName": table, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 2.0}}}
    r = batch(ddb, [f"INSERT INTO \"{table}\" VALUE {{'pk': 'ci2', 'g': 'x'}}",
                    f"INSERT INTO \"{table}\" VALUE {{'pk': 'ci3'}}"],
              ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == [{
        "TableName": table, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 2.0},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 1.0}}}]


# ---- BatchExecuteStatement ----------------------------------------------------------------

def batch(ddb, statements, **kw):
    r = ddb.batch_execute_statement(
        Statements=[{"Statement": s} if isinstance(s, str) else s for s in statements], **kw)
    r.pop("ResponseMetadata", None)
    return r


def test_batch_writes_answer_per_statement(ddb, table, module_server):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'b0', 'n': 1}}")
    statements = [
        f"INSERT INTO \"{table}\" VALUE {{'pk': 'b1'}}",
        f"INSERT INTO \"{table}\" VALUE {{'pk': 'b0'}}",
        {"Statement": f"UPDATE \"{table}\" SET n = 5 WHERE pk = 'b0' AND n = 3",
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        "DELETE FROM \"no-such-table-x\" WHERE pk = 'b'",
        f"UPDATE \"{table}\" SET n = 2 WHERE pk = 'b0'",
    ]
    code, r = raw(module_server, "BatchExecuteStatement", {"Statements": [
        {"Statement": s} if isinstance(s, str) else s for s in statements]})
    assert code == "ok"
    assert r["Responses"] == [
        {"TableName": table},
        {"TableName": table, "Error": {"Code": "DuplicateItem",
                                       "Message": "Duplicate primary key exists in table"}},
        {"TableName": table, "Error": {"Code": "ConditionalCheckFailed",
                                       "Message": "The conditional request failed",
                                       "Item": {"pk": S("b0"), "n": N(1)}}},
        {"Error": {"Code": "ResourceNotFound", "Message": "Requested resource not found"}},
        {"TableName": table},
    ]
    assert get(ddb, table, "b1") == {"pk": S("b1")}
    assert get(ddb, table, "b0")["n"] == N(2)


def test_batch_writes_return_their_returning_item(ddb, table):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'br', 'n': 1, 'm': 'x'}}")
    r = batch(ddb, [f"UPDATE \"{table}\" SET n = 2 WHERE pk = 'br' RETURNING ALL OLD *",
                    f"UPDATE \"{table}\" SET n = 3 WHERE pk = 'br' RETURNING MODIFIED NEW *",
                    f"DELETE FROM \"{table}\" WHERE pk = 'br' RETURNING ALL OLD *",
                    f"DELETE FROM \"{table}\" WHERE pk = 'br-none' RETURNING ALL OLD *"])
    assert r["Responses"][:3] == [
        {"TableName": table, "Item": {"pk": S("br"), "n": N(1), "m": S("x")}},
        {"TableName": table, "Item": {"n": N(3)}},
        {"TableName": table, "Item": {"pk": S("br"), "n": N(3), "m": S("x")}}]
    # Nothing was there to return: no Item.
    assert r["Responses"][3] == {"TableName": table}


def test_update_clauses_in_either_order_and_aliases(ddb, table):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'uw', 'n': 1, 'm': 'x'}}")
    r = run(ddb, f"UPDATE \"{table}\" WHERE pk = 'uw' SET n = 2 REMOVE m RETURNING ALL NEW *")
    assert r["Items"] == [{"pk": S("uw"), "n": N(2)}]
    for statement in [f"UPDATE \"{table}\" AS t SET n = 3 WHERE pk = 'uw'",
                      f"DELETE FROM \"{table}\" t WHERE pk = 'uw'"]:
        assert error_of(lambda: run(ddb, statement))["Error"] == {
            "Code": "ValidationException", "Message": "Aliasing is not supported"}
    assert get(ddb, table, "uw")["n"] == N(2)


def test_batch_reads_are_point_reads(ddb, table):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'r1', 'n': 1}}")
    r = batch(ddb, [f"SELECT * FROM \"{table}\" WHERE pk = 'r1'",
                    f"SELECT n FROM \"{table}\" WHERE pk = 'r-missing'",
                    f"SELECT * FROM \"{table}\" WHERE n = 1"])
    assert r["Responses"][0] == {"TableName": table, "Item": {"pk": S("r1"), "n": N(1)}}
    assert r["Responses"][1] == {"TableName": table}
    assert r["Responses"][2] == {"Error": {
        "Code": "ValidationError",
        "Message": "Select statements within BatchExecuteStatement must specify the primary key "
                   "in the where clause."}}  # rejected before it ran: no TableName


def test_batch_members_rejected_before_they_run_name_no_table(ddb, table):
    run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'rj', 'n': 1}}")
    r = batch(ddb, [f"UPDATE \"{table}\" SET n = 2 WHERE n = 1",
                    f"UPDATE \"{table}\" SET n = 2 WHERE pk = 'rj' AND n = 5",
                    f"DELETE FROM \"{table}\" WHERE pk = 'rj' AND"])
    assert set(r["Responses"][0]) == {"Error"}, r["Responses"][0]
    assert r["Responses"][1] == {"TableName": table, "Error": {
        "Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}}
    assert set(r["Responses"][2]) == {"Error"}, r["Responses"][2]


def test_batch_limits(ddb, table):
    # The other request rules are in cases/partiql.txt. How this message renders the statements
    # is not recorded from DynamoDB: only its end is checked.
    err = error_of(lambda: batch(ddb, [f"SELECT * FROM \"{table}\" WHERE pk = 'x{i}'"
                                       for i in range(26)]))
    assert err["Error"]["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 25" in err["Error"]["Message"]


# ---- ExecuteTransaction ----------------------------------------------------------------------

def txn(ddb, statements, **kw):
    r = ddb.execute_transaction(
        TransactStatements=[{"Statement": s} if isinstance(s, str) else s for s in statements],
        **kw)
    r.pop("ResponseMetadata", None)
    return r


def test_transaction_applies_all_or_nothing(ddb, table, module_server):
    txn(ddb, [f"INSERT INTO \"{table}\" VALUE {{'pk': 't0', 'n': 0}}",
              f"INSERT INTO \"{table}\" VALUE {{'pk': 't1', 'n': 1}}",
              f"INSERT INTO \"{table}\" VALUE {{'pk': 't2', 'n': 2}}"])
    code, err = raw(module_server, "ExecuteTransaction", {"TransactStatements": [
        {"Statement": f"UPDATE \"{table}\" SET n = 9 WHERE pk = 't0'"},
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 't1'}}"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 't2' AND n = 7",
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}]})
    assert code == "TransactionCanceledException"
    assert err["message"] == ("Transaction cancelled, please refer cancellation reasons "
                                       "for specific reasons [None, DuplicateItem, "
                                       "ConditionalCheckFailed]")
    assert err["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
         "Item": {"pk": S("t2"), "n": N(2)}}]
    assert get(ddb, table, "t0")["n"] == N(0)
    assert get(ddb, table, "t2")["n"] == N(2)
    # EXISTS is a condition check.
    err = error_of(lambda: txn(ddb, [
        f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 't1' AND n = 5)",
        f"UPDATE \"{table}\" SET n = 9 WHERE pk = 't2'"]))
    assert [c["Code"] for c in err["CancellationReasons"]] == ["ConditionalCheckFailed", "None"]
    txn(ddb, [f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 't1' AND n = 1)",
              f"UPDATE \"{table}\" SET n = 9 WHERE pk = 't2'"])
    assert get(ddb, table, "t2")["n"] == N(9)


def test_transaction_writes_answer_an_empty_responses_list(ddb, table):
    insert = [f"INSERT INTO \"{table}\" VALUE {{'pk': 'te', 'n': 0}}"]
    assert txn(ddb, insert) == {"Responses": []}
    update = [f"UPDATE \"{table}\" SET n = 1 WHERE pk = 'te'"]
    r = txn(ddb, update, ReturnConsumedCapacity="TOTAL")
    assert r["Responses"] == []
    assert r["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0,
                                      "WriteCapacityUnits": 2.0}]


def test_transaction_reads(ddb, table):
    txn(ddb, [f"INSERT INTO \"{table}\" VALUE {{'pk': 'tr1', 'n': 1, 'm': {{'a': 2}}}}",
              f"INSERT INTO \"{table}\" VALUE {{'pk': 'tr2', 'm': {{'a': 3}}}}"])
    r = txn(ddb, [f"SELECT * FROM \"{table}\" WHERE pk = 'tr1'",
                  f"SELECT m.a FROM \"{table}\" WHERE pk = 'tr2'",
                  f"SELECT * FROM \"{table}\" WHERE pk = 'tr-none'"])
    assert r["Responses"] == [{"Item": {"pk": S("tr1"), "n": N(1), "m": {"M": {"a": N(2)}}}},
                              {"Item": {"a": N(3)}}, {}]
    err = error_of(lambda: txn(ddb, [f"SELECT * FROM \"{table}\" WHERE pk = 'tr1'",
                                     f"DELETE FROM \"{table}\" WHERE pk = 'tr1'"]))
    assert err["Error"]["Code"] == "ValidationException"


def test_transaction_token_applies_once(ddb, table):
    txn(ddb, [f"INSERT INTO \"{table}\" VALUE {{'pk': 'tk', 'n': 0}}"])
    inc = [f"UPDATE \"{table}\" SET n = n + 1 WHERE pk = 'tk'"]
    token = uuid.uuid4().hex
    for _ in range(3):
        txn(ddb, inc, ClientRequestToken=token)
    assert get(ddb, table, "tk")["n"] == N(1)
    err = error_of(lambda: txn(ddb, [f"UPDATE \"{table}\" SET n = n + 2 WHERE pk = 'tk'"],
                               ClientRequestToken=token))
    assert err["Error"]["Code"] == "IdempotentParameterMismatchException"
    # The same token on TransactWriteItems is another scope: it executes.
    ddb.transact_write_items(ClientRequestToken=token, TransactItems=[{"Update": {
        "TableName": table, "Key": {"pk": S("tk")}, "UpdateExpression": "SET n = n + :one",
        "ExpressionAttributeValues": {":one": N(1)}}}])
    assert get(ddb, table, "tk")["n"] == N(2)


def test_transaction_limits(ddb, table):
    # As test_batch_limits: the other request rules are in cases/partiql.txt.
    err = error_of(lambda: txn(ddb, [f"DELETE FROM \"{table}\" WHERE pk = 'l{i}'"
                                     for i in range(101)]))
    assert err["Error"]["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 100" in err["Error"]["Message"]


# ---- PartiQL writes against the item operations on a twin table ----------------------------

def test_partiql_writes_agree_with_item_operations(module_server):
    """The same random sequence of writes, as PartiQL on one table and as PutItem, UpdateItem
    and DeleteItem on its twin: the same outcomes, items, index entries and stream records."""
    seed = int(os.environ.get("FDYNO_PARTIQL_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (replay: FDYNO_PARTIQL_SEED={seed})")
    rnd = random.Random(seed)
    ddb, streams = module_server.client(), module_server.client("dynamodbstreams")
    spec = {"StreamSpecification": {"StreamEnabled": True,
                                    "StreamViewType": "NEW_AND_OLD_IMAGES"}}
    pq, twin = _create(ddb, _name("pqa"), **spec), _create(ddb, _name("pqb"), **spec)

    def outcome(call):
        try:
            r = call()
            return ("ok", r)
        except botocore.exceptions.ClientError as e:
            return (e.response["Error"]["Code"], e.response.get("Item"))

    for _ in range(150):
        pk, v, g = rnd.choice("abcdef"), rnd.randint(0, 5), rnd.choice(["x", "y"])
        op = rnd.choice(["insert", "update", "remove", "delete", "cond_delete"])
        if op == "insert":
            got = outcome(lambda: run(ddb, f"INSERT INTO \"{pq}\" VALUE "
                                           f"{{'pk': ?, 'v': ?, 'g': ?}}", S(pk), N(v), S(g)))
            want = outcome(lambda: ddb.put_item(
                TableName=twin, Item={"pk": S(pk), "v": N(v), "g": S(g)},
                ConditionExpression="attribute_not_exists(pk)"))
            if want[0] == "ConditionalCheckFailedException":
                want = ("DuplicateItemException", None)
            got, want = got[0], want[0]
        elif op == "update":
            got = raw(module_server, "ExecuteStatement", {
                "Statement": f"UPDATE \"{pq}\" SET v = v + ? SET g = ? WHERE pk = ? AND v < 4 "
                             "RETURNING ALL NEW *",
                "Parameters": [N(v), S(g), S(pk)],
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
            got = (got[0], got[1]["Items"] if got[0] == "ok" else got[1].get("Item"))
            want = raw(module_server, "UpdateItem", dict(
                TableName=twin, Key={"pk": S(pk)}, UpdateExpression="SET v = v + :v, g = :g",
                ConditionExpression="attribute_exists(pk) AND v < :four",
                ExpressionAttributeValues={":v": N(v), ":g": S(g), ":four": N(4)},
                ReturnValues="ALL_NEW", ReturnValuesOnConditionCheckFailure="ALL_OLD"))
            want = (want[0], [want[1]["Attributes"]] if want[0] == "ok" else want[1].get("Item"))
        elif op == "remove":
            got = outcome(lambda: run(ddb, f"UPDATE \"{pq}\" REMOVE g WHERE pk = ?", S(pk)))
            want = outcome(lambda: ddb.update_item(
                TableName=twin, Key={"pk": S(pk)}, UpdateExpression="REMOVE g",
                ConditionExpression="attribute_exists(pk)"))
            got, want = got[0], want[0]
        elif op == "delete":
            got = outcome(lambda: run(ddb, f"DELETE FROM \"{pq}\" WHERE pk = ? RETURNING ALL OLD *",
                                      S(pk)))
            want = outcome(lambda: ddb.delete_item(TableName=twin, Key={"pk": S(pk)},
                                                   ReturnValues="ALL_OLD"))
            got = got[1]["Items"]
            want = [want[1]["Attributes"]] if "Attributes" in want[1] else []
        else:
            got = outcome(lambda: run(ddb, f"DELETE FROM \"{pq}\" WHERE pk = ? AND v = ?",
                                      S(pk), N(v)))
            want = outcome(lambda: ddb.delete_item(
                TableName=twin, Key={"pk": S(pk)},
                ConditionExpression="attribute_not_exists(pk) OR v = :v",
                ExpressionAttributeValues={":v": N(v)}))
            got, want = got[0], want[0]
        assert got == want, (seed, op, pk, v, g)

    def items(name, **kw):
        return sorted(json.dumps(i, sort_keys=True) for i in ddb.scan(TableName=name, **kw)["Items"])

    assert items(pq) == items(twin), seed
    assert items(pq, IndexName="by-g") == items(twin, IndexName="by-g"), seed

    def records(name):
        arn = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
        shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        out = []
        for shard in shards:
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while it:
                page = streams.get_records(ShardIterator=it)
                if not page["Records"]:
                    break
                out += [(r["eventName"], json.dumps(r["dynamodb"].get("Keys"), sort_keys=True),
                         json.dumps(r["dynamodb"].get("OldImage"), sort_keys=True),
                         json.dumps(r["dynamodb"].get("NewImage"), sort_keys=True))
                        for r in page["Records"]]
                it = page.get("NextShardIterator")
        return out

    assert records(pq) == records(twin), seed
