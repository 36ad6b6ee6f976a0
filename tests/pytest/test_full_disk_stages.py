"""A disk that fills at each stage of the engine's life, as a client sees it, without mounting
anything: the real server with its files through the full-disk file system and small write
buffers (test-only switches FDYNO_TEST_DISK_FULL_AT, FDYNO_TEST_DISK_SPACE_FILE and
FDYNO_TEST_ROCKSDB_OPTIONS, src/main/test_switches.h), so that the disk fills during a write-ahead
log append, a memtable flush, a compaction or a MANIFEST write, with a short write there (part of
the data written, then ENOSPC) or without.

Every refused write is a prompt InternalServerError (HTTP 500); reads are served while the disk
is full and every acknowledged write is readable; writes resume once space returns (the test
creates the space file); and a restart opens the data with every acknowledged item.
fdyno-specific.
"""
import pytest

from conftest import Server
from test_full_disk import _await_resume, _check_all_readable, _create_table, _fill, _put

SMALL_ENGINE = ("write_buffer_size=65536;max_bytes_for_level_base=262144;"
                "target_file_size_base=65536;max_total_wal_size=131072")
# The append of each stage the disk fills at: late enough that the stage has begun.
FILL_AT = {"append": 60, "flush": 4, "compaction": 3, "manifest": 4}
MAX_PUTS = 4000


def start(srv, env):
    return Server(srv, ["--operation-timeout", "10"], env=env).wait_ready()


@pytest.mark.parametrize("short", [False, True], ids=["enospc", "short-write"])
@pytest.mark.parametrize("stage", list(FILL_AT))
def test_a_disk_filling_at_each_stage_gives_clean_errors_and_loses_nothing(tmp_path, stage,
                                                                             short):
    space_file = tmp_path / "space-returned"
    point = f"{stage}:{FILL_AT[stage]}{':short' if short else ''}"
    env = {"FDYNO_TEST_DISK_FULL_AT": point, "FDYNO_TEST_DISK_SPACE_FILE": str(space_file),
           "FDYNO_TEST_ROCKSDB_OPTIONS": SMALL_ENGINE}
    server = start(tmp_path, env)
    resumed = None
    try:
        ddb = server.client(read_timeout=120, connect_timeout=10)
        _create_table(ddb)
        acknowledged, failures, i = _fill(ddb, MAX_PUTS, 5)
        assert failures, f"the disk never filled at {point} within {MAX_PUTS} PutItems"
        assert f"test disk full at {point}" in server.output(), "it filled elsewhere"
        assert server.proc.poll() is None, "the server died when the disk filled"
        _check_all_readable(ddb, acknowledged)  # reads served while full

        space_file.write_text("")
        resumed, i = _await_resume(ddb, i, acknowledged)  # a reopen, once there is room
        assert resumed is not None, "writes still refused 60 s after space returned"
        _check_all_readable(ddb, acknowledged)
        assert server.stop() == 0, server.output()[-4000:]
        server = start(tmp_path, {"FDYNO_TEST_ROCKSDB_OPTIONS": SMALL_ENGINE})
        ddb = server.client(read_timeout=120, connect_timeout=10)
        _check_all_readable(ddb, acknowledged)
        assert _put(ddb, i) is None, "write refused after the restart"
        print(f"{point}: {len(acknowledged)} acknowledged, {len(failures)} refused")
    finally:
        server.stop()
