"""The stream replayed equals the table, across SIGKILL: random writes of every kind (item
operations and PartiQL, with conditions, on a table with an LSI and two GSIs) by three writers, the
server killed with SIGKILL in the middle of them and restarted, more writes; then the stream is read
from TRIM_HORIZON. Replaying its records in order must give exactly the table (read by Scan) and the
writers' model, and every record's OldImage must be the NewImage its key had before
(NEW_AND_OLD_IMAGES).

fdyno-specific (it kills the server it starts). Seeds 1 and 2; FDYNO_SEED=n replays one.
"""
import random
import signal

import pytest

from conftest import Server
from model_writer import (INITIAL, SEEDS, TABLE, Background, Writer, check_all, create_table,
                          key_of, wait_for)


def start(tmp_path):
    return Server(tmp_path, []).wait_ready()


def kill(server):
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(30)
    server.stop()


def replay(server):
    """The table the stream describes, and the number of records."""
    ddb, streams = server.client(), server.client("dynamodbstreams")
    arn = ddb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    table, count = {}, 0
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while it:
            page = streams.get_records(ShardIterator=it)
            for r in page["Records"]:
                count += 1
                d = r["dynamodb"]
                key = key_of(d["Keys"])
                assert d.get("OldImage") == table.get(key), \
                    f"record {count} ({r['eventName']} {key}): OldImage is not the previous image"
                if r["eventName"] == "REMOVE":
                    assert "NewImage" not in d
                    table.pop(key)
                else:
                    assert r["eventName"] == ("MODIFY" if d.get("OldImage") else "INSERT")
                    table[key] = d["NewImage"]
            if not page["Records"]:
                break
            it = page.get("NextShardIterator")
    return table, count


@pytest.mark.parametrize("seed", SEEDS)
def test_stream_replay_equals_the_table_across_sigkill(tmp_path, seed):
    rng = random.Random(seed)
    server = start(tmp_path)
    writers, background = [], []
    try:
        create_table(server.client(), stream="NEW_AND_OLD_IMAGES")
        writers = [Writer(server.client(), seed * 10 + t, [f"w{t}a", f"w{t}b"], f"writer {t}")
                   for t in range(3)]
        background = [Background(w) for w in writers]
        for b in background:
            b.await_steps(80)
    finally:
        kill(server)
        wait_for(lambda: all(b.crashed or b.error or not b.thread.is_alive() for b in background))
        for b in background:
            b.stop()
    server = start(tmp_path)
    try:
        for w in writers:
            w.resolve(server.client())
            w.ddb = server.client()
            for _ in range(60):
                w.step()
        model = {k: v for w in writers for k, v in w.model.items()}
        check_all(server.client(), model, INITIAL, rng, f"seed {seed}")
        table, count = replay(server)
        assert table == model, "the stream replayed is not the table"
        assert count >= len(model)
    finally:
        server.stop()
