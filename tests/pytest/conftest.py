"""Black-box fixtures: start the real fdyno binary on a free port with a temporary data dir.

The binary comes from $FDYNO_BIN (default: build/src/main/fdyno under the repository root);
nothing is built here. Tests talk to it with boto3/botocore and plain HTTP, so the same tests
can be pointed at another DynamoDB endpoint.
"""
import os
import signal
import socket
import subprocess
import time

import boto3
import botocore.config
import botocore.exceptions
import pytest
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FDYNO_BIN = os.environ.get("FDYNO_BIN", os.path.join(ROOT, "build", "src", "main", "fdyno"))

ACCESS_KEY = "AKIDFDYNOTEST0000001"
SECRET_KEY = "fdyno-test-secret-key-0000000000000000001"
ACCOUNT_ID = "123456789012"
REGION = "us-east-1"


def client_error(fn, **kw):
    """Calls fn(**kw), which must fail with a ClientError; returns its (code, message)."""
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(**kw)
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def scan_by_pk_sk(ddb, name, index=None):
    """Every item of a table (or of its index `index`), through as many Scan pages as it takes,
    sorted by the string "pk" and the number "sk"."""
    kw = {"IndexName": index} if index else {}
    items, start = [], None
    while True:
        if start:
            kw["ExclusiveStartKey"] = start
        r = ddb.scan(TableName=name, **kw)
        items += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    return sorted(items, key=lambda x: (x["pk"]["S"], int(x["sk"]["N"])))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running `fdyno serve`: its process, endpoint and captured log."""

    def __init__(self, tmp_path, args, credentials=True, tls=None, env=None,
                 listen_host="127.0.0.1", durability=None):
        self.port = free_port()
        self.data_dir = str(tmp_path / "data")
        self.log_path = str(tmp_path / "fdyno.log")
        self.scheme = "https" if tls else "http"
        self.host = "localhost" if tls else "127.0.0.1"
        self.endpoint = f"{self.scheme}://{self.host}:{self.port}"
        # The server's default durability (fsync) unless a test asks for another.
        cmd = [FDYNO_BIN, "serve", "--listen", f"{listen_host}:{self.port}", "--data-dir",
               self.data_dir] + (["--durability", durability] if durability else [])
        if credentials:
            creds = tmp_path / "credentials"
            creds.write_text(f"# test keys\n{ACCESS_KEY} {SECRET_KEY} {ACCOUNT_ID}\n")
            cmd += ["--credentials", str(creds)]
        if tls:
            cmd += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        cmd += list(args)
        self.cmd = cmd
        self.log = open(self.log_path, "w+")
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)

    def wait_ready(self, timeout=30, verify=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fdyno exited with {self.proc.returncode}:\n{self.output()}")
            try:
                r = requests.get(self.endpoint + "/", timeout=1, verify=verify)
                if r.status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError("fdyno did not become ready:\n" + self.output())

    def output(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def kill(self):
        """SIGKILL: the process gets no chance to flush or close anything."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.stop()

    def client(self, service="dynamodb", access_key=ACCESS_KEY, secret_key=SECRET_KEY,
               region=REGION, verify=None, **config):
        return boto3.client(
            service, endpoint_url=self.endpoint, region_name=region,
            aws_access_key_id=access_key, aws_secret_access_key=secret_key, verify=verify,
            config=botocore.config.Config(retries={"max_attempts": 0, "mode": "standard"},
                                          **config))


@pytest.fixture
def start_server(tmp_path):
    """start_server(*args, credentials=True, tls=None, ...) -> a ready Server; stopped after
    the test."""
    servers = []

    def start(*args, credentials=True, tls=None, ready=True, env=None, listen_host="127.0.0.1"):
        sub = tmp_path / f"server{len(servers)}"
        sub.mkdir()
        server = Server(sub, args, credentials=credentials, tls=tls, env=env,
                        listen_host=listen_host)
        servers.append(server)
        if ready:
            server.wait_ready(verify=tls[0] if tls else None)
        return server

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture(scope="module")
def module_server(request, tmp_path_factory):
    """One ready server (credentials on) shared by every test of a module."""
    s = Server(tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_")), [])
    s.wait_ready()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def capacity_server(request, tmp_path_factory):
    """One ready server with --enforce-capacity (credentials on) shared by a module's tests."""
    s = Server(tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_")),
               ["--enforce-capacity"])
    s.wait_ready()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def ddb(request):
    """A boto3 DynamoDB client for the module's server, or for FDYNO_TEST_ENDPOINT when set
    (so the DynamoDB-behaviour tests can be pointed at another endpoint, e.g. DynamoDB)."""
    endpoint = os.environ.get("FDYNO_TEST_ENDPOINT")
    if endpoint:
        return boto3.client("dynamodb", endpoint_url=endpoint,
                            config=botocore.config.Config(retries={"max_attempts": 0}))
    return request.getfixturevalue("module_server").client()


def self_signed_cert(directory):
    """A self-signed certificate for localhost and 127.0.0.1 in `directory`: (cert, key)."""
    import subprocess
    cert, key = str(directory / "cert.pem"), str(directory / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=60)
    return cert, key
