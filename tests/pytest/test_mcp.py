"""`fdyno mcp`: the Model Context Protocol over standard input and output, spoken to the real
binary as an agent's client does (initialize, the initialized notification, tools/list,
tools/call): every tool, DynamoDB's errors as tool errors, protocol errors as JSON-RPC errors,
bounded reads, a database on disk that outlives the session, and --endpoint on a running
server's tables, signed with the AWS variables' key. fdyno-specific."""
import json
import os
import subprocess

import pytest

from conftest import ACCESS_KEY, FDYNO_BIN, SECRET_KEY, Server, free_port, self_signed_cert


class McpClient:
    def __init__(self, *args, env=None):
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("DYNODB_", "AWS_"))}
        full_env.update(env or {})
        self.proc = subprocess.Popen([FDYNO_BIN, "mcp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=full_env)
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id and answer["jsonrpc"] == "2.0", answer
        return answer

    def call(self, tool, **arguments):
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = answer["result"]
        text = result["content"][0]["text"]
        return result["isError"], (text if result["isError"] else json.loads(text))

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(30)
        return rc, self.proc.stderr.read()


def _initialized(*args, env=None):
    client = McpClient(*args, env=env)
    answer = client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "pytest", "version": "1"}})
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert answer["result"]["serverInfo"]["name"] == "fdyno"
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client


@pytest.fixture
def client():
    c = _initialized("--in-memory")
    yield c
    assert c.close()[0] == 0


def test_tools_list_offers_each_tool_with_a_schema(client):
    tools = client.request("tools/list")["result"]["tools"]
    names = [t["name"] for t in tools]
    assert names == ["list_tables", "describe_table", "create_table", "delete_table", "get_item",
                     "put_item", "update_item", "delete_item", "query", "scan",
                     "execute_statement", "stream_records"]
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object", tool


def test_every_tool_through_the_api(client):
    failed, created = client.call(
        "create_table", TableName="music",
        AttributeDefinitions=[{"AttributeName": "artist", "AttributeType": "S"},
                              {"AttributeName": "song", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "artist", "KeyType": "HASH"},
                   {"AttributeName": "song", "KeyType": "RANGE"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    assert not failed, created
    assert created["TableDescription"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert client.call("list_tables")[1]["TableNames"] == ["music"]
    assert client.call("describe_table", TableName="music")[1]["Table"]["TableStatus"] == "ACTIVE"
    for song in range(30):
        assert not client.call("put_item", TableName="music",
                               Item={"artist": {"S": "a"}, "song": {"N": str(song)}})[0]
    got = client.call("get_item", TableName="music", Key={"artist": {"S": "a"}, "song": {"N": "3"}})
    assert got[1]["Item"]["song"] == {"N": "3"}
    updated = client.call("update_item", TableName="music",
                          Key={"artist": {"S": "a"}, "song": {"N": "3"}},
                          UpdateExpression="SET plays = :one",
                          ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="ALL_NEW")
    assert updated[1]["Attributes"]["plays"] == {"N": "1"}
    queried = client.call("query", TableName="music", KeyConditionExpression="artist = :a",
                          ExpressionAttributeValues={":a": {"S": "a"}})[1]
    assert queried["Count"] == 25 and "LastEvaluatedKey" in queried  # bounded by default
    assert client.call("scan", TableName="music", Limit=30)[1]["Count"] == 30
    rows = client.call("execute_statement",
                       Statement='SELECT * FROM "music" WHERE artist = ? AND song = ?',
                       Parameters=[{"S": "a"}, {"N": "3"}])[1]["Items"]
    assert rows[0]["plays"] == {"N": "1"}
    assert not client.call("delete_item", TableName="music",
                           Key={"artist": {"S": "a"}, "song": {"N": "0"}})[0]
    records = client.call("stream_records", TableName="music", Limit=2)[1]["Records"]
    assert [r["eventName"] for r in records] == ["MODIFY", "REMOVE"]
    assert records[1]["dynamodb"]["Keys"]["song"] == {"N": "0"}
    assert not client.call("delete_table", TableName="music")[0]
    assert client.call("list_tables")[1]["TableNames"] == []


def test_dynamodb_errors_are_tool_errors_and_protocol_errors_are_jsonrpc_errors(client):
    failed, text = client.call("get_item", TableName="missing", Key={"k": {"S": "x"}})
    assert failed and text.startswith("ResourceNotFoundException: "), text
    failed, text = client.call("put_item", TableName="x")
    assert failed and text.startswith("ValidationException: "), text
    failed, text = client.call("stream_records", TableName="missing")
    assert failed and text.startswith("ResourceNotFoundException: "), text
    assert client.request("tools/call", {"name": "drop_everything"})["error"]["code"] == -32602
    assert client.request("resources/list")["error"]["code"] == -32601
    assert client.request("ping")["result"] == {}


def test_a_database_on_disk_outlives_the_session(tmp_path):
    first = _initialized("--data-dir", str(tmp_path / "data"))
    assert not first.call("create_table", TableName="kept",
                          AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                          KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])[0]
    assert not first.call("put_item", TableName="kept", Item={"k": {"S": "v"}})[0]
    rc, log = first.close()
    assert rc == 0, log
    second = _initialized("--data-dir", str(tmp_path / "data"))
    assert second.call("get_item", TableName="kept", Key={"k": {"S": "v"}})[1]["Item"]
    assert second.close()[0] == 0


def test_on_a_running_server_with_the_aws_variables_key(tmp_path):
    server = Server(tmp_path, []).wait_ready()
    try:
        keys = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        client = _initialized("--endpoint", f"http://127.0.0.1:{server.port}", env=keys)
        failed, created = client.call(
            "create_table", TableName="shared",
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        assert not failed, created
        assert not client.call("put_item", TableName="shared", Item={"k": {"S": "v"}})[0]
        # The application's view of the server: the same table, the same item.
        ddb = server.client()
        assert ddb.get_item(TableName="shared", Key={"k": {"S": "v"}})["Item"] == {"k": {"S": "v"}}
        records = client.call("stream_records", TableName="shared")[1]["Records"]
        assert [r["eventName"] for r in records] == ["INSERT"]
        failed, text = client.call("get_item", TableName="missing", Key={"k": {"S": "x"}})
        assert failed and text.startswith("ResourceNotFoundException: "), text
        assert client.close()[0] == 0

        wrong = _initialized("--endpoint", f"http://127.0.0.1:{server.port}",
                             env={"AWS_ACCESS_KEY_ID": ACCESS_KEY,
                                  "AWS_SECRET_ACCESS_KEY": "not-the-secret"})
        failed, text = wrong.call("list_tables")
        assert failed and text.startswith("InvalidSignatureException: "), text
        assert wrong.close()[0] == 0
    finally:
        server.stop()


def test_an_unreachable_server_is_a_tool_error():
    client = _initialized("--endpoint", f"http://127.0.0.1:{free_port()}")
    failed, text = client.call("list_tables")
    assert failed and text.startswith("cannot reach the server at http://127.0.0.1:"), text
    assert client.close()[0] == 0


def test_on_a_tls_server_checked_against_aws_ca_bundle(tmp_path):
    cert, key = self_signed_cert(tmp_path)
    server = Server(tmp_path, [], tls=(cert, key)).wait_ready(verify=cert)
    try:
        keys = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        trusted = _initialized("--endpoint", f"https://localhost:{server.port}",
                               env={**keys, "AWS_CA_BUNDLE": cert})
        failed, answer = trusted.call("list_tables")
        assert not failed and answer == {"TableNames": []}, answer
        assert trusted.close()[0] == 0
        # The system's authorities do not know the test's certificate: refused.
        untrusted = _initialized("--endpoint", f"https://localhost:{server.port}", env=keys)
        failed, text = untrusted.call("list_tables")
        assert failed and "certificate verify failed" in text, text
        assert untrusted.close()[0] == 0
    finally:
        server.stop()


@pytest.mark.parametrize("args", [["--endpoint", "ftp://example.com"],
                                  ["--endpoint", "http://h:1/path"],
                                  ["--endpoint", "http://127.0.0.1:8000", "--in-memory"]],
                         ids=["not-http", "a-path", "own-database-flags"])
def test_endpoint_misuse_is_a_usage_error(args):
    ran = subprocess.run([FDYNO_BIN, "mcp", *args], input="", capture_output=True, text=True,
                         timeout=30)
    assert ran.returncode == 2, ran.stderr
