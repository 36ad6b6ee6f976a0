"""Request cases from data files: one request and DynamoDB's exact answer per case.

Each file in tests/pytest/cases/ holds blocks of this shape:

    === what the case shows
    before: PutItem {"TableName": "$hash", "Item": {...}}      (optional, repeatable: must succeed)
    PutItem {"TableName": "$hash", ...}                          (the request)
    ValidationException: <the exact message>                     (or: ok)

An operation is DynamoDB's ("PutItem") or a whole target ("DynamoDBStreams_20120810.GetRecords").
Lines starting with '#' are comments. `$hash`, `$composite`, `$indexed` and `$provisioned` name
the module's tables (see `tables`), `$region` and `$account` the client's region and the caller's
account (as in the tables' ARNs), in requests and answers. Requests are sent as raw signed JSON,
so a case can hold what an SDK would refuse to send. Like the other DynamoDB-behaviour modules it
can be pointed at DynamoDB itself with FDYNO_TEST_ENDPOINT.
"""
import json
import pathlib
import uuid

import pytest

from test_items import _create, raw_call

CASES_DIR = pathlib.Path(__file__).parent / "cases"


def _parse(path):
    cases, case = [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("=== "):
            case = {"name": line[4:], "before": [], "request": None, "answer": None,
                    "where": f"{path.name}:{number}"}
            cases.append(case)
            continue
        assert case is not None, f"{path.name}:{number}: a line outside a case"
        if line.startswith("before: "):
            case["before"].append(_request(line[len("before: "):]))
        elif case["request"] is None:
            case["request"] = _request(line)
        else:
            assert case["answer"] is None, f"{path.name}:{number}: two answers"
            case["answer"] = line
    for c in cases:
        assert c["request"] and c["answer"], f"{c['where']}: a case needs a request and an answer"
    return cases


def _request(line):
    operation, _, body = line.partition(" ")
    return operation, body


def _all_cases():
    for path in sorted(CASES_DIR.glob("*.txt")):
        for case in _parse(path):
            yield pytest.param(case, id=f"{path.stem}: {case['name']}")


@pytest.fixture(scope="module")
def tables(ddb):
    suffix = uuid.uuid4().hex[:8]
    names = {
        "hash": _create(ddb, "cases_hash_" + suffix, [("pk", "S")], [("pk", "HASH")]),
        "composite": _create(ddb, "cases_comp_" + suffix, [("pk", "S"), ("sk", "N")],
                             [("pk", "HASH"), ("sk", "RANGE")]),
    }
    ddb.create_table(
        TableName="cases_idx_" + suffix, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "gpk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi1",
                                 "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    ddb.get_waiter("table_exists").wait(TableName="cases_idx_" + suffix,
                                        WaiterConfig={"Delay": 1})
    names["indexed"] = "cases_idx_" + suffix
    names["provisioned"] = _create_provisioned(ddb, "cases_prov_" + suffix)
    arn = ddb.describe_table(TableName=names["hash"])["Table"]["TableArn"]
    yield dict(names, region=ddb.meta.region_name, account=arn.split(":")[4])
    for name in names.values():
        ddb.delete_table(TableName=name)


def _create_provisioned(ddb, name):
    """PROVISIONED 5/5, with a global index `gsi1` (5/5) and a local index `lsi1`."""
    five = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    ddb.create_table(
        TableName=name, ProvisionedThroughput=five,
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in (("pk", "S"), ("sk", "N"), ("gpk", "N"), ("lsk", "S"))],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi1",
                                 "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"},
                                 "ProvisionedThroughput": five}],
        LocalSecondaryIndexes=[{"IndexName": "lsi1",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "lsk", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    return name


def _with_tables(text, tables):
    for key, name in tables.items():
        text = text.replace("$" + key, name)
    return text


def _send(ddb, tables, request):
    operation, body = request
    return raw_call(ddb, operation, json.loads(_with_tables(body, tables)))


@pytest.mark.parametrize("case", list(_all_cases()))
def test_request_case(ddb, tables, case):
    for before in case["before"]:
        response = _send(ddb, tables, before)
        assert response.status_code == 200, (case["where"], response.text)
    response = _send(ddb, tables, case["request"])
    body = response.json()
    if case["answer"] == "ok":
        assert response.status_code == 200, (case["where"], body)
        return
    error_type, _, message = _with_tables(case["answer"], tables).partition(": ")
    assert response.status_code == 400, (case["where"], body)
    assert body["__type"].rsplit("#", 1)[-1] == error_type, (case["where"], body)
    assert body.get("message", body.get("Message")) == message, case["where"]
