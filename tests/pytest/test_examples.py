"""The examples of docs/testing-your-application.md (examples/) run against the real server with
its fault API and --enforce-capacity, and pass; and the token example fails once its
ClientRequestToken is taken out, so its assertions prove what they claim.

The JavaScript example runs when FDYNO_JS_SDK names a node_modules directory holding
@aws-sdk/client-dynamodb (CI has no npm packages); it is skipped, and says so, otherwise."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "examples")
PYTHON = ["lost_response_add.py", "conditional_create_reconcile.py", "sdk_retry_throttle.py",
          "batch_unprocessed_retry.py"]


@pytest.fixture(scope="module")
def env(request):
    from conftest import Server, free_port
    tmp = request.getfixturevalue("tmp_path_factory").mktemp("examples")
    admin = free_port()
    s = Server(tmp, ["--in-memory", "--admin-listen", f"127.0.0.1:{admin}",
                     "--enforce-capacity"], credentials=False)
    s.wait_ready()
    yield dict(os.environ, FDYNO_ENDPOINT=s.endpoint,
               FDYNO_FAULTS_URL=f"http://127.0.0.1:{admin}/faults")
    s.stop()


def run(args, env, cwd=EXAMPLES):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("example", PYTHON)
def test_example_passes(env, example):
    r = run([sys.executable, example], env)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)


def test_token_example_fails_without_its_token(env, tmp_path):
    """The same example with the line that passes ClientRequestToken removed: botocore then
    gives each send a token of its own, the retry applies the increment again, and the example's
    assertion catches it."""
    for name in ("lost_response_add.py", "fdyno_faults.py", "client.py"):
        shutil.copy(os.path.join(EXAMPLES, name), tmp_path)
    path = tmp_path / "lost_response_add.py"
    text = path.read_text()
    assert "ClientRequestToken=token," in text
    path.write_text(text.replace("ClientRequestToken=token,", ""))
    r = run([sys.executable, "lost_response_add.py"], env, cwd=tmp_path)
    assert r.returncode != 0
    assert "a retried transaction with the same token applies once" in r.stderr


def test_javascript_example(env, tmp_path):
    sdk = os.environ.get("FDYNO_JS_SDK")
    if not sdk or shutil.which("node") is None:
        pytest.skip("FDYNO_JS_SDK (a node_modules with @aws-sdk/client-dynamodb) not given")
    # An ES module resolves its imports beside itself: a copy next to the given node_modules.
    os.symlink(os.path.abspath(sdk), tmp_path / "node_modules")
    shutil.copy(os.path.join(EXAMPLES, "js", "lost_response_transaction.mjs"), tmp_path)
    r = run(["node", "lost_response_transaction.mjs"], env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "same token on the retry: counted 1; a new token each send: 2" in r.stdout
