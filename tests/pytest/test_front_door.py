"""The front door: fdyno serve, the DynamoDB JSON protocol, SigV4, limits, metrics, TLS and
graceful shutdown, exercised black-box against the real binary."""
import datetime
import gzip
import json
import re
import signal
import socket
import subprocess
import threading
import time
import zlib

import botocore.exceptions
import pytest
import requests

from conftest import ACCESS_KEY, FDYNO_BIN, SECRET_KEY, Server, free_port, self_signed_cert
from signing import call, error_message, error_type, presigned_call

MIB = 1024 * 1024
SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your "
    "AWS Secret Access Key and signing method. Consult the service documentation for details.")


def client_error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


# ---- Protocol ----

def test_health(server):
    r = requests.get(server.endpoint + "/")
    assert r.status_code == 200
    assert r.text.startswith("healthy")


def test_signed_requests_accepted(server):
    ddb = server.client()
    endpoints = ddb.describe_endpoints()["Endpoints"]
    assert endpoints == [{"Address": f"127.0.0.1:{server.port}", "CachePeriodInMinutes": 1440}]
    limits = ddb.describe_limits()
    assert limits["AccountMaxReadCapacityUnits"] == 80000
    assert limits["AccountMaxWriteCapacityUnits"] == 80000
    assert limits["TableMaxReadCapacityUnits"] == 40000
    assert limits["TableMaxWriteCapacityUnits"] == 40000


def test_json_11_accepted(server):
    r = call(server, "DescribeLimits", headers={"Content-Type": "application/x-amz-json-1.1"})
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/x-amz-json-1.1"


def test_crc32_and_request_id_on_every_response(server):
    for r in (call(server, "DescribeEndpoints"),                 # success
              call(server, "NoSuchOperation"),                   # client error
              call(server, "DescribeLimits", sign=False),        # auth error
              requests.get(server.endpoint + "/")):              # health
        assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.content), r.headers
        assert re.fullmatch(r"[A-Z0-9]{52}", r.headers["x-amzn-RequestId"]), r.headers


def test_unknown_operation(server):
    for target in ("DynamoDB_20120810.NoSuchOperation", "DynamoDBStreams_20120810.NoSuchOperation",
                   "DynamoDB_20120810.", "SomethingElse.GetItem"):
        r = call(server, None, target=target)
        assert r.status_code == 400, target
        assert r.json() == {"__type": "com.amazon.coral.service#UnknownOperationException"}
    # No target at all.
    r = call(server, None, target="")
    assert r.status_code == 400
    assert error_type(r) == "UnknownOperationException"


def test_malformed_json_is_serialization_exception(server):
    r = call(server, "DescribeLimits", body="{not json")
    assert r.status_code == 400
    assert r.json() == {"__type": "com.amazon.coral.service#SerializationException"}
    r = call(server, "DescribeLimits", body="[]")
    assert error_type(r) == "SerializationException"
    r = call(server, "DescribeLimits", body="")
    assert error_type(r) == "SerializationException"


def test_invalid_utf8_is_a_serialization_exception_and_nothing_is_stored(server):
    table = {"TableName": "utf8", "BillingMode": "PAY_PER_REQUEST",
             "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
             "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}]}
    assert call(server, "CreateTable", json.dumps(table)).status_code == 200
    for bad in (b'{"TableName":"utf8","Item":{"k":{"S":"a\xffb"}}}',       # in a value
                b'{"TableName":"utf8","Item":{"k":{"S":"k\xff"}}}',        # in a key
                b'{"TableName":"utf8","Item":{"k":{"S":"x"},"n\xc0\xaf":{"S":"v"}}}',  # name
                b'{"TableName":"utf8","Item":{"k":{"S":"\xed\xa0\x80"}}}',  # a surrogate
                b'{"TableName":"utf8\xff","Item":{"k":{"S":"x"}}}'):        # a table name
        r = call(server, "PutItem", bad)
        assert (r.status_code, r.json()) == (
            400, {"__type": "com.amazon.coral.service#SerializationException"}), bad
    r = call(server, "Scan", '{"TableName":"utf8"}')
    assert r.json()["Count"] == 0
    # Valid text, raw or escaped, is stored and returned as sent.
    assert call(server, "PutItem", r'{"TableName":"utf8","Item":{"k":{"S":"\u00e9\ud83d\ude00"}}}'
                ).status_code == 200
    assert call(server, "PutItem", '{"TableName":"utf8","Item":{"k":{"S":"€"}}}'
                ).status_code == 200
    keys = sorted(i["k"]["S"] for i in call(server, "Scan", '{"TableName":"utf8"}').json()["Items"])
    assert keys == sorted(["é😀", "€"])


def test_non_json_content_type_is_unknown_operation(server):
    r = call(server, "DescribeLimits", headers={"Content-Type": "text/plain"})
    assert r.status_code == 404
    assert error_type(r) == "UnknownOperationException"


def test_keep_alive_many_requests_one_connection(server):
    with requests.Session() as s:
        for _ in range(50):
            assert call(server, "DescribeEndpoints", session=s).status_code == 200
        # Every request went over the one connection the pool opened.
        pool = s.get_adapter(server.endpoint).poolmanager.connection_from_url(server.endpoint)
        assert pool.num_connections == 1
        assert pool.num_requests == 50


# ---- Authentication ----

def test_missing_authentication(server):
    r = call(server, "DescribeLimits", sign=False)
    assert r.status_code == 400
    assert error_type(r) == "MissingAuthenticationTokenException"
    assert error_message(r) == "Request is missing Authentication Token"


def test_wrong_secret(server):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        server.client(secret_key="not-the-secret").describe_limits()
    code, message = client_error(e)
    assert code == "InvalidSignatureException"
    assert message.startswith(SIGNATURE_MISMATCH)


def test_unknown_access_key(server):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        server.client(access_key="AKIDNOSUCHKEY").describe_limits()
    assert client_error(e) == ("UnrecognizedClientException",
                               "The security token included in the request is invalid.")


def test_a_region_that_is_neither_aws_nor_the_servers_is_refused(server):
    # Every AWS region is one of this endpoint's (test_regions.py); a made-up one is not.
    server.client(region="eu-west-1").describe_limits()
    with pytest.raises(botocore.exceptions.ClientError) as e:
        server.client(region="moon-east-1").describe_limits()
    code, message = client_error(e)
    assert code == "InvalidSignatureException"
    assert message.startswith("Credential should be scoped to a valid region, not 'moon-east-1'.")


def test_stale_and_future_dates(server):
    now = datetime.datetime.utcnow()
    r = call(server, "DescribeLimits", when=now - datetime.timedelta(minutes=16))
    assert r.status_code == 400
    assert error_type(r) == "InvalidSignatureException"
    assert re.fullmatch(r"Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z "
                        r"\(\d{8}T\d{6}Z - 15 min\.\)", error_message(r)), error_message(r)
    r = call(server, "DescribeLimits", when=now + datetime.timedelta(minutes=16))
    assert error_type(r) == "InvalidSignatureException"
    assert error_message(r).startswith("Signature not yet current")
    # Within 15 minutes is fine.
    r = call(server, "DescribeLimits", when=now - datetime.timedelta(minutes=10))
    assert r.status_code == 200, r.text


def test_tampered_body(server):
    r = call(server, "DescribeLimits", body='{}', send_body=b'{"x":1}')
    assert r.status_code == 400
    assert error_type(r) == "InvalidSignatureException"
    assert error_message(r).startswith(SIGNATURE_MISMATCH)
    # A payload hash header that does not match the body is rejected too.
    r = call(server, "DescribeLimits", body='{}',
             headers={"X-Amz-Content-Sha256": "0" * 64})
    assert error_type(r) == "InvalidSignatureException"


def test_presigned_query_form(server):
    r = presigned_call(server, "DescribeLimits")
    assert r.status_code == 200, r.text
    assert r.json()["TableMaxReadCapacityUnits"] == 40000
    r = presigned_call(server, "DescribeLimits", secret_key="wrong")
    assert error_type(r) == "InvalidSignatureException"
    r = presigned_call(server, "DescribeLimits", send_body='{"x":1}')
    assert error_type(r) == "InvalidSignatureException"
    old = datetime.datetime.utcnow() - datetime.timedelta(minutes=10)
    r = presigned_call(server, "DescribeLimits", expires=60, when=old)
    assert error_type(r) == "InvalidSignatureException"
    assert error_message(r).startswith("Signature expired")


def test_authorization_parameters_separated_by_spaces_alone_are_read(server):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    for secret, status in ((SECRET_KEY, 200), ("wrong", 400)):
        req = AWSRequest(method="POST", url=server.endpoint + "/", data="{}",
                         headers={"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.DescribeLimits"})
        SigV4Auth(Credentials(ACCESS_KEY, secret), "dynamodb", "us-east-1").add_auth(req)
        headers = dict(req.headers)
        headers["Authorization"] = headers["Authorization"].replace(", ", " ")
        r = requests.post(server.endpoint + "/", data="{}", headers=headers, timeout=10)
        assert r.status_code == status, r.text
        if status != 200:
            assert error_type(r) == "InvalidSignatureException"


def test_account_scopes_the_request_context(tmp_path):
    # Each key of the credentials file names its account, and the request context carries the
    # account of the key that signed: ARNs are rendered in it.
    creds = tmp_path / "two-accounts"
    creds.write_text("AKIDACCOUNTONE000001 secret-one 111111111111\n"
                     "AKIDACCOUNTTWO000002 secret-two 222222222222\n")
    server = Server(tmp_path, ["--credentials", str(creds)], credentials=False).wait_ready()
    try:
        one = server.client(access_key="AKIDACCOUNTONE000001", secret_key="secret-one")
        two = server.client(access_key="AKIDACCOUNTTWO000002", secret_key="secret-two")
        created = one.create_table(
            TableName="acct_ctx", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST")["TableDescription"]
        assert ":111111111111:table/acct_ctx" in created["TableArn"]
        # The other account has its own namespace: the name is free there, and its table's ARN
        # is in its own account.
        with pytest.raises(two.exceptions.ResourceNotFoundException):
            two.describe_table(TableName="acct_ctx")
        theirs = two.create_table(
            TableName="acct_ctx", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST")["TableDescription"]
        assert ":222222222222:table/acct_ctx" in theirs["TableArn"]
        assert one.describe_table(TableName="acct_ctx")["Table"]["TableArn"] == \
            created["TableArn"]
        with pytest.raises(botocore.exceptions.ClientError):
            server.client(access_key="AKIDACCOUNTTWO000002", secret_key="secret-one") \
                .describe_endpoints()
    finally:
        server.stop()


def test_open_mode_accepts_any_signature(start_server):
    s = start_server(credentials=False)
    ddb = s.client(access_key="anything", secret_key="whatever", region="eu-west-1")
    assert ddb.describe_limits()["TableMaxWriteCapacityUnits"] == 40000
    assert error_type(call(s, "DescribeLimits", sign=False)) == \
        "MissingAuthenticationTokenException"


def test_open_mode_refuses_non_loopback(tmp_path):
    port = free_port()
    proc = subprocess.run([FDYNO_BIN, "serve", "--listen", f"0.0.0.0:{port}", "--data-dir",
                           str(tmp_path / "d")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "--allow-anonymous" in proc.stderr
    assert "open mode" in proc.stderr


def test_operation_timeout_beyond_the_receipt_lifetime_is_refused(tmp_path):
    # Receipts live ten minutes: an operation allowed longer could apply a late retry twice.
    proc = subprocess.run([FDYNO_BIN, "serve", "--listen", f"127.0.0.1:{free_port()}",
                           "--data-dir", str(tmp_path / "d"), "--operation-timeout", "301"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "--operation-timeout" in proc.stderr + proc.stdout


def test_open_mode_non_loopback_with_allow_anonymous(start_server):
    s = start_server("--allow-anonymous", credentials=False, listen_host="0.0.0.0")
    assert s.client().describe_endpoints()["Endpoints"]


def test_help_documents_every_flag():
    out = subprocess.run([FDYNO_BIN, "serve", "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    for flag, env in [("--listen", "DYNODB_LISTEN"), ("--data-dir", "DYNODB_DATA_DIR"),
                      ("--engine", "DYNODB_ENGINE"), ("--credentials", "DYNODB_CREDENTIALS"),
                      ("--tls-cert", "DYNODB_TLS_CERT"), ("--tls-key", "DYNODB_TLS_KEY"),
                      ("--admin-listen", "DYNODB_ADMIN_LISTEN"),
                      ("--allow-anonymous", "DYNODB_ALLOW_ANONYMOUS"),
                      ("--faults", "DYNODB_FAULTS"),
                      ("--allow-fault-api", "DYNODB_ALLOW_FAULT_API"),
                      ("--enforce-capacity", "DYNODB_ENFORCE_CAPACITY"),
                      ("--init", "DYNODB_INIT"),
                      ("--database-per-key", "DYNODB_DATABASE_PER_KEY"),
                      ("--durability", "DYNODB_DURABILITY"), ("--workers", "DYNODB_WORKERS"),
                      ("--queue-bound", "DYNODB_QUEUE_BOUND"),
                      ("--fdb-cluster-file", "DYNODB_FDB_CLUSTER_FILE"),
                      ("--fdb-prefix", "DYNODB_FDB_PREFIX"), ("--fdb-library", "DYNODB_FDB_LIBRARY"),
                      ("--fdb-connect-timeout", "DYNODB_FDB_CONNECT_TIMEOUT")]:
        assert flag in out, flag
        assert env in out, env


def serve_and_wait(args, env=None):
    return subprocess.run([FDYNO_BIN, "serve", "--port", str(free_port()), *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_fdb_engine_without_its_client_library_is_a_clear_error(tmp_path):
    missing = str(tmp_path / "no" / "libfdb_c.so")
    proc = serve_and_wait(["--engine", "fdb", "--fdb-library", missing])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "cannot load the FoundationDB client library" in out and missing in out
    # The same through the environment.
    proc = serve_and_wait([], env={"DYNODB_ENGINE": "fdb", "DYNODB_FDB_LIBRARY": missing,
                                   "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and missing in proc.stdout + proc.stderr


@pytest.mark.parametrize("prefix", ["\\xff/app", "a\\q", "\\x4", "p" * 257])
def test_fdb_prefix_is_validated_before_anything_opens(prefix):
    proc = serve_and_wait(["--engine", "fdb", "--fdb-prefix", prefix,
                           "--fdb-library", "/nonexistent/libfdb_c.so"])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "--fdb-prefix" in out and "FoundationDB client library" not in out


def test_in_memory_is_refused_with_the_fdb_engine():
    proc = serve_and_wait(["--engine", "fdb", "--in-memory"])
    assert proc.returncode == 2
    assert "--in-memory" in proc.stdout + proc.stderr


def test_environment_variables_configure_serve(tmp_path):
    port = free_port()
    data = tmp_path / "envdata"
    p = subprocess.Popen([FDYNO_BIN, "serve"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True,
                         env={"DYNODB_LISTEN": f"127.0.0.1:{port}", "DYNODB_DATA_DIR": str(data),
                              "DYNODB_DURABILITY": "none", "PATH": "/usr/bin:/bin"})
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok:
                    break
            except requests.RequestException:
                time.sleep(0.05)
        else:
            pytest.fail("server configured by environment did not start")
        assert data.exists()
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert f"127.0.0.1:{port}" in out
    assert str(data) in out and "engine embedded" in out


# ---- Bounds ----

def test_17_mib_body_rejected_then_served(server):
    body = b'{"pad":"' + b"x" * (17 * MIB) + b'"}'
    r = call(server, "DescribeLimits", body=body)
    assert r.status_code == 413
    assert error_type(r) == "RequestEntityTooLarge"
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.content)
    assert server.client().describe_limits()["TableMaxReadCapacityUnits"] == 40000


def test_gzip_and_deflate_bodies(server):
    for name, encode in (("gzip", gzip.compress), ("deflate", zlib.compress)):
        r = call(server, "DescribeLimits", body=encode(b"{}"), headers={"Content-Encoding": name})
        assert r.status_code == 200, (name, r.text)


def test_gzip_bomb_rejected_then_served(server):
    # 1 GiB of whitespace in a JSON object: ~1 MiB compressed, far past 16 MiB inflated.
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(b"{")]
    chunk = b" " * MIB
    for _ in range(1024):
        parts.append(compressor.compress(chunk))
    parts.append(compressor.compress(b"}"))
    parts.append(compressor.flush())
    bomb = b"".join(parts)
    assert len(bomb) < 2 * MIB
    r = call(server, "DescribeLimits", body=bomb, headers={"Content-Encoding": "gzip"})
    assert r.status_code == 413
    assert error_type(r) == "RequestEntityTooLarge"
    r = call(server, "DescribeLimits", body=b"not gzip", headers={"Content-Encoding": "gzip"})
    assert r.status_code == 500
    assert server.client().describe_limits()["TableMaxReadCapacityUnits"] == 40000


def test_gzip_members_and_undecodable_bodies(server):
    # Two concatenated gzip members are one valid body.
    r = call(server, "DescribeLimits", body=gzip.compress(b"{") + gzip.compress(b"}"),
             headers={"Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    # A body that fails to decompress (corrupt, truncated, empty) or is in an encoding the
    # server does not know is DynamoDB's HTTP 500.
    good = zlib.compress(b"{}")
    for body, encoding in ((b"", "gzip"), (b"", "deflate"), (b"\x1f\x8b garbage", "gzip"),
                           (good[:-3], "deflate"), (b"{}", "br")):
        r = call(server, "DescribeLimits", body=body, headers={"Content-Encoding": encoding})
        assert r.status_code == 500, (body, encoding, r.status_code, r.text)
    assert server.client().describe_limits()["TableMaxReadCapacityUnits"] == 40000


def test_oversized_header_rejected(server):
    r = call(server, "DescribeLimits", headers={"X-Padding": "p" * (64 * 1024)})
    assert r.status_code == 400
    # An oversized request line too.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.settimeout(10)
        sock.sendall(b"POST /" + b"a" * (64 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(64).startswith(b"HTTP/1.1 400")
    assert server.client().describe_endpoints()["Endpoints"]


def test_slow_client_is_disconnected(start_server):
    s = start_server("--header-timeout", "0.5", "--idle-timeout", "1")
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")  # never finishes its header
        sock.settimeout(10)
        start = time.time()
        data = sock.recv(1024)
        assert data == b""  # closed by the server
        assert time.time() - start < 5
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        sock.settimeout(10)
        start = time.time()
        assert sock.recv(1024) == b""  # idle connection closed
        assert time.time() - start < 5


def test_queue_full_answers_throttling(start_server):
    s = start_server("--workers", "1", "--queue-bound", "1")
    # Slow requests: ~15 MiB of whitespace to inflate and parse each.
    body = gzip.compress(b"{" + b" " * (15 * MIB) + b"}")
    results = []

    def worker():
        r = call(s, "DescribeLimits", body=body, headers={"Content-Encoding": "gzip"})
        results.append(r)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = [r.status_code for r in results]
    throttled = [r for r in results if r.status_code != 200]
    assert 200 in codes
    assert throttled, codes
    for r in throttled:
        assert r.json() == {"__type": "com.amazon.coral.availability#ThrottlingException",
                            "message": "Rate of requests exceeds the allowed throughput."}
    assert s.client().describe_limits()


# ---- Metrics ----

PROM_LINE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(?:\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)?)\})?'
    r' (?P<value>[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|NaN|[+-]?Inf))$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def parse_prometheus(text):
    """A strict parser of the text exposition format 0.0.4: every line is a TYPE/HELP comment
    or a sample; samples follow their family's TYPE; families are contiguous; histograms have
    cumulative buckets ending in +Inf equal to _count."""
    assert text.endswith("\n")
    types, samples, seen_families, current = {}, [], [], None
    for line in text.splitlines():
        assert line, "empty line"
        if line.startswith("#"):
            m = re.fullmatch(r"# (TYPE|HELP) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)", line)
            assert m, line
            if m.group(1) == "TYPE":
                assert m.group(3) in ("counter", "gauge", "histogram", "summary", "untyped"), line
                assert m.group(2) not in types, "duplicate TYPE " + line
                assert m.group(2) not in seen_families, "family not contiguous " + line
                types[m.group(2)] = m.group(3)
                current = m.group(2)
                seen_families.append(current)
            continue
        m = PROM_LINE.match(line)
        assert m, "bad sample line: " + repr(line)
        name = m.group("name")
        family = name
        if types.get(current) == "histogram":
            family = re.sub(r"_(bucket|sum|count)$", "", name)
        assert family == current, f"sample {name} outside its family {current}"
        labels = dict(LABEL.findall(m.group("labels") or ""))
        samples.append((name, labels, float(m.group("value"))))
    for family, kind in types.items():
        if kind != "histogram":
            continue
        series = {}
        for name, labels, value in samples:
            if name == family + "_bucket":
                key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
                series.setdefault(key, []).append((labels["le"], value))
        for key, buckets in series.items():
            assert buckets[-1][0] == "+Inf"
            values = [v for _, v in buckets]
            assert values == sorted(values), "buckets not cumulative"
            bounds = [float(le) for le, _ in buckets[:-1]]
            assert bounds == sorted(bounds)
            count = [v for n, l, v in samples if n == family + "_count" and
                     tuple(sorted(l.items())) == key]
            assert count == [values[-1]]
    return types, samples


def test_prometheus_metrics_parse(server):
    ddb = server.client()
    ddb.describe_endpoints()
    ddb.describe_limits()
    call(server, "NoSuchOperation")
    call(server, "DescribeLimits", sign=False)
    r = requests.get(server.endpoint + "/metrics/prometheus")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    types, samples = parse_prometheus(r.text)
    assert types["fdyno_requests_total"] == "counter"
    assert types["fdyno_request_duration_seconds"] == "histogram"
    assert types["fdyno_in_flight_requests"] == "gauge"
    for name in ("fdyno_kv_transaction_attempts_total", "fdyno_kv_conflicts_total",
                 "fdyno_kv_unknown_results_total"):
        assert types[name] == "counter", name
    values = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}
    assert values[("fdyno_requests_total", (("operation", "DescribeEndpoints"),))] >= 1
    assert values[("fdyno_errors_total", (("error_type", "UnknownOperationException"),
                                          ("operation", "unknown")))] >= 1
    assert values[("fdyno_errors_total", (("error_type", "MissingAuthenticationTokenException"),
                                          ("operation", "DescribeLimits")))] >= 1
    assert values[("fdyno_request_duration_seconds_count",
                   (("operation", "DescribeLimits"),))] >= 2

    j = requests.get(server.endpoint + "/metrics").json()
    names = {c["name"] for c in j["counters"]}
    assert {"fdyno_requests_total", "kv_conflicts"} <= names
    assert any(h["name"] == "fdyno_request_duration_seconds" for h in j["histograms"])


def test_admin_listen_moves_metrics(start_server):
    admin_port = free_port()
    s = start_server("--admin-listen", f"127.0.0.1:{admin_port}")
    assert requests.get(s.endpoint + "/metrics/prometheus").status_code == 404
    assert requests.get(s.endpoint + "/metrics").status_code == 404
    r = requests.get(f"http://127.0.0.1:{admin_port}/metrics/prometheus")
    assert r.status_code == 200
    parse_prometheus(r.text)
    assert requests.get(f"http://127.0.0.1:{admin_port}/metrics").status_code == 200
    # The admin listener does not serve the API.
    r = requests.post(f"http://127.0.0.1:{admin_port}/", data="{}",
                      headers={"X-Amz-Target": "DynamoDB_20120810.DescribeLimits"})
    assert r.status_code == 404


# ---- Lifecycle ----

def test_startup_log_line(server):
    out = server.output()
    assert re.search(rf"127\.0\.0\.1:{server.port}.*engine embedded.*data dir "
                     rf"{re.escape(server.data_dir)}", out), out


def test_graceful_shutdown_with_requests_in_flight(start_server):
    # One worker, so the 8 requests, sent at once, run one after another: while the first runs
    # the others wait in the server's queue, in flight.
    s = start_server("--workers", "1", "--queue-bound", "64", "--drain-timeout", "60")
    # Each request takes a while: ~15 MiB of whitespace to inflate and parse.
    body = gzip.compress(b"{" + b" " * (15 * MIB) + b"}")
    prepared = [call_prepared(s, body) for _ in range(8)]
    socks = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(8)]
    results, errors = [], []
    go = threading.Barrier(9)

    def worker(sock, req):
        try:
            go.wait(timeout=60)
            sock.sendall(req)
            results.append(read_response(sock))
            sock.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(sock, req))
               for sock, req in zip(socks, prepared)]
    for t in threads:
        t.start()
    go.wait(timeout=60)
    # Shut down as soon as the server reports a request in flight.
    in_flight, deadline = 0, time.time() + 60
    while time.time() < deadline:
        _, samples = parse_prometheus(requests.get(s.endpoint + "/metrics/prometheus").text)
        values = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}
        in_flight = values[("fdyno_in_flight_requests", ())]
        done = values.get(("fdyno_requests_total", (("operation", "DescribeLimits"),)), 0)
        if in_flight >= 1 or done >= 8:
            break
    assert in_flight >= 1, "no request was in flight at shutdown; the test proves nothing"
    s.proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len(results) == 8
    for status, headers, payload in results:
        assert status == 200, payload
        assert json.loads(payload)["TableMaxReadCapacityUnits"] == 40000
        assert int(headers["x-amz-crc32"]) == zlib.crc32(payload)
    assert s.proc.wait(timeout=60) == 0
    out = s.output()
    assert "shutting down" in out and "fdyno stopped" in out, out
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=2)


def call_prepared(server, body):
    """The raw bytes of a signed, gzip-encoded DescribeLimits request."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method="POST", url=server.endpoint + "/", data=body,
                     headers={"Content-Type": "application/x-amz-json-1.0",
                              "X-Amz-Target": "DynamoDB_20120810.DescribeLimits",
                              "Content-Encoding": "gzip"})
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "dynamodb", "us-east-1").add_auth(req)
    p = req.prepare()
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
    for k, v in p.headers.items():
        if k.lower() != "host":
            head += f"{k}: {v}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def read_response(sock):
    sock.settimeout(120)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before a response"
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        rest += chunk
    return status, headers, rest[:length]


def test_tls_round_trip(start_server, tmp_path):
    cert, key = self_signed_cert(tmp_path)
    s = start_server(tls=(cert, key))
    ddb = s.client(verify=cert)
    assert ddb.describe_endpoints()["Endpoints"][0]["Address"] == f"localhost:{s.port}"
    assert ddb.describe_limits()["TableMaxReadCapacityUnits"] == 40000
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s.client(verify=cert, secret_key="wrong").describe_limits()
    assert client_error(e)[0] == "InvalidSignatureException"
    # Plain HTTP to the TLS port does not get an answer.
    with pytest.raises(requests.RequestException):
        requests.get(f"http://127.0.0.1:{s.port}/", timeout=5)
