#!/usr/bin/python3
"""link_order.py BINARY [OUT]: writes the order in which the linker lays out fdyno's functions
(default OUT: src/main/link_order.txt), from what BINARY runs under valgrind's callgrind.

Why: start-up runs a few thousand functions spread over the whole binary, and the kernel maps a
binary's page-cache pages up to 64 KB around each page fault (fault-around), so an idle server
had nearly all of its text resident (bench/README.md, startup.py, has the figures). Linked in
this order (src/main/CMakeLists.txt: lld's --symbol-ordering-file, with every fdyno object built
with -ffunction-sections), the functions an idle server has run sit together at the front, then
those its requests run, and the rest, never run, after them. RocksDB comes as Debian built
it: a listed RocksDB function moves its whole object file's .text.

How: BINARY (a Release build of fdyno) runs twice under callgrind with `serve --in-memory`:
  1. start, the first answer to `GET /`, two seconds idle;
  2. start, then one request of each operation family (tables, items, batches, queries and
     scans, transactions, PartiQL, streams).
OUT gets the mangled names of 1, then those of 2 not in 1, each in BINARY's own address order
(so code laid out together today stays together). Names the linker cannot find (functions
added or renamed since) only lose their place; regenerate after large changes:

    scripts/link_order.py build-release/src/main/fdyno

Needs valgrind and python3-boto3 (scripts/setup.sh all).
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answered(port):
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(request)
            return c.recv(4096).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def requests(port):
    """One request of each operation family, through the SDK as users send them."""
    import boto3
    from botocore.config import Config

    db = boto3.client(
        "dynamodb", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
        aws_access_key_id="fake", aws_secret_access_key="fake",
        config=Config(read_timeout=120, retries={"max_attempts": 1}))
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    db.create_table(
        TableName="link-order", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in (("pk", "S"), ("sk", "N"), ("g", "S"))],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    db.describe_table(TableName="link-order")
    db.list_tables()
    db.put_item(TableName="link-order", Item={**key, "g": {"S": "x"}, "n": {"N": "1"}})
    db.get_item(TableName="link-order", Key=key, ConsistentRead=True)
    db.update_item(TableName="link-order", Key=key, UpdateExpression="ADD n :one",
                   ConditionExpression="attribute_exists(pk)",
                   ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="ALL_NEW")
    db.query(TableName="link-order", KeyConditionExpression="pk = :p",
             ExpressionAttributeValues={":p": {"S": "a"}})
    db.query(TableName="link-order", IndexName="by-g", KeyConditionExpression="g = :g",
             ExpressionAttributeValues={":g": {"S": "x"}})
    db.scan(TableName="link-order", FilterExpression="n > :z", ExpressionAttributeValues={":z": {"N": "0"}})
    db.batch_write_item(RequestItems={"link-order": [
        {"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": str(i)}}}} for i in range(3)]})
    db.batch_get_item(RequestItems={"link-order": {"Keys": [key, {"pk": {"S": "b"}, "sk": {"N": "0"}}]}})
    db.transact_write_items(ClientRequestToken="link-order", TransactItems=[
        {"Put": {"TableName": "link-order", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}}},
        {"Delete": {"TableName": "link-order", "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}}}}])
    db.transact_get_items(TransactItems=[{"Get": {"TableName": "link-order", "Key": key}}])
    db.execute_statement(Statement="SELECT * FROM \"link-order\" WHERE pk = 'a' AND sk = 1")
    db.execute_statement(Statement="UPDATE \"link-order\" SET m = 2 WHERE pk = 'a' AND sk = 1")
    db.delete_item(TableName="link-order", Key=key)
    streams = boto3.client(
        "dynamodbstreams", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
        aws_access_key_id="fake", aws_secret_access_key="fake", config=Config(read_timeout=120))
    arn = db.describe_table(TableName="link-order")["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    streams.get_records(ShardIterator=it)


def profile(binary, work, name, then):
    """Runs `binary serve --in-memory` under callgrind until it answers, calls then(port), dumps
    the profile and kills the server (so shutdown's code is left out). The dump's path."""
    port = free_port()
    out = os.path.join(work, name)
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
         binary, "serve", "--in-memory", "--log-level", "warn",
         "--listen", f"127.0.0.1:{port}", "--data-dir", os.path.join(work, name + ".data")],
        stdout=subprocess.DEVNULL, stderr=open(out + ".log", "w"))
    try:
        deadline = time.monotonic() + 300
        while not answered(port):
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"link_order: the server did not answer (see {out}.log)")
            time.sleep(0.5)
        then(port)
        subprocess.run(["callgrind_control", "--dump", str(server.pid)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        server.kill()
        server.wait()
    return out + ".1"


def executed(dump):
    """Mangled names of the functions a callgrind dump saw run."""
    names = set()
    with open(dump) as f:
        for line in f:
            m = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if m:
                names.add(m.group(1))
    return names


def addresses(binary):
    """Function name -> address in binary, for its text symbols."""
    nm = subprocess.run(["nm", binary], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            found.setdefault(parts[2], int(parts[0], 16))
    return found


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    binary = os.path.realpath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "src/main/link_order.txt")
    where = addresses(binary)
    with tempfile.TemporaryDirectory() as work:
        idle = executed(profile(binary, work, "idle", lambda port: time.sleep(2)))
        served = executed(profile(binary, work, "requests", requests))
    first = sorted((n for n in idle if n in where), key=where.get)
    then = sorted((n for n in served - idle if n in where), key=where.get)
    with open(out, "w") as f:
        f.write("".join(n + "\n" for n in first + then))
    print(f"{out}: {len(first)} functions run by an idle server, then {len(then)} run by requests")


if __name__ == "__main__":
    main()
