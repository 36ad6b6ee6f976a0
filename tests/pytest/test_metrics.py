"""/metrics/prometheus as Prometheus tooling sees it: `promtool check metrics` (Debian package
prometheus) with no warning after every kind of work, and the engine's and workers' figures."""
import re
import shutil
import subprocess
import time

import pytest
import requests

from conftest import free_port, self_signed_cert

PROMTOOL = shutil.which("promtool")


def _work(server):
    """Requests of every family, a GSI backfill, a dropped table, token records."""
    ddb = server.client()
    ddb.create_table(TableName="metered", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(50):
        ddb.put_item(TableName="metered", Item={"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % 5}"},
                                                "v": {"S": "x" * 2000}})
    ddb.get_item(TableName="metered", Key={"pk": {"S": "k1"}})
    ddb.query(TableName="metered", KeyConditionExpression="pk = :p",
              ExpressionAttributeValues={":p": {"S": "k1"}})
    ddb.scan(TableName="metered")
    ddb.batch_write_item(RequestItems={"metered": [
        {"PutRequest": {"Item": {"pk": {"S": "b1"}, "g": {"S": "g"}}}}]})
    ddb.batch_get_item(RequestItems={"metered": {"Keys": [{"pk": {"S": "b1"}}]}})
    for _ in range(2):  # the second is a token replay
        ddb.transact_write_items(ClientRequestToken="token-1", TransactItems=[
            {"Update": {"TableName": "metered", "Key": {"pk": {"S": "counter"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
    ddb.update_table(TableName="metered",
                     AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                     GlobalSecondaryIndexUpdates=[{"Create": {
                         "IndexName": "by_g",
                         "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                         "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    deadline = time.time() + 30
    while ddb.describe_table(TableName="metered")["Table"]["GlobalSecondaryIndexes"][0][
            "IndexStatus"] != "ACTIVE":
        assert time.time() < deadline
        time.sleep(0.1)
    with pytest.raises(ddb.exceptions.ResourceNotFoundException):
        ddb.describe_table(TableName="absent")
    ddb.create_table(TableName="dropped", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    ddb.put_item(TableName="dropped", Item={"pk": {"S": "x"}})
    ddb.delete_table(TableName="dropped")


def _samples(text):
    values = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name_labels, value = line.rsplit(" ", 1)
        values[name_labels] = float(value)
    return values


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_finds_nothing_to_say(start_server):
    s = start_server("--txn-token-gc-interval", "100ms")
    _work(s)
    text = requests.get(s.endpoint + "/metrics/prometheus").text
    check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0 and check.stdout == "" and check.stderr == "", (
        check.stdout + check.stderr)
    # Every family has help text, even those promtool would let pass.
    families = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    described = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    assert families == described, families - described


def test_engine_and_worker_figures(start_server):
    s = start_server("--txn-token-gc-interval", "100ms", "--operation-timeout", "45")
    _work(s)
    deadline = time.time() + 20
    while True:
        values = _samples(requests.get(s.endpoint + "/metrics/prometheus").text)
        # The dropped table's data is removed by the purge worker, after DeleteTable answered.
        if (values.get("fdyno_txn_token_gc_passes_total", 0) >= 1
                and values.get("fdyno_table_purges_total", 0) >= 1):
            break
        assert time.time() < deadline
        time.sleep(0.1)
    assert values["fdyno_kv_commit_batch_transactions_count"] >= 50
    assert values["fdyno_kv_commit_batch_bytes_sum"] > 100_000
    assert values["fdyno_kv_commit_write_seconds_count"] >= 50
    assert values["fdyno_kv_memtable_bytes"] > 100_000
    for name in ("fdyno_kv_sst_bytes", "fdyno_kv_compactions_total",
                 "fdyno_kv_compaction_written_bytes_total", "fdyno_kv_write_stalls_total",
                 "fdyno_kv_write_stopped", "fdyno_kv_running_compactions",
                 "fdyno_kv_delayed_write_rate_bytes", "fdyno_index_work_running"):
        assert name in values, name
    assert values["fdyno_index_backfill_items_total"] >= 52
    assert values["fdyno_index_backfills_finished_total"] == 1
    assert values["fdyno_table_purges_total"] == 1
    assert values["fdyno_txn_token_replays_total"] == 1
    assert values['fdyno_requests_total{operation="PutItem"}'] >= 50
    assert values['fdyno_errors_total{operation="DescribeTable",'
                  'error_type="ResourceNotFoundException"}'] == 1
    # Latency buckets reach the operation timeout.
    assert 'fdyno_request_duration_seconds_bucket{operation="PutItem",le="45"}' in values
    assert 'fdyno_request_duration_seconds_bucket{operation="PutItem",le="50"}' not in values


def test_admin_listener_line_says_https_with_tls(start_server, tmp_path):
    cert, key = self_signed_cert(tmp_path)
    admin = free_port()
    s = start_server("--admin-listen", f"127.0.0.1:{admin}", tls=(cert, key))
    assert f"metrics on https://127.0.0.1:{admin}" in s.output()
    r = requests.get(f"https://127.0.0.1:{admin}/metrics/prometheus", verify=cert)
    assert r.status_code == 200
