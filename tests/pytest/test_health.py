"""`fdyno health`: exit 0 when a server answers at the endpoint, 1 when nothing does or what
answers is not fdyno (DynamoDB's "healthy: ..." on GET /), 2 for a bad endpoint; the endpoint
from --endpoint, DYNODB_LISTEN or DYNODB_PORT, as `serve` takes them. fdyno-specific."""
import http.server
import os
import subprocess
import threading

import pytest

from conftest import FDYNO_BIN, Server, free_port


def _health(*args, env=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("DYNODB_")}
    full.update(env or {})
    return subprocess.run([FDYNO_BIN, "health", *args], capture_output=True, text=True,
                          env=full, timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("health"), ["--in-memory"]).wait_ready()
    yield s
    s.stop()


def test_a_serving_server_is_healthy(server):
    port = str(server.port)
    for args, env in [(["--endpoint", f"localhost:{port}"], None),
                      ([], {"DYNODB_LISTEN": f"127.0.0.1:{port}"}),
                      ([], {"DYNODB_PORT": port}),
                      (["--endpoint", f"0.0.0.0:{port}"], None)]:
        ran = _health(*args, env=env)
        assert ran.returncode == 0, (args, env, ran.stderr)
        assert ran.stdout.startswith("healthy: "), ran.stdout


def test_nothing_listening_is_unhealthy():
    ran = _health("--endpoint", f"127.0.0.1:{free_port()}", "--timeout-ms", "1000")
    assert ran.returncode == 1
    assert ran.stderr.startswith("unhealthy: "), ran.stderr


def test_another_http_server_is_unhealthy():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        ran = _health("--endpoint", f"127.0.0.1:{httpd.server_address[1]}")
    finally:
        httpd.shutdown()
    assert ran.returncode == 1
    assert "answered" in ran.stderr, ran.stderr


def test_a_bad_endpoint_is_a_usage_error():
    ran = _health("--endpoint", "no-port-here")
    assert ran.returncode == 2
    assert "invalid address" in ran.stderr
