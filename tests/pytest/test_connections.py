"""Connections from outside: TLS responses of every size, running out of file descriptors,
the connection cap. Black-box against the real binary."""
import os
import re
import resource
import socket
import subprocess
import time

import pytest
import requests

from conftest import FDYNO_BIN, free_port, self_signed_cert


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


# ---- TLS: responses over one TLS record (16,384 bytes) ----

def test_tls_bodies_over_one_record_arrive_whole(start_server, cert):
    s = start_server(tls=cert)
    # /metrics: a local answer of tens of KB, written by the network thread.
    r = requests.get(s.endpoint + "/metrics", verify=cert[0], timeout=10,
                     headers={"Accept-Encoding": "identity"})
    assert r.status_code == 200
    assert len(r.content) == int(r.headers["Content-Length"]) > 16384
    r.json()

    ddb = s.client(verify=cert[0], read_timeout=10)
    ddb.create_table(TableName="big", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for size in (16300, 16384, 16500, 100_000, 399_000):
        ddb.put_item(TableName="big", Item={"pk": {"S": f"k{size}"}, "v": {"S": "x" * size}})
        item = ddb.get_item(TableName="big", Key={"pk": {"S": f"k{size}"}})["Item"]
        assert len(item["v"]["S"]) == size
    # A Scan page of ~530 KB (on a worker, not the network thread).
    page = ddb.scan(TableName="big")
    assert len(page["Items"]) == 5


# ---- Out of file descriptors ----

def _open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def _limits(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return soft, hard
    raise AssertionError("no open-files limit")


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_with_fd_limit(tmp_path, soft, hard, *args):
    """fdyno serve with RLIMIT_NOFILE (soft, hard) set in the child before exec."""
    port = free_port()
    log = open(tmp_path / "fdyno.log", "w+")

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    p = subprocess.Popen([FDYNO_BIN, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir",
                          str(tmp_path / "data"), "--durability", "none", *args],
                         stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/", timeout=1).ok:
                return p, port, log
        except requests.RequestException:
            time.sleep(0.05)
    p.kill()
    raise AssertionError("fdyno did not start:\n" + open(tmp_path / "fdyno.log").read())


def _stop(p, log):
    p.terminate()
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    log.close()


def test_soft_fd_limit_is_raised_to_the_hard_limit(tmp_path):
    p, _, log = _start_with_fd_limit(tmp_path, 256, 4096)
    try:
        assert _limits(p.pid) == ("4096", "4096")
    finally:
        _stop(p, log)


def test_out_of_descriptors_backs_off_and_recovers(tmp_path):
    # Soft and hard limit 200: the server cannot raise it. 260 idle connections exhaust it; the
    # accept loop must not spin (CPU, log volume) and must serve again once clients leave.
    own_soft, own_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if own_soft < 600:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(own_hard, 4096), own_hard))
    p, port, log = _start_with_fd_limit(tmp_path, 200, 200, "--max-connections", "100000")
    socks = []
    try:
        for _ in range(260):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)  # the server has accepted what it can
        cpu0, size0 = _cpu_seconds(p.pid), os.path.getsize(tmp_path / "fdyno.log")
        time.sleep(3)
        cpu = _cpu_seconds(p.pid) - cpu0
        grown = os.path.getsize(tmp_path / "fdyno.log") - size0
        assert cpu < 0.5, f"{cpu:.2f} s of CPU in 3 s while out of descriptors"
        assert grown < 4096, f"{grown} bytes of log in 3 s while out of descriptors"
        text = open(tmp_path / "fdyno.log").read()
        assert re.search(r"out of file descriptors", text), text[-2000:]
        for s in socks:
            s.close()
        socks = []
        deadline = time.time() + 10
        while True:
            try:
                assert requests.get(f"http://127.0.0.1:{port}/", timeout=2).ok
                break
            except requests.RequestException:
                assert time.time() < deadline, "the server did not recover"
                time.sleep(0.1)
    finally:
        for s in socks:
            s.close()
        _stop(p, log)


def test_connection_cap_answers_503_and_closes(start_server):
    s = start_server("--max-connections", "4")
    held = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(4)]
    try:
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = extra.recv(4096)
            if not chunk:
                break
            data += chunk
        extra.close()
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), data
        assert b"Connection: close" in head
        assert b"ServiceUnavailable" in body
        assert "connection limit" in s.output()
    finally:
        for h in held:
            h.close()
    # Below the cap again: served.
    deadline = time.time() + 10
    while requests.get(s.endpoint + "/", timeout=5).status_code != 200:
        assert time.time() < deadline
        time.sleep(0.1)
