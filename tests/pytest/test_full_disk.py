"""A full disk as a client sees it. The real server runs with its data directory on a small
tmpfs; PutItems fill it until writes fail. Every failure must be a prompt DynamoDB-shaped error
(InternalServerError, HTTP 500: the SDKs retry it a bounded number of times), never a hang or a
crash; every acknowledged write stays readable; reads keep being served; once the file system
grows again (remount with a larger size) writes succeed again, and a restart opens the data with
every acknowledged item. The engine-level form is kv_full_disk_test (FullDiskTest.*).

Needs `mount -t tmpfs` (root, or CAP_SYS_ADMIN): where it cannot mount one it fails, saying why,
rather than pass unseen by a skip. test_full_disk_stages.py proves the same at each stage of the
engine's life through the in-process full-disk file system, with no mount."""
import os
import shutil
import subprocess
import time

import botocore.exceptions
import pytest
import requests

from conftest import Server

SMALL_MB = 24   # about three memtables' worth: the WAL, then an SST, then full
LARGE_MB = 256  # "space returns"
VALUE_BYTES = 32 * 1024
MAX_PUTS = 2000  # 62 MB of values: well past SMALL_MB, so the disk fills first
PROMPT_S = 30  # a failing write answers within this (the operation timeout is 10 s)


def _mount_tmpfs(path, size_mb):
    """Mounts a tmpfs of size_mb at path, or fails the test saying exactly why it cannot."""
    if os.geteuid() != 0:
        pytest.fail(f"mount -t tmpfs needs root (CAP_SYS_ADMIN); this runs as uid {os.geteuid()}")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.fail(f"mount -t tmpfs -o size={size_mb}m tmpfs {path} failed (exit "
                    f"{r.returncode}): {r.stderr.strip()}")


def _remount(path, size_mb):
    subprocess.run(["mount", "-o", f"remount,size={size_mb}m", str(path)], check=True,
                   capture_output=True, timeout=30)


def _value(i):
    # Incompressible enough that the engine's compression does not stretch the disk.
    return os.urandom(VALUE_BYTES // 2).hex()[:VALUE_BYTES - 8] + f"{i:08d}"


def _put(ddb, i):
    """PutItem of item i: None when acknowledged, else (error code, HTTP status, seconds)."""
    start = time.monotonic()
    try:
        ddb.put_item(TableName="full", Item={"pk": {"S": f"k{i:05d}"}, "v": {"S": _value(i)}})
        return None
    except botocore.exceptions.ClientError as e:
        return (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"],
                time.monotonic() - start)


def _create_table(ddb):
    ddb.create_table(TableName="full", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])


def _await_resume(ddb, i, acknowledged, limit_s=60):
    """Once space has returned: PutItems from item i until one is acknowledged (then 20 more,
    each of which must be), within limit_s. (seconds it took or None, the next item number)."""
    start, resumed = time.monotonic(), None
    while resumed is None and time.monotonic() - start < limit_s:
        if _put(ddb, i) is None:
            acknowledged.add(i)
            resumed = time.monotonic() - start
        i += 1
        if resumed is None:
            time.sleep(0.2)
    for _ in range(20 if resumed is not None else 0):
        assert _put(ddb, i) is None, f"write {i} refused after writes resumed"
        acknowledged.add(i)
        i += 1
    return resumed, i


def _fill(ddb, max_puts, max_failures):
    """PutItems until `max_failures` are refused (or `max_puts` were sent): (acknowledged item
    numbers, [(n, failure)] refused, the next item number). Every refusal must be a prompt
    InternalServerError (HTTP 500)."""
    acknowledged, failures, i = set(), [], 0
    while i < max_puts and len(failures) < max_failures:
        failure = _put(ddb, i)
        if failure is None:
            acknowledged.add(i)
        else:
            failures.append((i, failure))
        i += 1
    for n, (code, status, seconds) in failures:
        assert (code, status) == ("InternalServerError", 500), (n, code, status)
        assert seconds < PROMPT_S, f"write {n} took {seconds:.1f} s to fail"
    return acknowledged, failures, i


def _check_all_readable(ddb, acknowledged):
    for i in sorted(acknowledged):
        item = ddb.get_item(TableName="full", Key={"pk": {"S": f"k{i:05d}"}},
                            ConsistentRead=True).get("Item")
        assert item is not None, f"acknowledged write k{i:05d} lost"
        assert item["v"]["S"].endswith(f"{i:08d}"), f"k{i:05d} holds another value"


def test_full_disk_gives_clean_errors_loses_nothing_and_recovers(tmp_path):
    srv = tmp_path / "srv"
    data = srv / "data"
    data.mkdir(parents=True)
    _mount_tmpfs(data, SMALL_MB)
    server = None
    try:
        server = Server(srv, ["--operation-timeout", "10"]).wait_ready()
        ddb = server.client(read_timeout=120, connect_timeout=10)
        _create_table(ddb)

        # Fill the disk: PutItems until one fails, then a few more while it stays full.
        acknowledged, failures, i = _fill(ddb, MAX_PUTS, 10)
        assert failures, f"{MAX_PUTS} PutItems of {VALUE_BYTES} bytes fitted in {SMALL_MB} MB"
        print(f"\nfull after {len(acknowledged)} acknowledged PutItems of {VALUE_BYTES} bytes; "
              f"then {len(failures)} refused: {sorted(set(f[1][:2] for f in failures))}, "
              f"slowest answer {max(f[1][2] for f in failures):.1f} s")
        assert server.proc.poll() is None, "the server died when the disk filled"

        # Reads are served while the disk is full, and every acknowledged write is there.
        assert requests.get(server.endpoint + "/", timeout=10).status_code == 200
        _check_all_readable(ddb, acknowledged)
        assert ddb.describe_table(TableName="full")["Table"]["TableStatus"] == "ACTIVE"

        # Space returns: writes succeed again (the engine resumes), within a bound.
        _remount(data, LARGE_MB)
        resumed, i = _await_resume(ddb, i, acknowledged)
        assert resumed is not None, "writes still refused 60 s after space returned"
        print(f"writes resumed {resumed:.1f} s after space returned; "
              f"{len(acknowledged)} acknowledged writes in all")
        _check_all_readable(ddb, acknowledged)

        # A restart opens the data with every acknowledged item.
        code = server.stop()
        with open(server.log_path) as log:
            assert code == 0, log.read()[-4000:]
        shutil.copy(server.log_path, srv / "fdyno-before-restart.log")  # the restart rewrites it
        server = Server(srv, ["--operation-timeout", "10"]).wait_ready()
        ddb = server.client(read_timeout=120, connect_timeout=10)
        _check_all_readable(ddb, acknowledged)
        assert _put(ddb, i) is None, "write refused after the restart"
    finally:
        if server is not None:
            server.stop()
        subprocess.run(["umount", str(data)], capture_output=True, timeout=60)
