"""Data directories written by earlier fdyno binaries open with this one and lose nothing.

tests/fixtures/unopenable-after-receipt-expiry: written by a server whose RocksDB memtable insert
hints corrupted the memtable when expired operation receipts were cleared (a range tombstone);
that server, and every later open of the directory, aborted while replaying the write-ahead log
(docs/format/kv_embedded.md, "RocksDB features"). Table `tbl` (hash key `p`, S) holds the
acknowledged items k0..k199 and `after`; one more write was in flight when the server aborted and
was never acknowledged, so it may or may not be there.

fdyno-specific (it starts servers on prepared data directories).
"""
import os
import shutil

from conftest import Server

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def open_fixture(tmp_path, name):
    data = tmp_path / "data"
    shutil.copytree(os.path.join(FIXTURES, name), data)
    for root, dirs, files in os.walk(data):
        for f in dirs + files:
            os.chmod(os.path.join(root, f), 0o755 if f in dirs else 0o644)
    # Open mode: the directory predates accounts, so its tables are open mode's account's
    # (docs/format/catalog.md, "Accounts").
    server = Server(tmp_path, [], credentials=False)
    server.wait_ready()
    return server


def scan_keys(ddb, table, key):
    pages = ddb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    return [item[key]["S"] for page in pages for item in page["Items"]]


def test_directory_left_by_the_receipt_expiry_abort_opens_with_every_acknowledged_item(tmp_path):
    server = open_fixture(tmp_path, "unopenable-after-receipt-expiry")
    try:
        ddb = server.client()
        keys = scan_keys(ddb, "tbl", "p")
        acknowledged = {f"k{i}" for i in range(200)} | {"after"}
        assert len(keys) == len(set(keys)), "an item was returned twice"
        assert acknowledged <= set(keys), f"lost: {sorted(acknowledged - set(keys))}"
        assert len(set(keys) - acknowledged) <= 1, f"unexpected: {sorted(set(keys) - acknowledged)}"
        assert ddb.describe_table(TableName="tbl")["Table"]["ItemCount"] == len(keys)
        # The directory takes writes again, and the same clear that broke it works now.
        ddb.put_item(TableName="tbl", Item={"p": {"S": "new"}})
        assert ddb.get_item(TableName="tbl", Key={"p": {"S": "new"}},
                            ConsistentRead=True)["Item"] == {"p": {"S": "new"}}
    finally:
        assert server.stop() == 0, server.output()
    server = Server(tmp_path, [], credentials=False).wait_ready()
    try:
        assert len(scan_keys(server.client(), "tbl", "p")) == len(keys) + 1
    finally:
        server.stop()
