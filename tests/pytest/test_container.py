"""The container image recipe (packaging/container/), run without a container engine: the root
filesystem rootfs.sh archives from the release tarball (FDYNO_TARBALL; skipped otherwise),
unpacked with its owners and modes and entered by chroot as the Dockerfile's USER, in its
WORKDIR, with its ENV, running its ENTRYPOINT and CMD and its HEALTHCHECK, as `docker run` would.
Needs root (chroot, and owners other than one's own). fdyno-specific."""
import json
import os
import subprocess
import time

import boto3
import botocore.config
import pytest

from conftest import ROOT, free_port

TARBALL = os.environ.get("FDYNO_TARBALL")
RECIPE = os.path.join(ROOT, "packaging", "container")
pytestmark = [pytest.mark.skipif(not TARBALL, reason="FDYNO_TARBALL names no tarball"),
              pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")]


def _dockerfile():
    """The Dockerfile's instructions that a run uses: {USER, WORKDIR, ENV, ENTRYPOINT, CMD,
    HEALTHCHECK}, the exec forms as lists."""
    image = {"ENV": {}}
    with open(os.path.join(RECIPE, "Dockerfile")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            word, _, rest = line.strip().partition(" ")
            if word == "ENV":
                name, _, value = rest.partition("=")
                image["ENV"][name] = value
            elif word in ("ENTRYPOINT", "CMD"):
                image[word] = json.loads(rest)
            elif word == "HEALTHCHECK":
                image[word] = json.loads(rest[rest.index(" CMD ") + 5:])
            elif word in ("USER", "WORKDIR", "FROM"):
                image[word] = rest
    return image


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The unpacked root filesystem and the Dockerfile's instructions."""
    work = tmp_path_factory.mktemp("container")
    archive = subprocess.run([os.path.join(RECIPE, "rootfs.sh"), TARBALL, str(work / "ctx")],
                             capture_output=True, text=True, check=True).stdout.strip()
    root = work / "root"
    root.mkdir()
    subprocess.run(["tar", "--numeric-owner", "-xpf", archive, "-C", str(root)], check=True)
    return root, _dockerfile()


def _run(root, recipe, argv, env, **kw):
    """argv inside the image: chrooted, as its USER, in its WORKDIR, with only env."""
    uid, gid = (int(x) for x in recipe["USER"].split(":"))

    def enter():
        os.chroot(root)
        os.chdir(recipe["WORKDIR"])
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return subprocess.Popen(argv, env=env, preexec_fn=enter, **kw)


def _serve(root, recipe, command):
    """The image run with `command` (in place of CMD when given), on a free port; answers
    (process, port, env). DYNODB_PORT moves the port as `docker run -e` would."""
    port = free_port()
    env = dict(recipe["ENV"], DYNODB_PORT=str(port))
    log = open(root / "tmp" / f"run-{port}.log", "w+")
    proc = _run(root, recipe, recipe["ENTRYPOINT"] + command, env, stdout=log,
                stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while _health(root, recipe, env) != 0:
        log.seek(0)
        assert proc.poll() is None, log.read()
        assert time.monotonic() < deadline, "not healthy after 30 s"
        time.sleep(0.1)
    return proc, port


def _health(root, recipe, env):
    checked = _run(root, recipe, recipe["HEALTHCHECK"], env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return checked.wait(10)


def _client(port):
    return boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}",
                        region_name="us-east-1", aws_access_key_id="AKIDIMAGE",
                        aws_secret_access_key="image-secret",
                        config=botocore.config.Config(retries={"max_attempts": 1}))


def _put_and_read(ddb):
    ddb.create_table(TableName="items", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
    ddb.put_item(TableName="items", Item={"k": {"S": "a"}, "v": {"N": "1"}})
    assert ddb.get_item(TableName="items", Key={"k": {"S": "a"}})["Item"]["v"] == {"N": "1"}


def test_the_image_is_from_scratch_runs_as_a_user_and_keeps_data_in_its_volume(image):
    root, recipe = image
    assert recipe["FROM"] == "scratch"
    assert not recipe["USER"].startswith("0")
    assert sorted(p.name for p in root.iterdir()) == ["data", "etc", "tmp", "usr"]
    assert (root / "data").stat().st_uid == int(recipe["USER"].split(":")[0])
    proc, port = _serve(root, recipe, recipe["CMD"])
    try:
        _put_and_read(_client(port))
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
    stored = [p for p in (root / "data").rglob("*") if p.is_file()]
    assert stored and all(p.stat().st_uid == int(recipe["USER"].split(":")[0]) for p in stored)
    # The health check fails once nothing serves.
    assert _health(root, recipe, dict(recipe["ENV"], DYNODB_PORT=str(port))) == 1


def test_dynamodb_locals_usual_command_runs_unchanged(image):
    root, recipe = image
    command = ["-jar", "DynamoDBLocal.jar", "-sharedDb", "-dbPath", "./local-data"]
    proc, port = _serve(root, recipe, command)
    try:
        ddb = _client(port)
        assert ddb.list_tables()["TableNames"] in ([], ["items"])
        ddb.create_table(TableName="local", BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
    assert (root / "data" / "local-data").is_dir()  # ./local-data, in the WORKDIR
