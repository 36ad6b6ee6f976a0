"""The Debian package from scripts/package.sh (FDYNO_PACKAGE=path/to/fdyno_*.deb; skipped
otherwise): what it holds, what it depends on, and that its binary serves."""
import os
import re
import socket
import subprocess
import time

import pytest
import requests

DEB = os.environ.get("FDYNO_PACKAGE")
pytestmark = pytest.mark.skipif(not DEB, reason="FDYNO_PACKAGE names no package")


def _field(name):
    return subprocess.run(["dpkg-deb", "--field", DEB, name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_contents():
    listing = subprocess.run(["dpkg-deb", "--contents", DEB], capture_output=True, text=True,
                             check=True).stdout
    paths = {line.split()[-1] for line in listing.splitlines()}
    for path in ("./usr/bin/fdyno", "./lib/systemd/system/fdyno.service", "./etc/default/fdyno",
                 "./usr/share/doc/fdyno/README.md",
                 "./usr/share/doc/fdyno/docs/compatibility.md",
                 "./usr/share/doc/fdyno/docs/architecture.md"):
        assert path in paths, path
    # Nothing but the server: no test, benchmark or tool binary.
    binaries = [p for p in paths if p.startswith("./usr/bin/") and p != "./usr/bin/"]
    assert binaries == ["./usr/bin/fdyno"], binaries


def test_control_fields_and_maintainer_scripts(tmp_path):
    assert _field("Package") == "fdyno"
    depends = _field("Depends")
    # RocksDB is linked statically (docs/format/kv_embedded.md); its compression libraries
    # are shared.
    for library in ("libssl3", "libstdc++6", "libspdlog1.10", "libsnappy1v5", "libzstd1",
                    "libjemalloc2"):
        assert library in depends, depends
    for not_needed in ("librocksdb", "-dev", "gtest", "valgrind", "clang", "python"):
        assert not_needed not in depends, depends
    subprocess.run(["dpkg-deb", "--control", DEB, str(tmp_path)], check=True)
    assert (tmp_path / "conffiles").read_text().split() == ["/etc/default/fdyno"]
    for script in ("postinst", "prerm", "postrm"):
        assert os.access(tmp_path / script, os.X_OK), script
        subprocess.run(["sh", "-n", str(tmp_path / script)], check=True)


def test_the_packaged_binary_is_stripped_and_serves(tmp_path):
    subprocess.run(["dpkg-deb", "-x", DEB, str(tmp_path)], check=True)
    binary = tmp_path / "usr" / "bin" / "fdyno"
    described = subprocess.run(["file", str(binary)], capture_output=True, text=True).stdout
    assert ", stripped" in described, described
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             check=True).stdout
    assert re.search(r"build type Release", version), version
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([str(binary), "serve", "--in-memory", "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                r = requests.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except requests.RequestException:
                assert time.time() < deadline
                time.sleep(0.05)
        assert r.text.startswith("healthy: ")
    finally:
        p.terminate()
        p.wait(30)
