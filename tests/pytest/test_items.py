"""PutItem, GetItem, UpdateItem and DeleteItem, black-box through boto3 against the real binary.

Every expectation here is DynamoDB's behaviour (types and exact messages), so the module can be
pointed at DynamoDB itself: set FDYNO_TEST_ENDPOINT (and AWS credentials in the environment) to
run it against another endpoint instead of starting fdyno.
"""
import uuid

import botocore.exceptions
import pytest


MIXED = "Can not use both expression and non-expression parameters in the same request: "
# PutItem, UpdateItem and DeleteItem answer their request's own validation errors in DynamoDB's
# envelope (tests/pytest/cases/envelope.txt has the rule's cases); GetItem, Query and Scan bare.
ENVELOPE = "1 validation error detected: "


def _create(ddb, name, attrs, keys, lsi=None):
    args = dict(TableName=name,
                AttributeDefinitions=[{"AttributeName": n, "AttributeType": t} for n, t in attrs],
                KeySchema=[{"AttributeName": n, "KeyType": k} for n, k in keys],
                BillingMode="PAY_PER_REQUEST")
    if lsi:
        args["LocalSecondaryIndexes"] = lsi
    ddb.create_table(**args)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    return name


@pytest.fixture(scope="module")
def table(ddb):
    """A table with a string partition key `pk`."""
    name = _create(ddb, "items_hash_" + uuid.uuid4().hex[:8], [("pk", "S")], [("pk", "HASH")])
    yield name
    ddb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def composite(ddb):
    """A table with `pk` (S) and a numeric sort key `sk`, and a local index."""
    name = _create(ddb, "items_comp_" + uuid.uuid4().hex[:8],
                   [("pk", "S"), ("sk", "N"), ("lsk", "S")], [("pk", "HASH"), ("sk", "RANGE")],
                   lsi=[{"IndexName": "by_lsk",
                         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "lsk", "KeyType": "RANGE"}],
                         "Projection": {"ProjectionType": "ALL"}}])
    yield name
    ddb.delete_table(TableName=name)


def raw_call(ddb, operation, body):
    """POSTs a signed JSON request with the client's endpoint and credentials. `operation` is a
    DynamoDB operation ("PutItem") or a whole target ("DynamoDBStreams_20120810.GetRecords")."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    import json
    import requests
    req = AWSRequest(method="POST", url=ddb.meta.endpoint_url + "/", data=json.dumps(body),
                     headers={"Content-Type": "application/x-amz-json-1.0",
                              "X-Amz-Target": operation if "." in operation
                              else "DynamoDB_20120810." + operation})
    SigV4Auth(ddb._request_signer._credentials, "dynamodb", ddb.meta.region_name).add_auth(req)
    return requests.post(req.url, data=req.body, headers=dict(req.headers))


def err(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


def fails(fn, **kwargs):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(**kwargs)
    return err(e)


def key(v):
    return {"pk": {"S": v}}


# ---- happy paths ----

def test_put_get_delete_round_trip(ddb, table):
    item = {"pk": {"S": "rt"}, "s": {"S": "x"}, "n": {"N": "1.50"}, "b": {"B": b"\x00\xff"},
            "t": {"BOOL": True}, "z": {"NULL": True}, "l": {"L": [{"S": "a"}, {"N": "2"}]},
            "m": {"M": {"k": {"SS": ["a", "b"]}}}, "ns": {"NS": ["1", "2"]},
            "bs": {"BS": [b"a"]}, "empty": {"S": ""}}
    assert "Attributes" not in ddb.put_item(TableName=table, Item=item)
    got = ddb.get_item(TableName=table, Key=key("rt"), ConsistentRead=True)["Item"]
    expected = dict(item)
    expected["n"] = {"N": "1.5"}
    got["m"]["M"]["k"]["SS"].sort()
    got["ns"]["NS"].sort()
    assert got == expected
    old = ddb.delete_item(TableName=table, Key=key("rt"), ReturnValues="ALL_OLD")["Attributes"]
    assert old["s"] == {"S": "x"}
    assert "Item" not in ddb.get_item(TableName=table, Key=key("rt"))


def test_control_characters_round_trip_in_every_read(ddb, composite):
    """Strings holding every control character, in long strings too, come back escaped: boto3
    parses responses as strict JSON, which rejects raw control characters (RapidJSON 1.1.0's
    SSE2 writer used to leave 0x1A-0x1F raw in strings of 16 bytes or more)."""
    text = "".join(chr(c) for c in range(0x20)) + "x" * 20 + "".join(chr(c) for c in range(0x20))
    item = {"pk": {"S": "ctl"}, "sk": {"N": "1"}, "lsk": {"S": "ctl" + text}, "s": {"S": text},
            "ss": {"SS": [text, "y"]}, text: {"S": "name"}}
    ddb.put_item(TableName=composite, Item=item)
    k = {"pk": {"S": "ctl"}, "sk": {"N": "1"}}
    got = ddb.get_item(TableName=composite, Key=k, ConsistentRead=True)["Item"]
    assert got["s"] == {"S": text} and got[text] == {"S": "name"}
    assert sorted(got["ss"]["SS"]) == sorted([text, "y"])
    projected = ddb.get_item(TableName=composite, Key=k, ProjectionExpression="s")["Item"]
    assert projected == {"s": {"S": text}}
    for page in (ddb.query(TableName=composite, KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "ctl"}}),
                 ddb.query(TableName=composite, IndexName="by_lsk",
                           KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "ctl"}}),
                 ddb.scan(TableName=composite, FilterExpression="pk = :p",
                          ExpressionAttributeValues={":p": {"S": "ctl"}})):
        assert page["Items"][0]["s"] == {"S": text}
    ddb.delete_item(TableName=composite, Key=k)


def test_put_return_values_all_old(ddb, table):
    r = ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "a": {"N": "1"}},
                     ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "a": {"N": "2"}},
                     ReturnValues="ALL_OLD")
    assert r["Attributes"] == {"pk": {"S": "rv"}, "a": {"N": "1"}}


def test_update_all_return_values(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "up"}, "a": {"N": "1"}, "b": {"S": "keep"}})
    common = dict(TableName=table, Key=key("up"), UpdateExpression="SET a = a + :d, c = :c",
                  ExpressionAttributeValues={":d": {"N": "10"}, ":c": {"S": "new"}})
    r = ddb.update_item(ReturnValues="UPDATED_OLD", **common)
    assert r["Attributes"] == {"a": {"N": "1"}}
    r = ddb.update_item(ReturnValues="UPDATED_NEW", **common)
    assert r["Attributes"] == {"a": {"N": "21"}, "c": {"S": "new"}}
    r = ddb.update_item(ReturnValues="ALL_OLD", **common)
    assert r["Attributes"] == {"pk": {"S": "up"}, "a": {"N": "21"}, "b": {"S": "keep"},
                               "c": {"S": "new"}}
    r = ddb.update_item(ReturnValues="ALL_NEW", **common)
    assert r["Attributes"]["a"] == {"N": "41"}
    r = ddb.update_item(ReturnValues="NONE", **common)
    assert "Attributes" not in r


def test_update_creates_item_and_remove_add_delete(ddb, table):
    ddb.update_item(TableName=table, Key=key("new"),
                    UpdateExpression="SET l = list_append(if_not_exists(l, :e), :x) "
                                     "ADD n :one, s :s",
                    ExpressionAttributeValues={":e": {"L": []}, ":x": {"L": [{"N": "1"}]},
                                               ":one": {"N": "1"}, ":s": {"SS": ["a", "b"]}})
    ddb.update_item(TableName=table, Key=key("new"), UpdateExpression="DELETE s :a REMOVE l[0]",
                    ExpressionAttributeValues={":a": {"SS": ["a"]}})
    item = ddb.get_item(TableName=table, Key=key("new"), ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "new"}, "l": {"L": []}, "n": {"N": "1"}, "s": {"SS": ["b"]}}


def test_update_that_only_removes_does_not_create(ddb, table):
    r = ddb.update_item(TableName=table, Key=key("ghost"), UpdateExpression="REMOVE a",
                        ReturnValues="ALL_NEW")
    assert "Attributes" not in r
    assert "Item" not in ddb.get_item(TableName=table, Key=key("ghost"), ConsistentRead=True)
    # An update without any action creates the item with its key.
    ddb.update_item(TableName=table, Key=key("bare"))
    assert ddb.get_item(TableName=table, Key=key("bare"))["Item"] == key("bare")


def test_update_nested_paths_with_names(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "nest"},
                                        "m": {"M": {"inner": {"L": [{"N": "1"}, {"N": "2"}]}}}})
    r = ddb.update_item(TableName=table, Key=key("nest"), UpdateExpression="SET #m.#i[1] = :v",
                        ExpressionAttributeNames={"#m": "m", "#i": "inner"},
                        ExpressionAttributeValues={":v": {"S": "two"}}, ReturnValues="ALL_NEW")
    assert r["Attributes"]["m"] == {"M": {"inner": {"L": [{"N": "1"}, {"S": "two"}]}}}


def test_get_projection_and_attributes_to_get(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "proj"}, "a": {"N": "1"},
                                        "m": {"M": {"x": {"S": "1"}, "y": {"S": "2"}}}})
    r = ddb.get_item(TableName=table, Key=key("proj"), ProjectionExpression="a, #m.y",
                     ExpressionAttributeNames={"#m": "m"})
    assert r["Item"] == {"a": {"N": "1"}, "m": {"M": {"y": {"S": "2"}}}}
    r = ddb.get_item(TableName=table, Key=key("proj"), AttributesToGet=["pk", "nope"])
    assert r["Item"] == {"pk": {"S": "proj"}}


def test_condition_expressions(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "cond"}, "v": {"N": "5"}, "s": {"S": "abc"}})
    ok = [("attribute_exists(pk)", {}), ("v BETWEEN :a AND :b", {":a": {"N": "1"}, ":b": {"N": "9"}}),
          ("v IN (:a, :b)", {":a": {"N": "5"}, ":b": {"N": "6"}}),
          ("begins_with(s, :p) AND NOT contains(s, :q)", {":p": {"S": "ab"}, ":q": {"S": "z"}}),
          ("size(s) = :three OR v < :zero", {":three": {"N": "3"}, ":zero": {"N": "0"}}),
          ("attribute_type(v, :t)", {":t": {"S": "N"}})]
    for cond, values in ok:
        args = dict(TableName=table, Key=key("cond"), ConditionExpression=cond)
        if values:
            args["ExpressionAttributeValues"] = values
        ddb.update_item(UpdateExpression="SET touched = :one",
                        **{**args, "ExpressionAttributeValues": {**values, ":one": {"N": "1"}}})
    code, msg = fails(ddb.put_item, TableName=table, Item={"pk": {"S": "cond"}},
                      ConditionExpression="v > :ten",
                      ExpressionAttributeValues={":ten": {"N": "10"}})
    assert (code, msg) == ("ConditionalCheckFailedException", "The conditional request failed")


def test_condition_failure_returns_old_item_when_asked(ddb, table):
    # Sent as raw JSON: older botocore models lack ReturnValuesOnConditionCheckFailure.
    ddb.put_item(TableName=table, Item={"pk": {"S": "ccf"}, "x": {"S": "old"}})
    body = {"TableName": table, "Key": key("ccf"), "ConditionExpression": "x = :v",
            "ExpressionAttributeValues": {":v": {"S": "other"}}}
    for rvoccf, want_item in (("ALL_OLD", {"pk": {"S": "ccf"}, "x": {"S": "old"}}),
                              ("NONE", None)):
        r = raw_call(ddb, "DeleteItem", dict(body, ReturnValuesOnConditionCheckFailure=rvoccf))
        assert r.status_code == 400
        doc = r.json()
        assert doc["__type"].endswith("#ConditionalCheckFailedException")
        assert doc["message"] == "The conditional request failed"
        assert doc.get("Item") == want_item


def test_legacy_expected_attribute_updates_attributes_to_get(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "leg"}, "a": {"N": "1"}},
                 Expected={"pk": {"Exists": False}})
    code, _ = fails(ddb.put_item, TableName=table, Item={"pk": {"S": "leg"}},
                    Expected={"a": {"Value": {"N": "2"}}})
    assert code == "ConditionalCheckFailedException"
    ddb.update_item(TableName=table, Key=key("leg"),
                    AttributeUpdates={"a": {"Action": "ADD", "Value": {"N": "4"}},
                                      "b": {"Action": "PUT", "Value": {"S": "x"}}},
                    Expected={"a": {"ComparisonOperator": "EQ",
                                    "AttributeValueList": [{"N": "1"}]}})
    r = ddb.get_item(TableName=table, Key=key("leg"), AttributesToGet=["a", "b"])
    assert r["Item"] == {"a": {"N": "5"}, "b": {"S": "x"}}


def test_consumed_capacity(ddb, table):
    r = ddb.put_item(TableName=table, Item={"pk": {"S": "cap"}, "d": {"S": "x" * 1500}},
                     ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 2.0}
    r = ddb.get_item(TableName=table, Key=key("cap"), ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
    r = ddb.get_item(TableName=table, Key=key("cap"), ConsistentRead=True,
                     ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0,
                                     "Table": {"CapacityUnits": 1.0}}
    r = ddb.get_item(TableName=table, Key=key("absent"), ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["CapacityUnits"] == 0.5
    r = ddb.delete_item(TableName=table, Key=key("cap"), ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["CapacityUnits"] == 2.0
    r = ddb.put_item(TableName=table, Item=key("cap"), ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in r


def test_item_collection_metrics(ddb, composite, table):
    r = ddb.put_item(TableName=composite,
                     Item={"pk": {"S": "icm"}, "sk": {"N": "1"}, "lsk": {"S": "x"}},
                     ReturnItemCollectionMetrics="SIZE")
    assert r["ItemCollectionMetrics"]["ItemCollectionKey"] == {"pk": {"S": "icm"}}
    assert len(r["ItemCollectionMetrics"]["SizeEstimateRangeGB"]) == 2
    r = ddb.put_item(TableName=table, Item=key("icm"), ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r


def test_large_item_is_chunked_and_round_trips(ddb, table):
    big = "y" * (399 * 1024)
    ddb.put_item(TableName=table, Item={"pk": {"S": "big"}, "d": {"S": big}})
    assert ddb.get_item(TableName=table, Key=key("big"))["Item"]["d"]["S"] == big
    ddb.put_item(TableName=table, Item={"pk": {"S": "big"}, "d": {"S": "small"}})
    assert ddb.get_item(TableName=table, Key=key("big"))["Item"]["d"]["S"] == "small"


def test_numeric_sort_key(ddb, composite):
    ddb.put_item(TableName=composite, Item={"pk": {"S": "n"}, "sk": {"N": "1e2"}})
    r = ddb.get_item(TableName=composite, Key={"pk": {"S": "n"}, "sk": {"N": "100.0"}})
    assert r["Item"]["sk"] == {"N": "100"}


# ---- validation ----

def test_enum_constraints_reported_together(ddb, table):
    code, msg = fails(ddb.put_item, TableName=table, Item=key("e"), ReturnValues="BAD",
                      ReturnConsumedCapacity="BAD", ReturnItemCollectionMetrics="BAD")
    assert code == "ValidationException"
    assert msg.startswith("3 validation errors detected: ")
    for member in ("returnValues", "returnConsumedCapacity", "returnItemCollectionMetrics"):
        assert f"at '{member}'" in msg


def test_missing_table(ddb):
    assert fails(ddb.get_item, TableName="no_such_table_xyz", Key=key("a")) == (
        "ResourceNotFoundException", "Requested resource not found")
    assert fails(ddb.put_item, TableName="no_such_table_xyz", Item=key("a"))[0] == \
        "ResourceNotFoundException"


def test_key_validation(ddb, table, composite):
    schema = ("ValidationException", "The provided key element does not match the schema")
    assert fails(ddb.get_item, TableName=table, Key={"pk": {"N": "1"}}) == schema
    assert fails(ddb.get_item, TableName=table, Key={"other": {"S": "1"}}) == schema
    assert fails(ddb.get_item, TableName=table, Key={"pk": {"S": "1"}, "x": {"S": "1"}}) == schema
    assert fails(ddb.delete_item, TableName=composite, Key={"pk": {"S": "1"}}) == schema
    assert fails(ddb.get_item, TableName=table, Key={"pk": {"S": ""}}) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: pk")
    assert fails(ddb.put_item, TableName=table, Item={"x": {"S": "1"}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Missing the key pk in the item")
    assert fails(ddb.put_item, TableName=table, Item={"pk": {"N": "1"}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for key pk expected: S "
        "actual: N")
    assert fails(ddb.put_item, TableName=table, Item={"pk": {"S": "x" * 2049}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum "
        "size limit of2048 bytes")


def test_update_of_key_attribute_rejected(ddb, composite):
    for attr in ("pk", "sk"):
        assert fails(ddb.update_item, TableName=composite, Key={"pk": {"S": "k"}, "sk": {"N": "1"}},
                     UpdateExpression=f"SET {attr} = :v",
                     ExpressionAttributeValues={":v": {"S": "x"} if attr == "pk" else {"N": "2"}}
                     ) == ("ValidationException",
                           "One or more parameter values were invalid: Cannot update attribute "
                           f"{attr}. This attribute is part of the key")


def test_item_size_limit(ddb, table):
    assert fails(ddb.put_item, TableName=table,
                 Item={"pk": {"S": "huge"}, "d": {"S": "x" * (400 * 1024)}}) == (
        "ValidationException", "Item size has exceeded the maximum allowed size")
    ddb.put_item(TableName=table, Item={"pk": {"S": "grow"}, "d": {"S": "x" * (300 * 1024)}})
    assert fails(ddb.update_item, TableName=table, Key=key("grow"), UpdateExpression="SET e = :v",
                 ExpressionAttributeValues={":v": {"S": "y" * (200 * 1024)}}) == (
        "ValidationException", "Item size to update has exceeded the maximum allowed size")


def test_names_and_values_count_across_expressions(ddb, table):
    # Names used by one expression and values by another count across the request (the rules
    # on unused and undefined ones: tests/pytest/cases/).
    ddb.update_item(TableName=table, Key=key("a"), UpdateExpression="SET #n = :v",
                    ConditionExpression="attribute_not_exists(#n) OR #n <> :w",
                    ExpressionAttributeNames={"#n": "n"},
                    ExpressionAttributeValues={":v": {"S": "x"}, ":w": {"S": "w"}})

def test_a_write_breaking_two_rules_gets_only_the_first(ddb, table):
    # After the API model's constraints (all reported together), DynamoDB checks a write's rules
    # one at a time and answers with the first one broken: legacy/expression mixing, then the
    # attribute values, then ReturnValues, then the item size, then the expressions, then what
    # needs the table (its key schema). Each request below breaks the two rules named.
    empty_set = {"SS": []}
    big = {"S": "x" * (400 * 1024)}
    put = lambda **kw: fails(ddb.put_item, TableName=table, **kw)
    update = lambda **kw: fails(ddb.update_item, TableName=table, Key=key("two"), **kw)
    mixed = dict(Expected={"a": {"Exists": False}}, ConditionExpression="attribute_exists(a)")
    # A constraint and the mix: only the constraint list.
    assert put(Item=key("two"), ReturnConsumedCapacity="BAD", **mixed) == (
        "ValidationException",
        "1 validation error detected: Value 'BAD' at 'returnConsumedCapacity' failed to satisfy "
        "constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]")
    # The mix and an empty set.
    assert put(Item={"pk": {"S": "two"}, "s": empty_set}, **mixed) == (
        "ValidationException",
        ENVELOPE + MIXED + "Non-expression parameters: {Expected} Expression parameters: "
                "{ConditionExpression}")
    # An empty set and ReturnValues.
    assert put(Item={"pk": {"S": "two"}, "s": empty_set}, ReturnValues="ALL_NEW") == (
        "ValidationException",
        ENVELOPE + "One or more parameter values were invalid: An string set  may not be empty")
    # ReturnValues and the item size.
    assert put(Item={"pk": {"S": "two"}, "d": big}, ReturnValues="ALL_NEW") == (
        "ValidationException", ENVELOPE + "ReturnValues can only be ALL_OLD or NONE")
    # The item size and a condition's syntax.
    assert put(Item={"pk": {"S": "two"}, "d": big}, ConditionExpression="a =") == (
        "ValidationException", "Item size has exceeded the maximum allowed size")
    # A condition's syntax and the key schema (the item lacks the key).
    assert put(Item={"x": {"S": "two"}}, ConditionExpression="a =")[1].startswith(
        ENVELOPE + "Invalid ConditionExpression: Syntax error; ")
    # UpdateItem: the mix and an empty set in the key.
    assert fails(ddb.update_item, TableName=table, Key={"pk": empty_set},
                 AttributeUpdates={"a": {"Action": "DELETE"}}, UpdateExpression="REMOVE a") == (
        "ValidationException", ENVELOPE + MIXED + "Non-expression parameters: {AttributeUpdates} "
                                       "Expression parameters: {UpdateExpression}")
    # A syntax error and an unused value.
    assert update(UpdateExpression="SET a =", ExpressionAttributeValues={":unused": {"S": "u"}}
                  )[1].startswith(ENVELOPE + "Invalid UpdateExpression: Syntax error; ")
    # Updating a key attribute, and an item that would be over 400 KB.
    assert update(UpdateExpression="SET pk = :k, d = :big",
                  ExpressionAttributeValues={":k": {"S": "k"}, ":big": big}) == (
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute "
        "is part of the key")
    assert "Item" not in ddb.get_item(TableName=table, Key=key("two"), ConsistentRead=True)


def test_invalid_expression_attribute_value_names_its_key(ddb, table):
    """A bad value in ExpressionAttributeValues is reported with its key, for every operation
    that takes expressions."""
    bad = {":v": {"N": "not-a-number"}}
    expected = "ExpressionAttributeValues contains invalid value: "
    calls = [
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "ev"}},
                             ConditionExpression="a = :v", ExpressionAttributeValues=bad),
        lambda: ddb.query(TableName=table, KeyConditionExpression="pk = :v",
                          ExpressionAttributeValues=bad),
        lambda: ddb.transact_write_items(TransactItems=[{"ConditionCheck": {
            "TableName": table, "Key": {"pk": {"S": "ev"}}, "ConditionExpression": "a = :v",
            "ExpressionAttributeValues": bad}}]),
    ]
    for call in calls:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call()
        err = e.value.response["Error"]
        assert err["Code"] == "ValidationException"
        assert err["Message"].removeprefix(ENVELOPE).startswith(expected), err["Message"]
        assert err["Message"].endswith(" for key :v"), err["Message"]


def test_update_size_limit_leaves_out_the_key_and_counts_the_actions(ddb, table):
    # DynamoDB measures an UpdateItem as the item after it without its key attributes, plus
    # a cost per action: an item PutItem accepts can be out of UpdateItem's reach.
    base = {"pk": {"S": "edge"}, "n": {"N": "1"}}
    fixed = 2 + 4 + 2 + 1 + 1  # pk + "edge", n + 1, and "d"
    item = dict(base, d={"S": "x" * (409_600 - fixed - 10)})
    ddb.put_item(TableName=table, Item=item)
    # The finished item is 409,600 - 10 bytes: under the limit, but without the 6-byte key and
    # with 3 + 19 bytes for one SET it is over.
    assert fails(ddb.update_item, TableName=table, Key=key("edge"), UpdateExpression="SET n = :n",
                 ExpressionAttributeValues={":n": {"N": "2"}}) == (
        "ValidationException", "Item size to update has exceeded the maximum allowed size")
    ddb.put_item(TableName=table, Item=dict(item, n={"N": "2"}))  # the same item, put
    # A REMOVE costs 2: the update that shrinks the item fits.
    ddb.update_item(TableName=table, Key=key("edge"), UpdateExpression="REMOVE n")


def test_update_size_limit_charges_a_set_through_a_list_index_one_byte_more(ddb, table):
    # The same finished item, reached by a SET through a list index (3 + 20 bytes) or by a SET
    # of the whole list (3 + 19): the item without its key lands exactly on 400 KB with the
    # plain SET and one byte over with the list index.
    key_bytes = 2 + 2  # "pk" + "li"
    fixed = key_bytes + (1 + 3 + 1 + 1) + 1  # the key, l: ["a"], and the name "d"
    padding = 409_600 - 22 + key_bytes - fixed
    ddb.put_item(TableName=table, Item={"pk": {"S": "li"}, "l": {"L": [{"S": "a"}]},
                                        "d": {"S": "x" * padding}})
    assert fails(ddb.update_item, TableName=table, Key=key("li"), UpdateExpression="SET l[0] = :v",
                 ExpressionAttributeValues={":v": {"S": "b"}}) == (
        "ValidationException", "Item size to update has exceeded the maximum allowed size")
    item = ddb.get_item(TableName=table, Key=key("li"), ConsistentRead=True)["Item"]
    assert item["l"] == {"L": [{"S": "a"}]}
    ddb.update_item(TableName=table, Key=key("li"), UpdateExpression="SET l = :l",
                    ExpressionAttributeValues={":l": {"L": [{"S": "b"}]}})
    item = ddb.get_item(TableName=table, Key=key("li"), ConsistentRead=True)["Item"]
    assert item["l"] == {"L": [{"S": "b"}]}


def test_write_capacity_of_index_entries(ddb):
    name = "items_idx_" + uuid.uuid4().hex[:8]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in
                              ("pk", "sk", "g", "l")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [
            {"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    k = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    r = ddb.put_item(TableName=name, Item=dict(k, g={"S": "x"}, l={"S": "y"}),
                     ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {
        "TableName": name, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 1.0}},
        "LocalSecondaryIndexes": {"lsi": {"CapacityUnits": 1.0}}}
    # Moving the GSI key: a delete and a put there; the KEYS_ONLY LSI entry is unchanged.
    r = ddb.update_item(TableName=name, Key=k, UpdateExpression="SET g = :g",
                        ExpressionAttributeValues={":g": {"S": "z"}},
                        ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {
        "TableName": name, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 2.0}}}
    r = ddb.update_item(TableName=name, Key=k, UpdateExpression="SET note = :o",
                        ExpressionAttributeValues={":o": {"S": "o"}},
                        ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": name, "CapacityUnits": 2.0}
    r = ddb.delete_item(TableName=name, Key=k, ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"]["CapacityUnits"] == 3.0
    r = ddb.batch_write_item(RequestItems={name: [
        {"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"S": str(i)}, "g": {"S": "x"}}}}
        for i in range(3)]}, ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == [{
        "TableName": name, "CapacityUnits": 6.0, "Table": {"CapacityUnits": 3.0},
        "GlobalSecondaryIndexes": {"gsi": {"CapacityUnits": 3.0}}}]


def test_legacy_not_contains_fails_on_a_missing_attribute(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "nc"}})
    assert fails(ddb.put_item, TableName=table, Item={"pk": {"S": "nc"}}, Expected={
        "tags": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "x"}]}}) == (
        "ConditionalCheckFailedException", "The conditional request failed")
    ddb.put_item(TableName=table, Item={"pk": {"S": "nc"}, "tags": {"SS": ["y"]}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "nc"}}, Expected={
        "tags": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "x"}]}})


def test_remove_nested_path_on_a_missing_item_is_accepted(ddb, table):
    r = ddb.update_item(TableName=table, Key=key("ghost2"), UpdateExpression="REMOVE a.b",
                        ReturnValues="ALL_NEW")
    assert "Attributes" not in r
    assert "Item" not in ddb.get_item(TableName=table, Key=key("ghost2"), ConsistentRead=True)


def test_attribute_name_length_limit(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "names"}, "n" * 65_535: {"S": "x"}})
    for item in ({"pk": {"S": "names"}, "n" * 65_536: {"S": "x"}},
                 {"pk": {"S": "names"}, "m": {"M": {"n" * 65_536: {"S": "x"}}}}):
        assert fails(ddb.put_item, TableName=table, Item=item) == (
            "ValidationException",
            "1 validation error detected: Attribute name is too large, must be less than 65536 "
            "bytes")
    for path in ("#n", "m.#n"):
        assert fails(ddb.update_item, TableName=table, Key=key("names"),
                     UpdateExpression=f"SET {path} = :v",
                     ExpressionAttributeNames={"#n": "n" * 65_536},
                     ExpressionAttributeValues={":v": {"S": "x"}}) == (
            "ValidationException",
            "1 validation error detected: Attribute name is too large, must be less than 65536 "
            "bytes")


TOO_LARGE = ("ValidationException",
             "1 validation error detected: Attribute name is too large, must be less than 65536 "
             "bytes")
EMPTY = ("ValidationException", "Empty attribute name")


def written(expected):
    """`expected` as PutItem, UpdateItem and DeleteItem answer it: in the envelope, once."""
    kind, message = expected
    return (kind, message if message.startswith(ENVELOPE) else ENVELOPE + message)


def test_attribute_names_in_legacy_parameters(ddb, table):
    """AttributeUpdates, Expected, AttributesToGet, QueryFilter, ScanFilter and KeyConditions
    name attributes: not empty and at most 65,535 bytes, as in items."""
    ddb.put_item(TableName=table, Item={"pk": {"S": "legacy-names"}, "n" * 65_535: {"N": "1"}})
    got = ddb.get_item(TableName=table, Key=key("legacy-names"), AttributesToGet=["n" * 65_535])
    assert got["Item"] == {"n" * 65_535: {"N": "1"}}
    for name, expected in (("n" * 65_536, TOO_LARGE), ("", EMPTY)):
        assert fails(ddb.update_item, TableName=table, Key=key("legacy-names"),
                     AttributeUpdates={name: {"Action": "PUT", "Value": {"S": "x"}}}) == written(expected)
        assert fails(ddb.delete_item, TableName=table, Key=key("legacy-names"),
                     Expected={name: {"Exists": False}}) == written(expected)
        assert fails(ddb.get_item, TableName=table, Key=key("legacy-names"),
                     AttributesToGet=["a", name]) == expected
        assert fails(ddb.batch_get_item, RequestItems={
            table: {"Keys": [key("legacy-names")], "AttributesToGet": [name]}}) == expected
        assert fails(ddb.scan, TableName=table, AttributesToGet=[name]) == expected
        assert fails(ddb.scan, TableName=table, ScanFilter={
            name: {"ComparisonOperator": "NOT_NULL"}}) == expected
        assert fails(ddb.query, TableName=table, KeyConditions={
            "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "legacy-names"}]}},
            QueryFilter={name: {"ComparisonOperator": "NULL"}}) == expected
        assert fails(ddb.query, TableName=table, KeyConditions={
            name: {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}]}}) == expected
    assert ddb.get_item(TableName=table, Key=key("legacy-names"))["Item"] == {
        "pk": {"S": "legacy-names"}, "n" * 65_535: {"N": "1"}}


def test_expression_attribute_names_are_attribute_names(ddb, table):
    """Every ExpressionAttributeNames value is an attribute name, whatever expression uses it:
    an empty one is refused naming its key, a long one as in items."""
    ddb.put_item(TableName=table, Item={"pk": {"S": "expr-names"}, "a": {"N": "1"}})
    empty = ("ValidationException",
             "ExpressionAttributeNames contains invalid value: Empty attribute name for key #n")
    for name, expected in (("n" * 65_536, TOO_LARGE), ("", empty)):
        names = {"#n": name}
        assert fails(ddb.get_item, TableName=table, Key=key("expr-names"),
                     ProjectionExpression="#n", ExpressionAttributeNames=names) == expected
        assert fails(ddb.update_item, TableName=table, Key=key("expr-names"),
                     UpdateExpression="REMOVE #n", ExpressionAttributeNames=names) == written(expected)
        assert fails(ddb.update_item, TableName=table, Key=key("expr-names"),
                     UpdateExpression="SET a = :v", ConditionExpression="attribute_exists(#n)",
                     ExpressionAttributeNames=names,
                     ExpressionAttributeValues={":v": {"N": "2"}}) == written(expected)
        assert fails(ddb.put_item, TableName=table, Item={"pk": {"S": "expr-names"}},
                     ConditionExpression="attribute_not_exists(#n)",
                     ExpressionAttributeNames=names) == written(expected)
        assert fails(ddb.scan, TableName=table, FilterExpression="attribute_exists(#n)",
                     ExpressionAttributeNames=names) == expected
        assert fails(ddb.query, TableName=table, KeyConditionExpression="pk = :p",
                     ProjectionExpression="#n", ExpressionAttributeNames=names,
                     ExpressionAttributeValues={":p": {"S": "expr-names"}}) == expected
        assert fails(ddb.batch_get_item, RequestItems={table: {
            "Keys": [key("expr-names")], "ProjectionExpression": "#n",
            "ExpressionAttributeNames": names}}) == expected
        assert fails(ddb.transact_write_items, TransactItems=[{"Update": {
            "TableName": table, "Key": key("expr-names"), "UpdateExpression": "SET #n = :v",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {":v": {"N": "2"}}}}]) == expected
        assert fails(ddb.transact_get_items, TransactItems=[{"Get": {
            "TableName": table, "Key": key("expr-names"), "ProjectionExpression": "#n",
            "ExpressionAttributeNames": names}}]) == expected
    assert ddb.get_item(TableName=table, Key=key("expr-names"))["Item"] == {
        "pk": {"S": "expr-names"}, "a": {"N": "1"}}


def test_empty_attribute_name_in_items_and_keys(ddb, table):
    """An item's attribute name is never empty (a key of a map inside a value may be)."""
    item = {"pk": {"S": "empty-name"}, "": {"S": "x"}}
    assert fails(ddb.put_item, TableName=table, Item=item) == written(EMPTY)
    assert fails(ddb.batch_write_item,
                 RequestItems={table: [{"PutRequest": {"Item": item}}]}) == EMPTY
    assert fails(ddb.transact_write_items,
                 TransactItems=[{"Put": {"TableName": table, "Item": item}}]) == EMPTY
    assert fails(ddb.scan, TableName=table, ExclusiveStartKey={"": {"S": "x"}}) == EMPTY
    assert fails(ddb.scan, TableName=table,
                 ExclusiveStartKey={"n" * 65_536: {"S": "x"}}) == TOO_LARGE
    assert "Item" not in ddb.get_item(TableName=table, Key=key("empty-name"))
    nested = {"pk": {"S": "empty-name"}, "m": {"M": {"": {"S": "x"}}}}
    ddb.put_item(TableName=table, Item=nested)
    assert ddb.get_item(TableName=table, Key=key("empty-name"))["Item"] == nested
