"""Fault rules for applications (--faults, PUT/GET/DELETE /faults): every action and every
matching field, with what fired counted exactly and what was applied read back from the table.

One server per module, with an admin listener and --allow-fault-api; each test sets its rules
and clears them after."""
import json
import threading
import time
import uuid

import boto3
import botocore.config
import botocore.exceptions
import pytest
import requests

from conftest import ACCESS_KEY, SECRET_KEY, Server, client_error, free_port

OTHER_KEY = "AKIDFDYNOTEST0000002"
OTHER_SECRET = "fdyno-test-secret-key-0000000000000000002"
OTHER_ACCOUNT = "210987654321"


@pytest.fixture(scope="module")
def fs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    admin = free_port()
    # Two accounts, for the account filter.
    keys = tmp / "keys"
    keys.write_text(f"{ACCESS_KEY} {SECRET_KEY} 123456789012\n"
                    f"{OTHER_KEY} {OTHER_SECRET} {OTHER_ACCOUNT}\n")
    s = Server(tmp, ["--credentials", str(keys), "--admin-listen", f"127.0.0.1:{admin}",
                     "--allow-fault-api"], credentials=False)
    s.admin = f"http://127.0.0.1:{admin}"
    s.wait_ready()
    yield s
    s.stop()


@pytest.fixture
def ddb(fs):
    yield fs.client()
    requests.delete(fs.admin + "/faults")


def set_rules(fs, *rules):
    r = requests.put(fs.admin + "/faults", data=json.dumps({"rules": list(rules)}))
    assert r.status_code == 200, r.text
    return r.json()


def rule_counts(fs):
    return {r["name"]: (r["matched"], r["fired"]) for r in requests.get(fs.admin + "/faults").json()["rules"]}


def injected(fs, rule, action):
    text = requests.get(fs.admin + "/metrics/prometheus").text
    needle = f'fdyno_faults_injected_total{{rule="{rule}",action="{action}"}} '
    for line in text.splitlines():
        if line.startswith(needle):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


def table(ddb, name=None):
    name = name or "f" + uuid.uuid4().hex[:10]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    return name


def count(ddb, name):
    return ddb.scan(TableName=name, Select="COUNT", ConsistentRead=True)["Count"]


def counter(ddb, name, key="c"):
    item = ddb.get_item(TableName=name, Key={"id": {"S": key}}, ConsistentRead=True).get("Item")
    return int(item["n"]["N"]) if item else 0


def add_one(ddb, name, key="c"):
    return ddb.update_item(TableName=name, Key={"id": {"S": key}}, UpdateExpression="ADD n :one",
                           ExpressionAttributeValues={":one": {"N": "1"}})


# ---- matching and counting -------------------------------------------------------------------

def test_every_third_put_on_one_table_fires_exactly_ten_times(fs, ddb):
    t, u = table(ddb), table(ddb)
    name = "third-" + t
    set_rules(fs, {"name": name, "operations": ["PutItem"], "tables": [t], "every": 3,
                   "action": "error"})
    errors = 0
    for i in range(30):
        try:
            ddb.put_item(TableName=t, Item={"id": {"S": str(i)}})
        except botocore.exceptions.ClientError as e:
            assert e.response["Error"]["Code"] == "InternalServerError"
            assert (i + 1) % 3 == 0
            errors += 1
        ddb.put_item(TableName=u, Item={"id": {"S": str(i)}})
        ddb.get_item(TableName=t, Key={"id": {"S": str(i)}})
    assert errors == 10
    assert count(ddb, t) == 20  # nothing applied when it fired
    assert count(ddb, u) == 30
    assert rule_counts(fs)[name] == (30, 10)
    assert injected(fs, name, "error") == 10


def test_times_and_seeded_probability_are_reproducible(fs, ddb):
    t = table(ddb)

    def pattern():
        set_rules(fs, {"name": "coin", "operations": ["GetItem"], "probability": 0.5, "seed": 42,
                       "times": 15, "action": "throttle", "error": "ThrottlingException"})
        out = ""
        for _ in range(60):
            try:
                ddb.get_item(TableName=t, Key={"id": {"S": "x"}})
                out += "."
            except botocore.exceptions.ClientError as e:
                assert e.response["Error"]["Code"] == "ThrottlingException"
                out += "T"
        return out

    first, second = pattern(), pattern()
    assert first == second
    assert first.count("T") == 15


def test_account_and_key_filters(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "hot-key", "accounts": ["123456789012"], "key": {"id": {"S": "hot"}},
                   "action": "throttle"})
    ddb.put_item(TableName=t, Item={"id": {"S": "cold"}})
    code, message = client_error(ddb.put_item, TableName=t, Item={"id": {"S": "hot"}})
    assert code == "ProvisionedThroughputExceededException"
    assert message == ("The level of configured provisioned throughput for the table was "
                       "exceeded. Consider increasing your provisioning level with the "
                       "UpdateTable API.")
    other = fs.client(access_key=OTHER_KEY, secret_key=OTHER_SECRET)
    ot = table(other)
    other.put_item(TableName=ot, Item={"id": {"S": "hot"}})  # another account: no match
    assert rule_counts(fs)["hot-key"] == (1, 1)


def test_partiql_statements_match_by_their_table(fs, ddb):
    t, u = table(ddb), table(ddb)
    set_rules(fs, {"name": "pq", "operations": ["ExecuteStatement"], "tables": [t],
                   "action": "error", "error": "ServiceUnavailable"})
    ddb.execute_statement(Statement=f"INSERT INTO \"{u}\" VALUE {{'id': 'a'}}")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.execute_statement(Statement=f"INSERT INTO \"{t}\" VALUE {{'id': 'a'}}")
    assert e.value.response["Error"]["Code"] == "ServiceUnavailable"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert count(ddb, t) == 0 and count(ddb, u) == 1


# ---- the actions ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["reset", "close"])
def test_lose_response_after_commit(fs, ddb, mode):
    t = table(ddb)
    set_rules(fs, {"name": "lose-" + mode, "operations": ["UpdateItem"], "times": 1,
                   "action": "lose-response-after-commit", "mode": mode})
    with pytest.raises((botocore.exceptions.ConnectionClosedError,
                        botocore.exceptions.EndpointConnectionError,
                        botocore.exceptions.ReadTimeoutError)):
        add_one(ddb, t)
    assert counter(ddb, t) == 1  # committed though the client never heard
    add_one(ddb, t)  # a retry without a token applies the ADD again
    assert counter(ddb, t) == 2
    assert injected(fs, "lose-" + mode, "lose-response-after-commit") == 1


def test_lose_response_by_delay_times_the_client_out(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "slow-answer", "operations": ["PutItem"], "times": 1,
                   "action": "lose-response-after-commit", "mode": "delay", "delay_ms": 2000})
    impatient = fs.client(read_timeout=0.5)
    with pytest.raises(botocore.exceptions.ReadTimeoutError):
        impatient.put_item(TableName=t, Item={"id": {"S": "a"}})
    assert count(ddb, t) == 1


def test_unknown_outcome_committed_and_not(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "u-yes", "operations": ["PutItem"], "key": {"id": {"S": "yes"}},
                   "action": "unknown-outcome", "committed": True},
              {"name": "u-no", "operations": ["PutItem"], "key": {"id": {"S": "no"}},
               "action": "unknown-outcome", "committed": False})
    for key in ("yes", "no"):
        code, message = client_error(ddb.put_item, TableName=t, Item={"id": {"S": key}})
        assert code == "InternalServerError"
        assert "outcome may be unknown" in message
    assert ddb.get_item(TableName=t, Key={"id": {"S": "yes"}}, ConsistentRead=True).get("Item")
    assert not ddb.get_item(TableName=t, Key={"id": {"S": "no"}}, ConsistentRead=True).get("Item")


def test_unknown_outcome_at_random_is_one_or_the_other(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "u-random", "operations": ["PutItem"], "seed": 3,
                   "action": "unknown-outcome", "committed": "random"})
    for i in range(20):
        client_error(ddb.put_item, TableName=t, Item={"id": {"S": str(i)}})
    requests.delete(fs.admin + "/faults")
    applied = count(ddb, t)
    assert 0 < applied < 20


@pytest.mark.parametrize("error", ["ProvisionedThroughputExceededException", "ThrottlingException",
                                   "RequestLimitExceeded"])
def test_throttle_applies_nothing(fs, ddb, error):
    t = table(ddb)
    set_rules(fs, {"name": "th", "operations": ["BatchWriteItem"], "action": "throttle",
                   "error": error})
    code, _ = client_error(ddb.batch_write_item, RequestItems={
        t: [{"PutRequest": {"Item": {"id": {"S": "a"}}}}]})
    assert code == error
    assert count(ddb, t) == 0


def test_sdk_retries_through_throttling(fs):
    t = table(fs.client())
    retrying = boto3.client("dynamodb", endpoint_url=fs.endpoint, region_name="us-east-1",
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                            config=botocore.config.Config(retries={"max_attempts": 4,
                                                                   "mode": "standard"}))
    set_rules(fs, {"name": "twice", "operations": ["PutItem"], "times": 2, "action": "throttle"})
    r = retrying.put_item(TableName=t, Item={"id": {"S": "a"}})
    assert r["ResponseMetadata"]["RetryAttempts"] == 2
    assert rule_counts(fs)["twice"] == (3, 2)
    requests.delete(fs.admin + "/faults")


def test_transaction_conflict(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "conflict", "key": {"id": {"S": "b"}},
                   "action": "transaction-conflict"})
    code, message = client_error(ddb.put_item, TableName=t, Item={"id": {"S": "b"}})
    assert (code, message) == ("TransactionConflictException", "Transaction is ongoing for the item")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": {"id": {"S": "a"}}}},
            {"Put": {"TableName": t, "Item": {"id": {"S": "b"}}}}])
    err = e.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in err["CancellationReasons"]] == ["None", "TransactionConflict"]
    assert count(ddb, t) == 0
    # GetItem never meets a transaction conflict.
    ddb.get_item(TableName=t, Key={"id": {"S": "b"}})


def test_transaction_in_progress_then_replay(fs, ddb):
    t = table(ddb)
    set_rules(fs, {"name": "held", "operations": ["TransactWriteItems"], "times": 1,
                   "delay_ms": 1500, "action": "transaction-in-progress"})
    request = dict(ClientRequestToken="tok-" + t, TransactItems=[
        {"Update": {"TableName": t, "Key": {"id": {"S": "c"}}, "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
    first = {}
    thread = threading.Thread(target=lambda: first.update(fs.client().transact_write_items(**request)))
    thread.start()
    time.sleep(0.4)
    code, _ = client_error(ddb.transact_write_items, **request)
    assert code == "TransactionInProgressException"
    thread.join()
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 200
    ddb.transact_write_items(**request)  # the resend after the first answered: a replay
    assert counter(ddb, t) == 1


@pytest.mark.parametrize("when", ["before", "after"])
def test_latency(fs, ddb, when):
    t = table(ddb)
    set_rules(fs, {"name": "slow-" + when, "operations": ["PutItem"], "times": 1,
                   "action": "latency", "delay_ms": 600, "when": when})
    start = time.monotonic()
    ddb.put_item(TableName=t, Item={"id": {"S": "a"}})
    assert time.monotonic() - start >= 0.6
    assert count(ddb, t) == 1


# ---- the rules' API and file --------------------------------------------------------------------

def test_bad_rules_are_refused_and_change_nothing(fs, ddb):
    set_rules(fs, {"name": "keep", "action": "error", "operations": ["DescribeLimits"]})
    r = requests.put(fs.admin + "/faults", data='{"rules": [{"action": "explode"}]}')
    assert r.status_code == 400
    assert r.json()["__type"].endswith("ValidationException")
    assert "unknown action explode" in r.json()["message"]
    assert list(rule_counts(fs)) == ["keep"]
    assert requests.delete(fs.admin + "/faults").json() == {"rules": []}
    ddb.describe_limits()


def test_fault_api_on_the_data_listener_only_when_allowed(start_server, fs):
    assert requests.get(fs.endpoint + "/faults").status_code == 200
    plain = start_server()
    assert requests.get(plain.endpoint + "/faults").status_code == 404
    assert requests.put(plain.endpoint + "/faults", data='{"rules": []}').status_code == 404


def test_rules_file_at_start(start_server, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"name": "from-file", "operations": ["ListTables"],
                                            "action": "error"}]}))
    s = start_server("--faults", str(rules))
    code, _ = client_error(s.client().list_tables)
    assert code == "InternalServerError"
    assert "rule from-file action error" in s.output()
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": [{"action": "latency"}]}')
    b = start_server("--faults", str(bad), ready=False)
    assert b.proc.wait(30) == 2
    assert "latency needs delay_ms" in b.output()
