"""The self-contained Linux binary (FDYNO_TARBALL=path/to/fdyno-<version>-linux-x86_64.tar.gz
from scripts/tarball.sh; skipped otherwise): what the tarball holds, that its binary is linked
statically, and that it serves the smoke requests below from an empty root (a directory holding
only the binary and a temporary directory: no C library, no /etc, no name service) and from an
older Debian userland (FDYNO_DEBIAN11_ROOT: a debootstrapped Debian 11, glibc 2.31, older than
the 2.36 it is built with; scripts/debian11_root.sh). Each root is entered with chroot (as root)
or `unshare --map-root-user --root` (otherwise). fdyno-specific."""
import os
import pathlib
import shutil
import subprocess
import tarfile
import time

import boto3
import botocore.config
import pytest

from conftest import FDYNO_BIN, free_port

TARBALL = os.environ.get("FDYNO_TARBALL")
DEBIAN11 = os.environ.get("FDYNO_DEBIAN11_ROOT")
pytestmark = pytest.mark.skipif(not TARBALL, reason="FDYNO_TARBALL names no tarball")


def _enter(root):
    """The command prefix that runs a program with `root` as its root directory."""
    if os.geteuid() == 0:
        return [shutil.which("chroot"), str(root)]
    return [shutil.which("unshare"), "--map-root-user", "--root", str(root)]


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tarball")
    with tarfile.open(TARBALL) as t:
        t.extractall(directory)
    (top,) = list(directory.iterdir())
    return top


class RootedServer:
    """`fdyno serve` run from inside `root` (the binary at /fdyno there), on a free port."""

    def __init__(self, root, binary="/fdyno"):
        self.root, self.binary = root, binary
        self.port = free_port()
        self.log = open(root / "tmp" / f"fdyno-{self.port}.log", "w+")
        self.proc = subprocess.Popen(
            _enter(root) + [binary, "serve", "--listen", f"localhost:{self.port}",
                            "--data-dir", "/tmp/data"],
            stdout=self.log, stderr=subprocess.STDOUT, env={})
        deadline = time.monotonic() + 30
        while self.health() != 0:
            assert self.proc.poll() is None, self.output()
            assert time.monotonic() < deadline, "not serving after 30 s: " + self.output()
            time.sleep(0.1)

    def health(self):
        """`fdyno health`, also from inside the root."""
        return subprocess.run(_enter(self.root) + [self.binary, "health", "--endpoint",
                                                    f"localhost:{self.port}"],
                              capture_output=True, env={}).returncode

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def client(self):
        return boto3.client(
            "dynamodb", endpoint_url=f"http://127.0.0.1:{self.port}", region_name="us-east-1",
            aws_access_key_id="AKIDSTATIC", aws_secret_access_key="static-secret",
            config=botocore.config.Config(retries={"max_attempts": 1}))

    def stop(self):
        self.proc.terminate()
        rc = self.proc.wait(30)
        self.log.close()
        return rc


def _smoke(ddb):
    """One request of each family: tables, items, conditions, queries, batches, transactions,
    PartiQL."""
    ddb.create_table(
        TableName="smoke", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    assert "smoke" in ddb.list_tables()["TableNames"]
    ddb.put_item(TableName="smoke", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "x"}})
    ddb.update_item(TableName="smoke", Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
                    UpdateExpression="ADD n :one", ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeValues={":one": {"N": "1"}})
    ddb.batch_write_item(RequestItems={"smoke": [
        {"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": str(i)}, "g": {"S": "y"}}}}
        for i in range(2, 5)]})
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "smoke", "Item": {"pk": {"S": "b"}, "sk": {"N": "1"}}}},
        {"ConditionCheck": {"TableName": "smoke", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
                            "ConditionExpression": "n = :one",
                            "ExpressionAttributeValues": {":one": {"N": "1"}}}}])
    got = ddb.get_item(TableName="smoke", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"]
    assert got["n"] == {"N": "1"}
    assert ddb.query(TableName="smoke", KeyConditionExpression="pk = :a",
                     ExpressionAttributeValues={":a": {"S": "a"}})["Count"] == 4
    assert ddb.query(TableName="smoke", IndexName="by_g", KeyConditionExpression="g = :y",
                     ExpressionAttributeValues={":y": {"S": "y"}})["Count"] == 3
    got = ddb.batch_get_item(RequestItems={"smoke": {"Keys": [
        {"pk": {"S": "b"}, "sk": {"N": "1"}}]}})["Responses"]["smoke"]
    assert len(got) == 1
    rows = ddb.execute_statement(Statement='SELECT * FROM "smoke" WHERE pk = ?',
                                 Parameters=[{"S": "b"}])["Items"]
    assert len(rows) == 1
    ddb.delete_item(TableName="smoke", Key={"pk": {"S": "b"}, "sk": {"N": "1"}})
    assert ddb.scan(TableName="smoke")["Count"] == 4


def _serve_smoke_and_restart(root, binary="/fdyno"):
    server = RootedServer(root, binary)
    try:
        _smoke(server.client())
        assert server.stop() == 0, server.output()
        server = RootedServer(root, binary)  # the data is still there after a restart
        assert server.client().scan(TableName="smoke")["Count"] == 4
    finally:
        if server.proc.poll() is None:
            server.stop()


def test_the_tarball_holds_the_binary_its_man_page_readme_and_license(unpacked):
    assert sorted(p.name for p in unpacked.iterdir()) == ["LICENSE", "README.md", "fdyno",
                                                          "fdyno.1"]
    assert os.access(unpacked / "fdyno", os.X_OK)
    assert (unpacked / "fdyno.1").read_text().startswith('.\\" DO NOT MODIFY')
    assert "==== librocksdb7.8 ====" in (unpacked / "LICENSE").read_text()


def test_the_binary_is_static_and_stripped(unpacked):
    described = subprocess.run(["file", str(unpacked / "fdyno")], capture_output=True,
                               text=True, check=True).stdout
    assert "statically linked" in described and ", stripped" in described, described


def test_it_serves_from_an_empty_root(unpacked, tmp_path):
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    shutil.copy2(unpacked / "fdyno", root / "fdyno")
    assert sorted(p.name for p in root.iterdir()) == ["fdyno", "tmp"]
    _serve_smoke_and_restart(root)


@pytest.fixture
def debian11(tmp_path):
    """The Debian 11 root with a temporary directory of this test's; removed afterwards."""
    if not DEBIAN11:
        pytest.skip("FDYNO_DEBIAN11_ROOT names no Debian 11 root")
    root = pathlib.Path(DEBIAN11)
    release = (root / "etc" / "debian_version").read_text()
    assert release.startswith("11."), release
    placed = []
    yield root, placed
    for path in placed:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def test_it_serves_on_a_debian_11_userland(unpacked, debian11):
    root, placed = debian11
    shutil.rmtree(root / "tmp" / "data", ignore_errors=True)
    placed += [root / "tmp" / "data", root / "opt" / "fdyno-static"]
    shutil.copy2(unpacked / "fdyno", root / "opt" / "fdyno-static")
    _serve_smoke_and_restart(root, "/opt/fdyno-static")


def test_the_dynamic_build_does_not_start_on_debian_11(debian11):
    # Why the static binary exists: the dynamically linked server needs Debian 12's shared
    # libraries (jemalloc, spdlog, OpenSSL 3, ...) and a glibc newer than 2.31.
    root, placed = debian11
    placed.append(root / "opt" / "fdyno-dynamic")
    shutil.copy2(FDYNO_BIN, root / "opt" / "fdyno-dynamic")
    ran = subprocess.run(_enter(root) + ["/opt/fdyno-dynamic", "--version"], capture_output=True,
                         text=True)
    assert ran.returncode == 127, (ran.returncode, ran.stderr)
    assert "error while loading shared libraries" in ran.stderr or "GLIBC_2." in ran.stderr, \
        ran.stderr
