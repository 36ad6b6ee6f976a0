"""TransactWriteItems and TransactGetItems, black-box through boto3 against the real binary.

Expectations are DynamoDB's behaviour (types, messages, CancellationReasons), except where a
test says it checks an fdyno guarantee (closed request schema, metrics, persistence across a
restart). Set FDYNO_TEST_ENDPOINT to point the DynamoDB-behaviour tests at another endpoint. The
request rules that one request shows are in cases/transactions.txt.
"""
import json
import uuid

import botocore.exceptions
import pytest
import requests

from conftest import Server
from signing import call, error_message, error_type

CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons "


@pytest.fixture(scope="module")
def server(module_server):
    return module_server


def _create(ddb, prefix, attrs, keys):
    name = prefix + uuid.uuid4().hex[:8]
    ddb.create_table(TableName=name,
                     AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                                           for n, t in attrs],
                     KeySchema=[{"AttributeName": n, "KeyType": k} for n, k in keys],
                     BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    return name


@pytest.fixture(scope="module")
def table(ddb):
    return _create(ddb, "txn_hash_", [("pk", "S")], [("pk", "HASH")])


@pytest.fixture(scope="module")
def composite(ddb):
    return _create(ddb, "txn_comp_", [("pk", "S"), ("sk", "N")], [("pk", "HASH"), ("sk", "RANGE")])


def _get(ddb, table, key):
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def _error(exc):
    return exc.value.response["Error"]["Code"], exc.value.response["Error"]["Message"]


def test_write_actions_commit_together_across_tables(ddb, table, composite):
    ddb.put_item(TableName=table, Item={"pk": {"S": "del"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "chk"}, "state": {"S": "open"}})
    out = ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": "new"}, "v": {"N": "1"}}}},
            {"Update": {"TableName": composite, "Key": {"pk": {"S": "u"}, "sk": {"N": "7"}},
                        "UpdateExpression": "SET #d = :d",
                        "ExpressionAttributeNames": {"#d": "data"},
                        "ExpressionAttributeValues": {":d": {"S": "x"}}}},
            {"Delete": {"TableName": table, "Key": {"pk": {"S": "del"}}}},
            {"ConditionCheck": {"TableName": table, "Key": {"pk": {"S": "chk"}},
                                "ConditionExpression": "#s = :open",
                                "ExpressionAttributeNames": {"#s": "state"},
                                "ExpressionAttributeValues": {":open": {"S": "open"}}}},
        ],
        ReturnConsumedCapacity="TOTAL")
    by_table = {c["TableName"]: c for c in out["ConsumedCapacity"]}
    assert by_table[table]["WriteCapacityUnits"] == 6.0
    assert by_table[composite]["WriteCapacityUnits"] == 2.0
    assert _get(ddb, table, {"pk": {"S": "new"}}) == {"pk": {"S": "new"}, "v": {"N": "1"}}
    assert _get(ddb, composite, {"pk": {"S": "u"}, "sk": {"N": "7"}})["data"] == {"S": "x"}
    assert _get(ddb, table, {"pk": {"S": "del"}}) is None


def test_cancellation_writes_nothing_and_reports_reasons(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "taken"}, "owner": {"S": "a"}})
    with pytest.raises(botocore.exceptions.ClientError) as exc:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": "unrelated"}}}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": "taken"}, "owner": {"S": "b"}},
                     "ConditionExpression": "attribute_not_exists(pk)",
                     "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        ])
    code, message = _error(exc)
    assert code == "TransactionCanceledException"
    assert message == CANCELLED + "[None, ConditionalCheckFailed]"
    reasons = exc.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[1]["Code"] == "ConditionalCheckFailed"
    assert reasons[1]["Message"] == "The conditional request failed"
    assert reasons[1]["Item"] == {"pk": {"S": "taken"}, "owner": {"S": "a"}}
    assert _get(ddb, table, {"pk": {"S": "unrelated"}}) is None
    assert _get(ddb, table, {"pk": {"S": "taken"}})["owner"] == {"S": "a"}


def test_client_request_token_replays_once(ddb, table):
    token = "tok-" + uuid.uuid4().hex[:20]
    request = dict(
        ClientRequestToken=token, ReturnConsumedCapacity="TOTAL",
        TransactItems=[{"Update": {"TableName": table, "Key": {"pk": {"S": "counter"}},
                                   "UpdateExpression": "ADD n :one",
                                   "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
    first = ddb.transact_write_items(**request)
    assert "WriteCapacityUnits" in first["ConsumedCapacity"][0]
    second = ddb.transact_write_items(**request)
    assert "ReadCapacityUnits" in second["ConsumedCapacity"][0]
    assert _get(ddb, table, {"pk": {"S": "counter"}})["n"] == {"N": "1"}
    changed = dict(request)
    changed["TransactItems"] = [{"Update": {"TableName": table, "Key": {"pk": {"S": "counter"}},
                                            "UpdateExpression": "ADD n :two",
                                            "ExpressionAttributeValues": {":two": {"N": "2"}}}}]
    with pytest.raises(botocore.exceptions.ClientError) as exc:
        ddb.transact_write_items(**changed)
    assert _error(exc)[0] == "IdempotentParameterMismatchException"
    assert _get(ddb, table, {"pk": {"S": "counter"}})["n"] == {"N": "1"}


def test_transact_get_items(ddb, table, composite):
    ddb.put_item(TableName=table, Item={"pk": {"S": "g1"}, "a": {"S": "x"}, "b": {"N": "2"}})
    ddb.put_item(TableName=composite, Item={"pk": {"S": "g2"}, "sk": {"N": "1"}, "c": {"S": "y"}})
    out = ddb.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": table, "Key": {"pk": {"S": "g1"}},
                     "ProjectionExpression": "#b", "ExpressionAttributeNames": {"#b": "b"}}},
            {"Get": {"TableName": composite, "Key": {"pk": {"S": "g2"}, "sk": {"N": "1"}}}},
            {"Get": {"TableName": table, "Key": {"pk": {"S": "absent"}}}},
        ],
        ReturnConsumedCapacity="TOTAL")
    assert out["Responses"][0] == {"Item": {"b": {"N": "2"}}}
    assert out["Responses"][1]["Item"]["c"] == {"S": "y"}
    assert out["Responses"][2] == {}
    assert {c["TableName"] for c in out["ConsumedCapacity"]} == {table, composite}


def test_transact_get_items_projection_selecting_nothing_leaves_item_out(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "g3"}, "a": {"S": "x"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "g4"}, "a": {"S": "x"}})
    out = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": table, "Key": {"pk": {"S": "g3"}}, "ProjectionExpression": "nope"}},
        {"Get": {"TableName": table, "Key": {"pk": {"S": "g4"}}, "ProjectionExpression": "a"}},
    ])
    assert out["Responses"] == [{}, {"Item": {"a": {"S": "x"}}}]


def test_more_than_100_actions(server, table):
    # The other request rules are in cases/transactions.txt. This message renders the list as
    # Java does, with object identities that vary from answer to answer: only its end is fixed.
    ddb = server.client(parameter_validation=False)  # let the server see invalid requests
    with pytest.raises(botocore.exceptions.ClientError) as exc:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": f"m{i}"}}}} for i in range(101)])
    code, message = _error(exc)
    assert code == "ValidationException"
    assert message.endswith("at 'transactItems' failed to satisfy constraint: Member must have "
                            "length less than or equal to 100")


def test_update_is_held_to_the_update_item_size_limit(ddb, table):
    # A transaction's Update is held to UpdateItem's 400 KB rule: the item after the update
    # without its key attributes, plus 3 bytes and 19 for each SET, must fit. The finished item
    # (400 KB - 10 bytes) would fit a PutItem.
    fixed = 2 + 4 + 2 + 1 + 1  # pk + "edge", n + 1, and "d"
    item = {"pk": {"S": "edge"}, "n": {"N": "1"}, "d": {"S": "x" * (409_600 - fixed - 10)}}
    ddb.put_item(TableName=table, Item=item)
    update = {"TableName": table, "Key": {"pk": {"S": "edge"}},
              "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "2"}}}
    with pytest.raises(botocore.exceptions.ClientError) as exc:
        ddb.transact_write_items(TransactItems=[{"Update": update}])
    assert _error(exc) == ("TransactionCanceledException", CANCELLED + "[ValidationError]")
    assert exc.value.response["CancellationReasons"] == [{
        "Code": "ValidationError",
        "Message": "Item size to update has exceeded the maximum allowed size"}]
    assert _get(ddb, table, {"pk": {"S": "edge"}})["n"] == {"N": "1"}
    # A REMOVE costs 2: the update that shrinks the item fits.
    remove = {"TableName": table, "Key": {"pk": {"S": "edge"}}, "UpdateExpression": "REMOVE n"}
    ddb.transact_write_items(TransactItems=[{"Update": remove}])
    assert "n" not in _get(ddb, table, {"pk": {"S": "edge"}})


def test_unknown_members_are_rejected(server, table):
    """fdyno guarantee: the request schema is closed, so a token's fingerprint covers every
    member that could change the effect."""
    body = {"TransactItems": [{"Put": {"TableName": table, "Item": {"pk": {"S": "u"}},
                                       "Mystery": True}}]}
    r = call(server, "TransactWriteItems", json.dumps(body))
    assert r.status_code == 400
    assert error_type(r) == "ValidationException"
    assert "'Mystery'" in error_message(r)


def test_token_metrics_are_exported(server, ddb, table):
    """fdyno guarantee: replays and mismatches are counted in /metrics/prometheus."""
    token = "metrics-" + uuid.uuid4().hex[:8]
    item = {"Put": {"TableName": table, "Item": {"pk": {"S": "met"}}}}
    ddb.transact_write_items(ClientRequestToken=token, TransactItems=[item])
    ddb.transact_write_items(ClientRequestToken=token, TransactItems=[item])
    text = requests.get(server.endpoint + "/metrics/prometheus", timeout=10).text
    replays = [line for line in text.splitlines()
               if line.startswith("fdyno_txn_token_replays_total")]
    assert replays and float(replays[0].split()[-1]) >= 1
    assert any(line.startswith("fdyno_txn_token_mismatches_total") for line in text.splitlines())


def test_token_survives_restart(tmp_path):
    """fdyno guarantee: the token record is durable; a restarted server replays it."""
    s = Server(tmp_path, [])
    s.wait_ready()
    try:
        ddb = s.client()
        name = _create(ddb, "txn_restart_", [("pk", "S")], [("pk", "HASH")])
        request = dict(ClientRequestToken="restart-token", TransactItems=[
            {"Update": {"TableName": name, "Key": {"pk": {"S": "c"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
        ddb.transact_write_items(**request)
    finally:
        s.stop()
    s2 = Server(tmp_path, [])  # same data directory, a new process
    s2.wait_ready()
    try:
        ddb = s2.client()
        ddb.transact_write_items(**request)
        assert _get(ddb, name, {"pk": {"S": "c"}})["n"] == {"N": "1"}
    finally:
        s2.stop()


def test_transact_get_over_4_mb_of_items_is_rejected_whole(ddb, table):
    for i in range(11):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"big{i}"}, "b": {"S": "b" * 399_000}})
    gets = [{"Get": {"TableName": table, "Key": {"pk": {"S": f"big{i}"}}}} for i in range(11)]
    # Ten items (about 3.99 MB) are within the limit.
    r = ddb.transact_get_items(TransactItems=gets[:10])
    assert [len(x["Item"]["b"]["S"]) for x in r["Responses"]] == [399_000] * 10
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_get_items(TransactItems=gets)
    assert _error(e) == ("ValidationException",
                         "The aggregate size of the items in the transaction exceeded 4 MB")


def test_client_request_token_length_counts_characters(ddb, table):
    # 36 characters of two UTF-8 bytes each: within the limit; 37 characters: not.
    item = {"Put": {"TableName": table, "Item": {"pk": {"S": "token-chars"}}}}
    ddb.transact_write_items(ClientRequestToken="\u00e9" * 36, TransactItems=[item])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_write_items(ClientRequestToken="\u00e9" * 37, TransactItems=[item])
    code, message = _error(e)
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 36" in message


def test_writes_beyond_the_engine_transaction_are_a_validation_error(ddb):
    """Ten items of 399,800 bytes on a table with two GSIs projecting ALL: within DynamoDB's
    4 MB, but their index entries triple the writes past the 10 MB one engine transaction holds.
    fdyno's documented deviation: a ValidationException the client can act on (never a 500 an
    SDK retries forever), and nothing written."""
    name = "txbig-" + uuid.uuid4().hex[:8]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "g1", "g2")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": f"by_{g}",
                                 "KeySchema": [{"AttributeName": g, "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}} for g in ("g1", "g2")])
    puts = [{"Put": {"TableName": name, "Item": {
        "pk": {"S": f"k{i}"}, "g1": {"S": "a"}, "g2": {"S": "b"}, "v": {"S": "v" * 399_780}}}}
        for i in range(10)]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_write_items(TransactItems=puts)
    code, message = _error(e)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert code == "ValidationException"
    assert "one transaction of the storage engine can hold" in message
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == 0
