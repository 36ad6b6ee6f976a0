"""`fdyno serve --mcp-listen`: the Model Context Protocol's streamable HTTP transport beside the
DynamoDB endpoint. POST /mcp answers one JSON-RPC message as application/json, a notification
202; GET is 405; the tools work on the same tables as the DynamoDB endpoint, for the server's own
account; --mcp-token is required off loopback and then checked (401), and a page of another
origin is refused (403). fdyno-specific."""
import subprocess

import pytest
import requests

from conftest import FDYNO_BIN, Server, free_port

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "pytest", "version": "1"}}}
HEADERS = {"Accept": "application/json, text/event-stream"}


def _serve(tmp_path, *args):
    port = free_port()
    server = Server(tmp_path, ["--mcp-listen", f"127.0.0.1:{port}", *args]).wait_ready()
    return server, f"http://127.0.0.1:{port}/mcp"


def _call(url, tool, headers=None, **arguments):
    r = requests.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                 "params": {"name": tool, "arguments": arguments}},
                      headers={**HEADERS, **(headers or {})}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["result"]


def test_the_transport_and_the_tools_on_the_servers_tables(tmp_path):
    server, url = _serve(tmp_path)
    try:
        r = requests.post(url, json=INIT, headers=HEADERS, timeout=30)
        assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
        assert r.json()["result"]["serverInfo"]["name"] == "fdyno"
        r = requests.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                          headers=HEADERS, timeout=30)
        assert r.status_code == 202 and r.text == ""
        assert requests.get(url, headers=HEADERS, timeout=30).status_code == 405
        assert requests.post(url.replace("/mcp", "/other"), json=INIT,
                             timeout=30).status_code == 404
        result = _call(url, "create_table", TableName="shared",
                       AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                       KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
        assert not result["isError"], result
        assert not _call(url, "put_item", TableName="shared", Item={"k": {"S": "v"}})["isError"]
        # The DynamoDB endpoint (signed with the server's first key, whose account the tools
        # act for) sees the same table and item.
        ddb = server.client()
        assert ddb.get_item(TableName="shared", Key={"k": {"S": "v"}})["Item"] == {"k": {"S": "v"}}
        # A DynamoDB call on the MCP listener is not a DynamoDB call.
        r = requests.post(url, data="{}", headers={"X-Amz-Target": "DynamoDB_20120810.ListTables",
                                                   "Content-Type": "application/x-amz-json-1.0"},
                          timeout=30)
        assert r.status_code == 200 and r.json()["error"]["code"] == -32600
        r = requests.post(url, json=INIT, headers={**HEADERS, "Origin": "http://evil.example"},
                          timeout=30)
        assert r.status_code == 403
        r = requests.post(url, json=INIT, headers={**HEADERS, "Origin": "http://localhost:3000"},
                          timeout=30)
        assert r.status_code == 200
    finally:
        server.stop()


def test_a_token_is_checked_when_given(tmp_path):
    server, url = _serve(tmp_path, "--mcp-token", "s3cret")
    try:
        assert requests.post(url, json=INIT, headers=HEADERS, timeout=30).status_code == 401
        wrong = {**HEADERS, "Authorization": "Bearer s3creT"}
        r = requests.post(url, json=INIT, headers=wrong, timeout=30)
        assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
        right = {**HEADERS, "Authorization": "Bearer s3cret"}
        assert requests.post(url, json=INIT, headers=right, timeout=30).status_code == 200
    finally:
        server.stop()


@pytest.mark.parametrize("args", [["--mcp-listen", "0.0.0.0:0"], ["--mcp-token", "t"]],
                         ids=["off-loopback-without-token", "token-without-listener"])
def test_misuse_is_refused_at_start(tmp_path, args):
    ran = subprocess.run([FDYNO_BIN, "serve", "--in-memory", "--listen", "127.0.0.1:0", *args],
                         capture_output=True, text=True, timeout=30)
    assert ran.returncode == 2, ran.stderr
