"""Response loss: the client talks to the real server through a proxy that, on a seeded share of
connections, lets the request through and then loses the response: drops it and closes, resets
the connection, or cuts the response short. The server has applied the request; the client does
not know. Resends must apply it once:

* TransactWriteItems through boto3 with its own retries (botocore fills ClientRequestToken and
  keeps it across its retries);
* TransactWriteItems resent by hand with the same ClientRequestToken until answered;
* PutItem of the same image (idempotent by itself) through boto3's retries.

Each transaction ADDs 1 to one of a few counters and puts a marker item of its own, so a
transaction applied twice shows as a counter above its markers. Checked directly against the
server afterwards: every counter equals the number of its markers (all-or-nothing, never
twice), never exceeds what was sent, and every acknowledged transaction's marker is present.

Short form (default): 120 transactions. FDYNO_FULL=1: 2,000. FDYNO_SEED=n sets the seed.
"""
import os
import random
import socket
import threading
import uuid

import boto3
import botocore.config
import botocore.exceptions

from conftest import ACCESS_KEY, REGION, SECRET_KEY

FULL = os.environ.get("FDYNO_FULL") == "1"
SEED = int(os.environ.get("FDYNO_SEED", 1))
TRANSACTIONS = 2000 if FULL else 120
COUNTERS = 4
LOSS = 0.2  # share of responses lost


class LossyProxy:
    """Forwards TCP connections to the server and decides the fate of each response it carries
    back (the server sends Content-Length on every response): it passes, or with probability
    LOSS it is lost after the server applied the request: "drop" closes the client's side
    without a byte of it, "reset" closes it with a TCP reset, "cut" forwards half and closes."""

    FATES = ("drop", "reset", "cut")

    def __init__(self, server_port, seed):
        self.server_port = server_port
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.counts = {"pass": 0, "drop": 0, "reset": 0, "cut": 0}
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def fate(self):
        with self.lock:
            f = self.rng.choice(self.FATES) if self.rng.random() < LOSS else "pass"
            self.counts[f] += 1
            return f

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.server_port))
            threading.Thread(target=self.forward, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self.answer, args=(upstream, client), daemon=True).start()

    @staticmethod
    def shutdown(sock, how=socket.SHUT_RDWR):
        try:
            sock.shutdown(how)
        except OSError:
            pass

    def forward(self, client, upstream):
        """Client to server, and the one place a connection's sockets are closed: a shutdown
        elsewhere wakes this thread's recv (closing a socket another thread reads would not)."""
        try:
            while data := client.recv(65536):
                upstream.sendall(data)
        except OSError:
            pass
        self.shutdown(upstream)
        client.close()  # a reset when answer() set SO_LINGER 0
        upstream.close()

    def answer(self, upstream, client):
        buffer = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = upstream.recv(65536)
                    if not data:
                        raise OSError("server closed")
                    buffer += data
                head, _, rest = buffer.partition(b"\r\n\r\n")
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                while len(rest) < length:
                    data = upstream.recv(65536)
                    if not data:
                        raise OSError("server closed")
                    rest += data
                response, buffer = head + b"\r\n\r\n" + rest[:length], rest[length:]
                fate = self.fate()
                if fate == "pass":
                    client.sendall(response)
                    continue
                if fate == "cut":
                    client.sendall(response[:len(response) // 2])
                if fate == "reset":
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                      b"\x01\0\0\0\0\0\0\0")
                    self.shutdown(client, socket.SHUT_RD)
                    return
                break
        except OSError:
            pass
        self.shutdown(client)

    def stop(self):
        self.listener.close()


def client(port, attempts):
    return boto3.client(
        "dynamodb", endpoint_url=f"http://127.0.0.1:{port}", region_name=REGION,
        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
        config=botocore.config.Config(retries={"max_attempts": attempts, "mode": "legacy"},
                                      read_timeout=30, connect_timeout=10))


def transaction(i):
    return [{"Update": {"TableName": "loss", "Key": {"pk": {"S": f"counter-{i % COUNTERS}"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            {"Put": {"TableName": "loss",
                     "Item": {"pk": {"S": f"marker-{i}"}, "counter": {"N": str(i % COUNTERS)}}}}]


def test_lost_responses_resent_apply_once(start_server):
    server = start_server("--durability", "none")
    direct = server.client()
    direct.create_table(TableName="loss", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    proxy = LossyProxy(server.port, SEED)
    sdk = client(proxy.port, attempts=20)  # botocore resends with the token it filled in
    by_hand = client(proxy.port, attempts=1)  # no retry of its own: the test resends
    acknowledged, sent, unanswered = set(), 0, set()
    try:
        for i in range(TRANSACTIONS):
            sent += 1
            if i % 2 == 0:
                try:
                    sdk.transact_write_items(TransactItems=transaction(i))
                    acknowledged.add(i)
                except botocore.exceptions.BotoCoreError:
                    unanswered.add(i)
            else:
                token = str(uuid.UUID(int=random.Random(SEED * 100_003 + i).getrandbits(128)))
                for _ in range(50):
                    try:
                        by_hand.transact_write_items(TransactItems=transaction(i),
                                                     ClientRequestToken=token)
                        acknowledged.add(i)
                        break
                    except botocore.exceptions.BotoCoreError:
                        continue  # the response was lost: resend the same request
                else:
                    unanswered.add(i)
            if i % 8 == 0:  # an idempotent write through the SDK's retries
                sdk.put_item(TableName="loss", Item={"pk": {"S": f"plain-{i}"}})
    finally:
        proxy.stop()

    items = []
    kwargs = {"TableName": "loss", "ConsistentRead": True}
    while True:
        page = direct.scan(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    markers = {int(it["pk"]["S"].split("-")[1]): int(it["counter"]["N"])
               for it in items if it["pk"]["S"].startswith("marker-")}
    counters = {int(it["pk"]["S"].split("-")[1]): int(it["n"]["N"])
                for it in items if it["pk"]["S"].startswith("counter-")}
    plain = [it for it in items if it["pk"]["S"].startswith("plain-")]
    lost = sum(v for k, v in proxy.counts.items() if k != "pass")
    applied = set(markers)
    print(f"seed {SEED}: {sent} transactions sent, {len(acknowledged)} acknowledged, "
          f"{len(unanswered)} unanswered ({len(unanswered & applied)} of them applied), "
          f"{len(applied)} applied; connections {proxy.counts} (replay: FDYNO_SEED={SEED})")
    assert lost > TRANSACTIONS // 10, proxy.counts  # responses were really lost
    # Every transaction's fate is known: answered (it must be applied), or unanswered and then
    # settled by its marker; and no marker belongs to a transaction that was not sent.
    assert acknowledged | unanswered == set(range(sent)) and not acknowledged & unanswered
    assert acknowledged <= applied, "an acknowledged transaction is missing"
    assert applied <= set(range(sent)), "a marker of no transaction sent"
    for c in range(COUNTERS):
        mine = sum(1 for counter in markers.values() if counter == c)
        # All-or-nothing and once: the counter moved exactly once per marker written, and each
        # marker names its transaction's counter.
        assert counters.get(c, 0) == mine, (c, counters.get(c), mine)
    assert all(markers[i] == i % COUNTERS for i in applied)
    assert sum(counters.values()) == len(applied)
    assert len(plain) == (TRANSACTIONS + 7) // 8
