"""PutItem, UpdateItem and DeleteItem on the network thread (--inline-writes, the default): they
run there up to their commit, the engine's commit thread answers, and retries (conflicts,
unknown commit results) run on a worker. Compared here with the worker path
(--inline-writes false): the same answers, every write applied once, and a prompt shutdown.
"""
import re
import signal
import threading
import time

import pytest
import requests


def _table(client, name):
    client.create_table(TableName=name,
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        BillingMode="PAY_PER_REQUEST")
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})


@pytest.mark.parametrize("inline", ["true", "false"])
def test_concurrent_adds_to_one_item_apply_exactly_once(start_server, inline):
    # Eight clients add to one counter at once: their read-modify-write transactions conflict,
    # and the retries of network-thread writes run on workers. Every success counts once.
    s = start_server("--inline-writes", inline)
    _table(s.client(), "tbl")
    threads, errors, per_thread = [], [], 60

    def adder(i):
        client = s.client()
        try:
            for j in range(per_thread):
                client.update_item(TableName="tbl", Key={"pk": {"S": "n"}},
                                   UpdateExpression="ADD n :one, seen :me",
                                   ExpressionAttributeValues={":one": {"N": "1"},
                                                              ":me": {"SS": [f"{i}-{j}"]}})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    for i in range(8):
        threads.append(threading.Thread(target=adder, args=(i,)))
        threads[-1].start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    item = s.client().get_item(TableName="tbl", Key={"pk": {"S": "n"}}, ConsistentRead=True)["Item"]
    assert item["n"] == {"N": str(8 * per_thread)}
    assert len(item["seen"]["SS"]) == 8 * per_thread
    # The retry path was taken: the adds conflicted.
    metrics = requests.get(s.endpoint + "/metrics/prometheus").text
    conflicts = re.search(r"^fdyno_kv_conflicts_total (\d+)$", metrics, re.M)
    assert conflicts and int(conflicts.group(1)) > 0, metrics


@pytest.mark.parametrize("inline", ["true", "false"])
def test_write_answers_match_between_paths(start_server, inline):
    s = start_server("--inline-writes", inline)
    c = s.client()
    _table(c, "tbl")
    put = c.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "1"}},
                     ReturnConsumedCapacity="TOTAL")
    assert put["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 1.0}
    old = c.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "2"}},
                     ReturnValues="ALL_OLD")
    assert old["Attributes"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    with pytest.raises(c.exceptions.ConditionalCheckFailedException) as e:
        c.put_item(TableName="tbl", Item={"pk": {"S": "a"}},
                   ConditionExpression="attribute_not_exists(pk)")
    assert e.value.response["Error"]["Message"] == "The conditional request failed"
    with pytest.raises(c.exceptions.ResourceNotFoundException):
        c.put_item(TableName="missing", Item={"pk": {"S": "a"}})
    new = c.update_item(TableName="tbl", Key={"pk": {"S": "a"}}, UpdateExpression="ADD v :one",
                        ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="ALL_NEW")
    assert new["Attributes"] == {"pk": {"S": "a"}, "v": {"N": "3"}}
    gone = c.delete_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnValues="ALL_OLD")
    assert gone["Attributes"] == {"pk": {"S": "a"}, "v": {"N": "3"}}
    assert "Item" not in c.get_item(TableName="tbl", Key={"pk": {"S": "a"}})


def test_shutdown_is_prompt_after_network_thread_writes(start_server):
    # A connection that wrote and stays open (keep-alive) must not hold the shutdown for the
    # whole drain timeout: the answered write keeps nothing alive.
    s = start_server("--drain-timeout", "60")
    c = s.client()
    _table(c, "tbl")
    for i in range(20):
        c.put_item(TableName="tbl", Item={"pk": {"S": str(i)}})
    began = time.time()
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=60) == 0
    assert time.time() - began < 20, s.output()
