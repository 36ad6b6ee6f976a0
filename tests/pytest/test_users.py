"""What users meet first: --version and the flags they expect, logs, HTTP niceties (response
compression, CORS, Date and Server, the health check), and operations fdyno does not support.
Black-box against the real binary."""
import gzip
import json
import os
import re
import subprocess
import time
import uuid
import zlib

import botocore.session
import pytest
import requests

from conftest import ACCESS_KEY, FDYNO_BIN, ROOT, SECRET_KEY, free_port
from signing import call, error_message, error_type


# ---- Flags ----

def test_version_names_commit_build_type_and_libraries():
    out = subprocess.run([FDYNO_BIN, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert re.match(r"fdyno \d+\.\d+\.\d+\n", text), text
    assert re.search(r"^commit [0-9a-f]{12}(-dirty)?, build type \w+$", text, re.M), text
    for library in ("RocksDB 7.", "OpenSSL 3.", "zlib 1.", "Boost 1.", "spdlog 1."):
        assert library in text, text
    # The allocator linked in (FDYNO_MALLOC), as it reports itself.
    assert re.search(r"^(jemalloc \d+\.\d+|tcmalloc \(gperftools \d|glibc \d\S* malloc)", text,
                     re.M), text


def test_help_lists_the_token_gc_variables_with_the_others():
    out = subprocess.run([FDYNO_BIN, "serve", "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    for flag, env in [("--txn-token-gc-interval", "DYNODB_TXN_TOKEN_GC_INTERVAL"),
                      ("--txn-token-gc-max-scan", "DYNODB_TXN_TOKEN_GC_MAX_SCAN"),
                      ("--port", "DYNODB_PORT"), ("--log-format", "DYNODB_LOG_FORMAT"),
                      ("--access-log", "DYNODB_ACCESS_LOG"), ("--cors", "DYNODB_CORS"),
                      ("--max-connections", "DYNODB_MAX_CONNECTIONS")]:
        assert re.search(rf"{flag}\b.*\(Env:{env}\)", out), flag


def _wait_ready(port, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else proc.returncode
        try:
            if requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok:
                return
        except requests.RequestException:
            time.sleep(0.05)
    raise AssertionError("fdyno did not start")


def test_port_flag_replaces_the_port_of_listen(tmp_path):
    port = free_port()
    p = subprocess.Popen([FDYNO_BIN, "serve", "--port", str(port), "--data-dir",
                          str(tmp_path / "d"), "--durability", "none"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_ready(port, p)
    finally:
        p.terminate()
        out, _ = p.communicate(timeout=60)
    assert f"127.0.0.1:{port}" in out


def test_token_gc_flag_starts_the_worker(start_server):
    s = start_server("--txn-token-gc-interval", "50ms", "--txn-token-gc-max-scan", "10")
    deadline = time.time() + 20
    while True:
        text = requests.get(s.endpoint + "/metrics/prometheus").text
        m = re.search(r"^fdyno_txn_token_gc_passes_total (\d+)$", text, re.M)
        if m and int(m.group(1)) >= 2:
            break
        assert time.time() < deadline, text
        time.sleep(0.1)
    assert "token GC every 50 ms" in s.output()


# ---- Logs ----

def test_json_log_lines_parse(start_server):
    s = start_server("--log-format", "json")
    s.client().list_tables()
    s.stop()
    lines = [line for line in open(s.log_path).read().splitlines() if line.strip()]
    assert len(lines) >= 3, lines
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"time", "level", "msg"}, record
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record["time"])
    assert any("fdyno serving DynamoDB" in json.loads(line)["msg"] for line in lines)


def _read_access_log(path, want, timeout=10):
    """The access log's lines, without the health checks of the fixture's readiness probe."""
    deadline = time.time() + timeout
    while True:
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        lines = [line for line in lines if "GET%20/ " not in line and '"GET /"' not in line]
        if len(lines) >= want or time.time() > deadline:
            return lines
        time.sleep(0.05)


SECRET_PAYLOAD = "payload-" + uuid.uuid4().hex


def _some_requests(server):
    ddb = server.client()
    ddb.create_table(TableName="logged", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    ddb.put_item(TableName="logged", Item={"pk": {"S": "k1"}, "v": {"S": SECRET_PAYLOAD}})
    ddb.get_item(TableName="logged", Key={"pk": {"S": "k1"}})
    with pytest.raises(ddb.exceptions.ResourceNotFoundException):
        ddb.get_item(TableName="absent", Key={"pk": {"S": SECRET_PAYLOAD}})
    ddb.batch_write_item(RequestItems={"logged": [
        {"PutRequest": {"Item": {"pk": {"S": "k2"}, "v": {"S": SECRET_PAYLOAD}}}}]})
    requests.get(server.endpoint + "/metrics?X-Amz-Signature=" + SECRET_PAYLOAD)


def test_access_log_text(start_server, tmp_path):
    path = str(tmp_path / "access.log")
    s = start_server("--access-log", path)
    _some_requests(s)
    lines = _read_access_log(path, 6)
    assert len(lines) == 6, lines
    fields = [dict(kv.split("=", 1) for kv in line.split(" ")[1:]) for line in lines]
    for line, f in zip(lines, fields):
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ", line), line
        assert re.fullmatch(r"[A-Z0-9]{52}", f["request"]), line
        assert float(f["latency_ms"]) >= 0 and int(f["in"]) >= 0 and int(f["out"]) > 0, line
    put, miss, batch, metrics = fields[1], fields[3], fields[4], fields[5]
    assert (put["operation"], put["table"], put["status"], put["error"], put["account"]) == (
        "PutItem", "logged", "200", "-", "123456789012")
    assert (miss["operation"], miss["table"], miss["status"], miss["error"]) == (
        "GetItem", "absent", "400", "ResourceNotFoundException")
    assert (batch["operation"], batch["table"]) == ("BatchWriteItem", "logged")
    assert (metrics["operation"], metrics["status"], metrics["account"]) == (
        "GET%20/metrics", "200", "-")
    everything = open(path).read() + s.output()
    assert SECRET_PAYLOAD not in everything
    assert SECRET_KEY not in everything


def test_access_log_json(start_server, tmp_path):
    path = str(tmp_path / "access.json")
    s = start_server("--access-log", path, "--log-format", "json")
    _some_requests(s)
    records = [json.loads(line) for line in _read_access_log(path, 6)]
    assert len(records) == 6
    assert set(records[0]) == {"time", "request_id", "account", "operation", "table", "status",
                               "error_type", "latency_ms", "bytes_in", "bytes_out"}
    miss = records[3]
    assert (miss["operation"], miss["table"], miss["status"], miss["error_type"]) == (
        "GetItem", "absent", 400, "ResourceNotFoundException")
    assert records[1]["error_type"] is None
    assert SECRET_PAYLOAD not in open(path).read()


def test_access_log_names_the_table_of_a_stream(start_server, tmp_path):
    path = str(tmp_path / "access.log")
    s = start_server("--access-log", path)
    ddb, streams = s.client(), s.client("dynamodbstreams")
    arn = ddb.create_table(
        TableName="streamed", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )["TableDescription"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    streams.get_records(ShardIterator=iterator)
    lines = _read_access_log(path, 4)
    fields = [dict(kv.split("=", 1) for kv in line.split(" ")[1:]) for line in lines]
    assert [(f["operation"], f["table"]) for f in fields] == [
        ("CreateTable", "streamed"), ("DescribeStream", "streamed"),
        ("GetShardIterator", "streamed"), ("GetRecords", "-")], lines


def test_lifecycle_lines_for_tables(server):
    ddb = server.client()
    ddb.create_table(TableName="lifecycle", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    ddb.delete_table(TableName="lifecycle")
    out = server.output()
    assert re.search(r"created table lifecycle \(id \d+, account 123456789012\)", out), out
    assert re.search(r"deleted table lifecycle \(id \d+, account 123456789012\)", out), out
    # The purge worker removes the data after DeleteTable answered.
    deadline = time.time() + 30
    while not re.search(r"purged the data of 1 dropped table", out):
        assert time.time() < deadline, out
        time.sleep(0.05)
        out = server.output()


# ---- HTTP ----

def _fill_page_table(server, n_items):
    ddb = server.client()
    ddb.create_table(TableName="page", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(n_items):
        ddb.put_item(TableName="page", Item={"pk": {"S": f"k{i:04d}"}, "v": {"S": "v" * 9000}})


def _scan_page(server, n_items, headers):
    _fill_page_table(server, n_items)
    return call(server, "Scan", json.dumps({"TableName": "page"}), headers=headers,
                stream=True)


def test_lifecycle_lines_for_time_to_live(start_server):
    s = start_server("--ttl-sweep-interval", "0.2")
    ddb = s.client()
    ddb.create_table(TableName="expiring", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(3):
        ddb.put_item(TableName="expiring", Item={"pk": {"S": f"k{i}"},
                                                 "exp": {"N": str(int(time.time()) - 60)}})
    ddb.update_time_to_live(TableName="expiring", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})
    deadline = time.time() + 20
    while "TTL sweep of table expiring" not in s.output():
        assert time.time() < deadline, s.output()
        time.sleep(0.05)
    out = s.output()
    assert "TTL of table expiring: backfill finished: 3 items copied" in out, out
    assert "TTL ENABLED" in out, out
    assert "TTL sweep of table expiring: 3 expired item(s) deleted" in out, out


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_large_responses_are_compressed_when_asked(server, encoding):
    r = _scan_page(server, 110, {"Accept-Encoding": encoding})
    assert r.status_code == 200
    assert r.headers["Content-Encoding"] == encoding
    raw = r.raw.read(decode_content=False)
    assert len(raw) == int(r.headers["Content-Length"])
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(raw)  # of the bytes sent, as DynamoDB
    body = gzip.decompress(raw) if encoding == "gzip" else zlib.decompress(raw)
    assert len(body) > 990_000 and len(raw) < len(body) / 20
    assert len(json.loads(body)["Items"]) == 110


def test_compressed_answer_to_a_chunked_request(server):
    # A request body sent chunked (Transfer-Encoding: chunked, no Content-Length) is read like
    # any other, and its large answer is compressed as asked.
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    _fill_page_table(server, 20)
    body = json.dumps({"TableName": "page"}).encode()
    req = AWSRequest(method="POST", url=server.endpoint + "/", data=body,
                     headers={"Content-Type": "application/x-amz-json-1.0",
                              "X-Amz-Target": "DynamoDB_20120810.Scan",
                              "Accept-Encoding": "gzip"})
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "dynamodb", "us-east-1").add_auth(req)
    headers = {k: v for k, v in req.prepare().headers.items() if k.lower() != "content-length"}

    def chunks():
        yield body[:5]
        yield body[5:]
    r = requests.post(server.endpoint + "/", data=chunks(), headers=headers, stream=True)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert r.status_code == 200
    assert r.headers["Content-Encoding"] == "gzip"
    raw = r.raw.read(decode_content=False)
    assert len(json.loads(gzip.decompress(raw))["Items"]) == 20


def test_no_compression_unless_asked(server):
    r = _scan_page(server, 5, {"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in r.headers
    assert len(json.loads(r.content)["Items"]) == 5


def test_date_and_server_headers(server):
    for r in (requests.get(server.endpoint + "/"), call(server, "ListTables")):
        assert r.headers["Server"] == "fdyno"
        when = time.strptime(r.headers["Date"], "%a, %d %b %Y %H:%M:%S GMT")
        assert abs(time.mktime(when) - time.mktime(time.gmtime())) < 5


def test_health_check_names_the_host_and_other_paths_are_404(server):
    r = requests.get(server.endpoint + "/")
    assert r.status_code == 200
    assert r.text == f"healthy: 127.0.0.1:{server.port} "
    for path in ("/index.html", "/-", "/abc"):
        r = requests.get(server.endpoint + path)
        assert r.status_code == 404
        assert error_type(r) == "UnknownOperationException"


def test_cors_preflight_and_answers(server):
    origin = {"Origin": "http://localhost:3000"}
    r = requests.options(server.endpoint + "/", headers={
        **origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,x-amz-date,x-amz-target"})
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    assert r.headers["Access-Control-Allow-Headers"] == (
        "authorization,content-type,x-amz-date,x-amz-target")
    assert int(r.headers["Access-Control-Max-Age"]) > 0
    r = call(server, "ListTables", headers=origin)
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "x-amzn-RequestId" in r.headers["Access-Control-Expose-Headers"]
    assert "Access-Control-Max-Age" not in r.headers
    r = call(server, "ListTables")
    assert "Access-Control-Allow-Origin" not in r.headers


def test_cors_is_off_in_open_mode_unless_asked(start_server):
    origin = {"Origin": "http://evil.example"}
    s = start_server(credentials=False)
    assert "Access-Control-Allow-Origin" not in requests.options(s.endpoint + "/",
                                                                 headers=origin).headers
    s2 = start_server("--cors", "http://localhost:3000", credentials=False)
    assert "Access-Control-Allow-Origin" not in requests.options(s2.endpoint + "/",
                                                                 headers=origin).headers
    r = requests.options(s2.endpoint + "/", headers={"Origin": "http://localhost:3000"})
    assert r.headers["Access-Control-Allow-Origin"] == "http://localhost:3000"


# ---- Operations fdyno does not support ----

def _documented_unsupported():
    text = open(os.path.join(ROOT, "docs", "compatibility.md")).read()
    section = text.split("## Operations fdyno does not support", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\* `(\w+)`", section, re.M))


def test_unsupported_operations_say_so_and_are_documented(server):
    # Every operation of the API models botocore ships, asked with an empty body: an
    # implemented one answers anything but UnknownOperationException; an unimplemented one
    # names itself. Which ones are missing is read from the server, not written here.
    session = botocore.session.get_session()
    unsupported = set()
    for service, prefix, name in (("dynamodb", "DynamoDB_20120810", "DynamoDB"),
                                  ("dynamodbstreams", "DynamoDBStreams_20120810",
                                   "DynamoDB Streams")):
        for operation in session.get_service_model(service).operation_names:
            r = call(server, None, target=f"{prefix}.{operation}")
            if r.status_code == 400 and error_type(r) == "UnknownOperationException":
                assert error_message(r) == (
                    f"fdyno does not support the {name} operation {operation}")
                unsupported.add(operation)
    # An operation of neither model is unknown, whatever fdyno supports.
    r = call(server, None, target="DynamoDB_20120810.Frobnicate")
    assert r.status_code == 400 and error_type(r) == "UnknownOperationException"
    documented = _documented_unsupported()
    assert documented == unsupported, (
        "docs/compatibility.md, 'Operations fdyno does not support', is out of date: "
        f"add {sorted(unsupported - documented)}, remove {sorted(documented - unsupported)}")


# ---- In memory ----

def _in_memory_server(limit, cwd=None):
    """`fdyno serve --in-memory` with LIMIT, answering; (process, boto3 client)."""
    port = free_port()
    p = subprocess.Popen([FDYNO_BIN, "serve", "--in-memory", "--in-memory-limit", limit,
                          "--port", str(port)], cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_ready(port, p)
    import boto3
    import botocore.config
    ddb = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}",
                       region_name="us-east-1", aws_access_key_id="fake",
                       aws_secret_access_key="fake",
                       config=botocore.config.Config(retries={"max_attempts": 0}))
    ddb.create_table(TableName="mem", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    return p, ddb


def _fill_until_full(ddb, value):
    """Puts items k0, k1, ... until the in-memory database is full; how many it took."""
    stored = 0
    while True:
        try:
            ddb.put_item(TableName="mem", Item={"pk": {"S": f"k{stored}"}, "v": {"S": value}})
            stored += 1
        except ddb.exceptions.ClientError as e:
            assert e.response["Error"]["Code"] == "LimitExceededException", e.response
            assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
            assert e.response["Error"]["Message"].startswith(
                "The in-memory database is full"), e.response
            return stored
        assert stored < 1000, "the limit held 300 MB"


def test_in_memory_mode_writes_nothing_and_refuses_writes_past_its_limit(tmp_path):
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    p, ddb = _in_memory_server("24MiB", cwd=workdir)
    try:
        value = os.urandom(150_000).hex()  # 300 KB, hex: compresses about 2:1
        stored = _fill_until_full(ddb, value)
        assert stored > 50
        # Still serving; the refused item is not there; deletes work and free the space.
        assert "Item" not in ddb.get_item(TableName="mem", Key={"pk": {"S": f"k{stored}"}})
        for i in range(stored):
            ddb.delete_item(TableName="mem", Key={"pk": {"S": f"k{i}"}})
        deadline = time.time() + 30
        again = 0
        while again < stored // 2:
            try:
                ddb.put_item(TableName="mem", Item={"pk": {"S": f"again{again}"},
                                                    "v": {"S": value}})
                again += 1
            except ddb.exceptions.ClientError:
                assert time.time() < deadline, "the space of deleted items never came back"
                time.sleep(0.1)
        assert list(workdir.iterdir()) == [], "in-memory mode wrote to the working directory"
    finally:
        p.terminate()
        out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
    assert "in memory, limit 24 MiB" in out


def _anonymous_mb(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no Anonymous line in smaps_rollup")


def test_in_memory_mode_gives_the_memory_of_deleted_data_back_to_the_system():
    """Deletes near the limit make the engine reclaim (compact away) the deleted data, and the
    allocator then returns the freed memory to the system (base/allocator.h), so the server's
    resident memory falls, not only its count of stored bytes. One transaction deletes every
    item, so that one reclaim sees them all (a reclaim compacts only what keeps the database
    under its limit). Without the release, more than half stayed resident for 15 s and more."""
    p, ddb = _in_memory_server("24MiB")
    try:
        before = _anonymous_mb(p.pid)
        stored = _fill_until_full(ddb, os.urandom(150_000).hex())
        assert stored <= 100, stored  # one TransactWriteItems
        full = _anonymous_mb(p.pid)
        assert full - before > 12, (before, full)
        ddb.transact_write_items(TransactItems=[
            {"Delete": {"TableName": "mem", "Key": {"pk": {"S": f"k{i}"}}}}
            for i in range(stored)])
        deadline = time.time() + 30
        while (now := _anonymous_mb(p.pid)) > before + (full - before) / 3:
            assert time.time() < deadline, (
                f"anonymous memory {before:.1f} MB before the writes, {full:.1f} MB full, "
                f"still {now:.1f} MB 30 s after every item was deleted")
            time.sleep(0.5)
    finally:
        p.terminate()
        out, _ = p.communicate(timeout=60)
    assert p.returncode == 0, out
