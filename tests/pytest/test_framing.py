"""HTTP framing from bad or slow clients, black-box against the real binary: a malformed request
line, header or body framing, or a request its sender cut short, is answered 400 and the
connection closed (never closed without a word, never a crash); a client that trickles its
header or body is timed out without holding a worker; a seeded stream of randomly damaged
requests is answered, never with a server error, and leaves the server serving.

Short form (default): 300 damaged requests. FDYNO_FULL=1: 5,000. FDYNO_SEED=n sets the seed.
"""
import json
import os
import random
import socket
import threading
import time

import requests

from signing import call

FULL = os.environ.get("FDYNO_FULL") == "1"
SEED = int(os.environ.get("FDYNO_SEED", 1))
MUTATIONS = 5000 if FULL else 300
MIB = 1024 * 1024


def exchange(port, raw, timeout=10):
    """Sends raw bytes on a new connection, half-closes it, and returns everything the server
    sent before it closed."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(timeout)
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        return data


def split_response(data):
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], body


MALFORMED = {
    "content length not a number": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    "negative content length": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "content length overflows":
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "two content lengths":
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "content length and chunked":
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\n\r\n",
    "chunk size not hex":
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "chunk without its CRLF":
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
    "unknown version": b"POST / HTTP/9.9\r\nHost: x\r\n\r\n",
    "not HTTP": b"POST / HTTX/1.1\r\nHost: x\r\n\r\n",
    "header without colon": b"POST / HTTP/1.1\r\nHost x\r\n\r\n",
    "space in a header name": b"POST / HTTP/1.1\r\nHo st: x\r\n\r\n",
    "bad method": b"P(ST / HTTP/1.1\r\nHost: x\r\n\r\n",
    "bare LF line endings": b"POST / HTTP/1.1\nHost: x\n\n",
    "control byte in a header value": b"POST / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
    "empty target": b"POST  HTTP/1.1\r\nHost: x\r\n\r\n",
    "TLS on the plain port": b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 40,
    "header cut short": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Ty",
    "body shorter than its Content-Length":
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}",
    "chunked body cut short":
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}",
}


def test_malformed_framing_is_answered_400_then_closed(server):
    for name, raw in MALFORMED.items():
        data = exchange(server.port, raw)
        status, body = split_response(data)
        assert status == b"HTTP/1.1 400 Bad Request", (name, data[:200])
        error = json.loads(body)
        assert error["__type"] == "com.amazon.coral.validate#ValidationException", name
        assert error["message"].startswith("Malformed HTTP request: "), (name, error)
    assert server.client().describe_limits()["TableMaxReadCapacityUnits"] == 40000


def test_chunked_bodies_are_read_and_bounded(server):
    # A well-formed chunked body is a body like any other.
    r = call(server, "DescribeLimits", body=b"{}")
    assert r.status_code == 200
    chunked = (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Content-Type: application/x-amz-json-1.0\r\n"
               b"X-Amz-Target: DynamoDB_20120810.DescribeLimits\r\n\r\n")
    data = exchange(server.port, chunked + b"1\r\n{\r\n1\r\n}\r\n0\r\n\r\n")
    # Unsigned: refused by authentication, which means the body was read to its end.
    status, body = split_response(data)
    assert status == b"HTTP/1.1 400 Bad Request", data[:200]
    assert "MissingAuthenticationToken" in json.loads(body)["__type"]
    # Chunks adding up past 16 MiB: 413 while reading, before the whole body arrived.
    chunk = b"%x\r\n" % MIB + b" " * MIB + b"\r\n"
    data = exchange(server.port, chunked + chunk * 17 + b"0\r\n\r\n")
    status, body = split_response(data)
    assert status.startswith(b"HTTP/1.1 413"), data[:200]
    assert json.loads(body)["__type"].endswith("#RequestEntityTooLarge")
    assert server.client().describe_limits()


def trickle(port, head, body_bytes, interval, stop):
    """Sends head at once, then one byte of body_bytes per interval until stop is set or the
    server closes; returns (seconds until the server closed, bytes it answered)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head)
        sock.settimeout(interval)
        for i in range(len(body_bytes)):
            if stop.is_set():
                break
            try:
                sock.sendall(body_bytes[i:i + 1])
                data = sock.recv(4096)
                if data == b"":
                    return time.monotonic() - start, b""
                return time.monotonic() - start, data
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - start, b""
    return None, b""


def test_trickling_clients_are_timed_out_without_holding_the_only_worker(start_server):
    s = start_server("--workers", "1", "--header-timeout", "1")
    stop = threading.Event()
    results = {}

    def header():  # a header at a byte per 100 ms, never finished
        results["header"] = trickle(s.port, b"P",
                                    b"OST / HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 100, 0.1,
                                    stop)

    def body():  # a complete header, then 100 bytes of body at a byte per 100 ms: the body gets
        # the time its length needs at 8 KiB/s, but at least the header timeout (1 s)
        head = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
                b"X-Amz-Target: DynamoDB_20120810.DescribeLimits\r\nContent-Length: 100\r\n\r\n")
        results["body"] = trickle(s.port, head, b" " * 100, 0.1, stop)

    threads = [threading.Thread(target=header), threading.Thread(target=body)]
    for t in threads:
        t.start()
    try:
        # Meanwhile the single worker answers others at once.
        ddb = s.client()
        for _ in range(5):
            start = time.monotonic()
            assert ddb.describe_limits()["TableMaxReadCapacityUnits"] == 40000
            assert time.monotonic() - start < 0.5
    finally:
        for t in threads:
            t.join(30)
        stop.set()
    for name in ("header", "body"):
        closed_after, answered = results[name]
        assert closed_after is not None, f"the trickling {name} was never cut off"
        assert closed_after < 5, (name, closed_after)
        assert answered == b"", (name, answered)


def mutate(rng, raw):
    """raw with one to three random edits: a byte changed, inserted or deleted, a CR or LF
    inserted, a header line duplicated, or the request cut short."""
    data = bytearray(raw)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(6)
        at = rng.randrange(len(data) + 1) if kind in (1, 3) else rng.randrange(max(1, len(data)))
        if kind == 0 and data:
            data[at] = rng.randrange(256)
        elif kind == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif kind == 2 and data:
            del data[at]
        elif kind == 3:
            data[at:at] = rng.choice([b"\r", b"\n", b"\r\n", b":", b" ", b"\x00"])
        elif kind == 4:
            lines = bytes(data).split(b"\r\n")
            if len(lines) > 2:
                i = rng.randrange(1, len(lines) - 1)
                lines.insert(i, lines[i])
                data = bytearray(b"\r\n".join(lines))
        else:
            data = data[:at]
    return bytes(data) or raw[:1]  # a connection that sends nothing has nothing to answer


def test_randomly_damaged_requests_leave_the_server_serving(server):
    rng = random.Random(SEED)
    body = json.dumps({"TableName": "framing", "Key": {"pk": {"S": "a"}}}).encode()
    valid = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/x-amz-json-1.0\r\n"
             b"X-Amz-Target: DynamoDB_20120810.GetItem\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(body) + body +
             b"\r\n0\r\n\r\n",
             b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/x-amz-json-1.0\r\n"
             b"X-Amz-Target: DynamoDB_20120810.GetItem\r\n"
             b"Content-Length: %d\r\n\r\n" % len(body) + body)
    statuses = {}
    for i in range(MUTATIONS):
        raw = mutate(rng, rng.choice(valid))
        data = exchange(server.port, raw)
        status = data.split(b"\r\n", 1)[0]
        # Every damaged request is answered, also one cut short (the sender half-closed).
        assert status.startswith(b"HTTP/1."), (SEED, i, raw, data[:200])
        code = int(status.split()[1])
        # Damage is the client's fault: never a server error.
        assert code < 500, (SEED, i, raw, data[:300])
        statuses[code] = statuses.get(code, 0) + 1
    print(f"seed {SEED}: {MUTATIONS} damaged requests answered {statuses} "
          f"(replay: FDYNO_SEED={SEED})")
    assert server.proc.poll() is None
    assert requests.get(f"http://127.0.0.1:{server.port}/", timeout=10).status_code == 200
    assert server.client().describe_limits()["TableMaxReadCapacityUnits"] == 40000
