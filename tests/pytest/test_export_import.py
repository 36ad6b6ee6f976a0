"""Exports and imports, black-box through boto3: ExportTableToPointInTime into the directory that
stands for S3 (--export-root) in DynamoDB's layout, DescribeExport and ListExports; ImportTable
from DYNAMODB_JSON, ION and CSV files (gzip, zstd, none) into a new table with a global index,
DescribeImport and ListImports, with DynamoDB's states, counts and errors; an export then an
import equals the source (items and index); SIGKILL during an export and during an import: after
a restart both finish, and the imported table is never ACTIVE before it holds every item.

The directory layout and the crash tests are fdyno-specific (the crash tests pause the server's
worker half-way with FDYNO_TEST_BACKUP_PAUSE_AFTER before killing it). The request rules of
ListExports and ListImports are in cases/export_import.txt.
"""
import gzip
import json
import os
import random
import subprocess
import time
import uuid

import botocore.exceptions
import pytest
import requests

from conftest import ACCOUNT_ID, FDYNO_BIN, REGION, Server, scan_by_pk_sk as scan
from test_items import raw_call


def error(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def wait(predicate, what, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


KEYS = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
DEFS = [{"AttributeName": a, "AttributeType": t} for a, t in (("pk", "S"), ("sk", "N"), ("g", "S"))]
GSI = [{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                          {"AttributeName": "sk", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}]


def creation_parameters(name):
    return {"TableName": name, "KeySchema": KEYS, "AttributeDefinitions": DEFS,
            "BillingMode": "PAY_PER_REQUEST", "GlobalSecondaryIndexes": GSI}


def create(ddb, name, pitr=True):
    ddb.create_table(**creation_parameters(name))
    if pitr:
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})


def random_item(rng, i):
    it = {"pk": {"S": f"p{i % 17}"}, "sk": {"N": str(i)},
          "v": {"S": "".join(rng.choice("ab\"\\\n\u00e9x") for _ in range(rng.randint(1, 30)))}}
    if rng.random() < 0.7:
        it["g"] = {"S": f"g{rng.randint(0, 4)}"}
    if rng.random() < 0.3:
        it["ns"] = {"NS": sorted({str(rng.randint(-5, 5)) + ".5" for _ in range(3)})}
    if rng.random() < 0.3:
        it["m"] = {"M": {"b": {"B": bytes([rng.randint(0, 255)])}, "l": {"L": [{"BOOL": True},
                                                                              {"NULL": True}]}}}
    return it


def load(ddb, name, items):
    for start in range(0, len(items), 25):
        r = ddb.batch_write_item(RequestItems={
            name: [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})
        assert not r.get("UnprocessedItems")


def table_arn(name):
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT_ID}:table/{name}"


def export(ddb, table, fmt="DYNAMODB_JSON", prefix="exports/run", **kw):
    return ddb.export_table_to_point_in_time(TableArn=table_arn(table), S3Bucket="bkt",
                                             S3Prefix=prefix, ExportFormat=fmt,
                                             **kw)["ExportDescription"]


def export_done(ddb, arn):
    d = ddb.describe_export(ExportArn=arn)["ExportDescription"]
    return d if d["ExportStatus"] != "IN_PROGRESS" else None


def import_done(ddb, arn):
    d = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
    return d if d["ImportStatus"] != "IN_PROGRESS" else None


def finished_export(ddb, arn):
    wait(lambda: export_done(ddb, arn), "the export")
    return export_done(ddb, arn)


def finished_import(ddb, arn):
    wait(lambda: import_done(ddb, arn), "the import")
    return import_done(ddb, arn)


@pytest.fixture
def s3_server(start_server, tmp_path):
    root = tmp_path / "s3"
    server = start_server("--export-root", str(root))
    server.root = root
    return server


def test_help_documents_the_export_root_and_its_variable_works(start_server, tmp_path):
    out = subprocess.run([FDYNO_BIN, "serve", "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    assert "--export-root" in out and "DYNODB_EXPORT_ROOT" in out
    root = tmp_path / "from-env"
    ddb = start_server(env={"DYNODB_EXPORT_ROOT": str(root)}).client()
    (root / "bk").mkdir(parents=True)  # a bucket name has 2 characters at least (its pattern)
    (root / "bk" / "x.json").write_text('{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}\n')
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bk"}, InputFormat="DYNAMODB_JSON",
                           TableCreationParameters=creation_parameters("env"))
    d = finished_import(ddb, imp["ImportTableDescription"]["ImportArn"])
    assert (d["ImportStatus"], d["ImportedItemCount"]) == ("COMPLETED", 1)


def test_export_then_import_equals_the_source(s3_server):
    ddb = s3_server.client()
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    create(ddb, "src")
    items = [random_item(rng, i) for i in range(300)]
    load(ddb, "src", items)
    for fmt in ("DYNAMODB_JSON", "ION"):
        started = export(ddb, "src", fmt, prefix=f"exports/{fmt.lower()}")
        assert started["ExportStatus"] == "IN_PROGRESS"
        assert started["ExportFormat"] == fmt and started["S3Bucket"] == "bkt"
        assert started["ExportArn"].startswith(table_arn("src") + "/export/")
        d = finished_export(ddb, started["ExportArn"])
        assert d["ExportStatus"] == "COMPLETED", d
        assert d["ItemCount"] == 300 and d["BilledSizeBytes"] > 0
        # DynamoDB's layout under the bucket directory.
        base = s3_server.root / "bkt" / os.path.dirname(d["ExportManifest"])
        summary = json.loads((s3_server.root / "bkt" / d["ExportManifest"]).read_text())
        assert summary["itemCount"] == 300 and summary["outputFormat"] == fmt
        assert summary["exportArn"] == d["ExportArn"] and summary["s3Bucket"] == "bkt"
        assert (base / "_started").exists()
        entries = [json.loads(line) for line in
                   (s3_server.root / "bkt" / summary["manifestFilesS3Key"]).read_text().splitlines()]
        assert sum(e["itemCount"] for e in entries) == 300
        lines = []
        for e in entries:
            with gzip.open(s3_server.root / "bkt" / e["dataFileS3Key"], "rt") as f:
                lines += f.read().splitlines()
        assert len(lines) == 300
        if fmt == "DYNAMODB_JSON":
            assert sorted(json.loads(x)["Item"]["sk"]["N"] for x in lines) == sorted(
                it["sk"]["N"] for it in items)
        else:
            assert all(x.startswith("$ion_1_0 {Item:{") for x in lines)

        target = f"copy_{fmt.lower()}"
        data_prefix = os.path.dirname(d["ExportManifest"]) + "/data/"
        imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": data_prefix},
                               InputFormat=fmt, InputCompressionType="GZIP",
                               TableCreationParameters=creation_parameters(target))
        desc = imp["ImportTableDescription"]
        assert desc["ImportStatus"] == "IN_PROGRESS"
        assert desc["TableCreationParameters"]["TableName"] == target
        done = finished_import(ddb, desc["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED", done
        assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (
            300, 300, 0)
        t = ddb.describe_table(TableName=target)["Table"]
        assert t["TableStatus"] == "ACTIVE" and t["ItemCount"] == 300
        assert scan(ddb, target) == scan(ddb, "src")
        assert scan(ddb, target, "by_g") == scan(ddb, "src", "by_g")
    listed = ddb.list_exports(TableArn=table_arn("src"))["ExportSummaries"]
    assert [e["ExportStatus"] for e in listed] == ["COMPLETED", "COMPLETED"]
    page = ddb.list_exports(MaxResults=1)
    assert len(page["ExportSummaries"]) == 1 and "NextToken" in page
    rest = ddb.list_exports(MaxResults=1, NextToken=page["NextToken"])
    assert rest["ExportSummaries"][0]["ExportArn"] != page["ExportSummaries"][0]["ExportArn"]
    imports = ddb.list_imports(TableArn=table_arn("copy_ion"))["ImportSummaryList"]
    assert [i["ImportStatus"] for i in imports] == ["COMPLETED"]
    assert len(ddb.list_imports()["ImportSummaryList"]) == 2
    # /metrics counts what the exports wrote and the imports loaded.
    metrics = requests.get(s3_server.endpoint + "/metrics", timeout=10).json()
    counted = {m["name"]: m["value"] for m in metrics["counters"] + metrics["gauges"]}
    assert (counted["fdyno_export_items"], counted["fdyno_import_items"]) == (600, 600)
    assert counted["fdyno_exports_running"] == 0


def test_export_at_a_past_time_leaves_later_writes_out(s3_server):
    ddb = s3_server.client()
    create(ddb, "past")
    ddb.put_item(TableName="past", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "old"}})
    time.sleep(1.2)
    at = time.time()
    time.sleep(1.2)
    ddb.put_item(TableName="past", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "new"}})
    ddb.put_item(TableName="past", Item={"pk": {"S": "b"}, "sk": {"N": "2"}})
    d = finished_export(ddb, export(ddb, "past", ExportTime=at)["ExportArn"])
    assert d["ExportStatus"] == "COMPLETED" and d["ItemCount"] == 1
    entries = (s3_server.root / "bkt" / os.path.dirname(d["ExportManifest"]) /
               "manifest-files.json").read_text().splitlines()
    lines = []
    for e in entries:
        with gzip.open(s3_server.root / "bkt" / json.loads(e)["dataFileS3Key"], "rt") as f:
            lines += f.read().splitlines()
    assert [json.loads(x)["Item"]["v"] for x in lines] == [{"S": "old"}]


def test_export_errors_and_client_tokens(s3_server):
    ddb = s3_server.client()
    create(ddb, "nopitr", pitr=False)
    create(ddb, "okay")
    code, message = error(lambda: export(ddb, "nopitr"))
    assert code == "PointInTimeRecoveryUnavailableException" and "nopitr" in message
    assert error(lambda: export(ddb, "missing"))[0] == "TableNotFoundException"
    # TableArn as DynamoDB reads it.
    raw = s3_server.client(parameter_validation=False)
    r = raw_call(ddb, "ExportTableToPointInTime", {
        "TableArn": table_arn("okay"), "S3Bucket": "bkt", "ExportType": "INCREMENTAL_EXPORT",
        "IncrementalExportSpecification": {}})
    assert (r.status_code, r.json()["message"]) == (
        400, "Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification")
    other_region = table_arn("okay").replace(f":{REGION}:", ":eu-west-1:")
    for arn, answer in (
            ("", ("ValidationException", "Invalid TableArn: Invalid Table ARN")),
            (table_arn("okay") + "/index/gsi",
             ("ValidationException", "Invalid Request: Table ARN is invalid.")),
            (other_region, ("TableNotFoundException", f"Table not found: {other_region}")),
            # A missing table of this region is named by its ARN too (recorded in 2026).
            (table_arn("never"), ("TableNotFoundException",
                                  f"Table not found: {table_arn('never')}"))):
        assert error(lambda: raw.export_table_to_point_in_time(
            TableArn=arn, S3Bucket="bkt")) == answer, arn
    for prefix in ("../escape", "a/../../b", "/abs"):
        assert error(lambda: export(ddb, "okay", prefix=prefix))[0] == "ValidationException", prefix
    code, message = error(lambda: ddb.export_table_to_point_in_time(
        TableArn=table_arn("okay"), S3Bucket="-bad-"))
    assert code == "ValidationException" and "s3Bucket" in message
    code, _ = error(lambda: export(ddb, "okay", ExportTime=time.time() + 3600))
    assert code == "InvalidExportTimeException"
    # Before recovery was enabled: DynamoDB's answer.
    assert error(lambda: export(ddb, "okay", ExportTime=time.time() - 86400)) == (
        "InvalidExportTimeException", "Export Time is invalid")
    token = str(uuid.uuid4())
    first = export(ddb, "okay", ClientToken=token)
    again = export(ddb, "okay", ClientToken=token)
    assert again["ExportArn"] == first["ExportArn"] and again["ClientToken"] == token
    code, _ = error(lambda: export(ddb, "okay", prefix="elsewhere", ClientToken=token))
    assert code == "ExportConflictException"
    missing = first["ExportArn"][:-8] + "00000000"
    assert error(lambda: ddb.describe_export(ExportArn=missing))[0] == "ExportNotFoundException"
    assert finished_export(ddb, first["ExportArn"])["ExportStatus"] == "COMPLETED"


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_import_csv_ion_zstd_counts_and_errors(s3_server):
    ddb = s3_server.client()
    root = s3_server.root / "bkt"
    csv = "pk;sk;g;v\n" + "".join(f"c{i};{i};g{i % 3};\"v;{i}\"\n" for i in range(20))
    csv += ";1;;no key\n"           # no partition key: an error
    csv += "x;not-a-number;;\n"     # sk is N: an error
    csv += "y;1;g;v;extra\n"        # more cells than headers: an error
    write(root / "csv/part-1.csv", csv.encode())
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": "csv/"},
                           InputFormat="CSV", InputCompressionType="NONE",
                           InputFormatOptions={"Csv": {"Delimiter": ";"}},
                           TableCreationParameters=creation_parameters("from_csv"))
    d = finished_import(ddb, imp["ImportTableDescription"]["ImportArn"])
    assert d["ImportStatus"] == "COMPLETED", d
    assert (d["ProcessedItemCount"], d["ImportedItemCount"], d["ErrorCount"]) == (23, 20, 3)
    assert d["InputFormatOptions"] == {"Csv": {"Delimiter": ";"}}
    got = ddb.get_item(TableName="from_csv", Key={"pk": {"S": "c3"}, "sk": {"N": "3"}})["Item"]
    assert got == {"pk": {"S": "c3"}, "sk": {"N": "3"}, "g": {"S": "g0"}, "v": {"S": "v;3"}}
    assert len(scan(ddb, "from_csv", "by_g")) == 20

    # HeaderList: every line is data. ZSTD compression (the zstd tool compresses the file).
    rows = "".join(f"h{i},{i}\n" for i in range(5)).encode()
    zstd = subprocess.run(["zstd", "-q", "-c"], input=rows, capture_output=True, check=True).stdout
    write(root / "zst/a.csv.zst", zstd)
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": "zst/"},
                           InputFormat="CSV", InputCompressionType="ZSTD",
                           InputFormatOptions={"Csv": {"HeaderList": ["pk", "sk"]}},
                           TableCreationParameters=creation_parameters("from_zstd"))
    d = finished_import(ddb, imp["ImportTableDescription"]["ImportArn"])
    assert (d["ImportStatus"], d["ImportedItemCount"], d["ErrorCount"]) == ("COMPLETED", 5, 0)

    # Ion text, one good and one bad line.
    write(root / "ion/a.ion", b'$ion_1_0 {Item:{pk:"i",sk:1.,tags:$dynamodb_SS::["a","b"]}}\n'
                              b'$ion_1_0 {Item:{pk:"j",sk:"not a number"}}\n')
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": "ion/"},
                           InputFormat="ION", TableCreationParameters=creation_parameters("from_ion"))
    d = finished_import(ddb, imp["ImportTableDescription"]["ImportArn"])
    assert (d["ImportStatus"], d["ImportedItemCount"], d["ErrorCount"]) == ("COMPLETED", 1, 1)
    assert ddb.get_item(TableName="from_ion", Key={"pk": {"S": "i"}, "sk": {"N": "1"}})["Item"][
        "tags"] == {"SS": ["a", "b"]}

    # A file that is not what InputCompressionType says: FAILED, and the table is gone.
    write(root / "notgz/a.json.gz", b'{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}\n')
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": "notgz/"},
                           InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                           TableCreationParameters=creation_parameters("failed"))
    d = finished_import(ddb, imp["ImportTableDescription"]["ImportArn"])
    assert d["ImportStatus"] == "FAILED" and "EndTime" in d
    # The code is the typed cause's; the message is the message alone.
    assert d["FailureCode"] == "InvalidCompression", d
    assert d["FailureMessage"] and "\n" not in d["FailureMessage"], d
    assert "InvalidCompression" not in d["FailureMessage"], d
    assert error(lambda: ddb.describe_table(TableName="failed"))[0] == "ResourceNotFoundException"

    # Errors.
    source = {"S3Bucket": "bkt", "S3KeyPrefix": "csv/"}
    code, message = error(lambda: ddb.import_table(
        S3BucketSource=source, InputFormat="CSV",
        TableCreationParameters=creation_parameters("from_csv")))
    assert code == "ResourceInUseException" and "from_csv" in message
    code, message = error(lambda: ddb.import_table(
        S3BucketSource=source, InputFormat="XML",
        TableCreationParameters=creation_parameters("other")))
    assert code == "ValidationException" and "inputFormat" in message
    code, _ = error(lambda: ddb.import_table(
        S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": "../up"}, InputFormat="CSV",
        TableCreationParameters=creation_parameters("other")))
    assert code == "ValidationException"
    code, message = error(lambda: ddb.import_table(
        S3BucketSource=source, InputFormat="CSV",
        TableCreationParameters={**creation_parameters("other"), "AttributeDefinitions": DEFS[:2]}))
    assert code == "ValidationException"
    token = str(uuid.uuid4())
    first = ddb.import_table(ClientToken=token, S3BucketSource=source, InputFormat="CSV",
                             InputFormatOptions={"Csv": {"Delimiter": ";"}},
                             TableCreationParameters=creation_parameters("tok"))
    again = ddb.import_table(ClientToken=token, S3BucketSource=source, InputFormat="CSV",
                             InputFormatOptions={"Csv": {"Delimiter": ";"}},
                             TableCreationParameters=creation_parameters("tok"))
    assert (again["ImportTableDescription"]["ImportArn"] ==
            first["ImportTableDescription"]["ImportArn"])
    code, _ = error(lambda: ddb.import_table(
        ClientToken=token, S3BucketSource=source, InputFormat="CSV",
        TableCreationParameters=creation_parameters("tok2")))
    assert code == "ImportConflictException"
    missing = first["ImportTableDescription"]["ImportArn"][:-8] + "00000000"
    assert error(lambda: ddb.describe_import(ImportArn=missing))[0] == "ImportNotFoundException"
    page = ddb.list_imports(PageSize=2)
    assert len(page["ImportSummaryList"]) == 2 and len(page["NextToken"]) >= 112
    rest = ddb.list_imports(PageSize=25, NextToken=page["NextToken"])["ImportSummaryList"]
    assert len(rest) == 3


def test_sigkill_during_export_and_import(tmp_path):
    servers = []  # all on one data directory, one after the other; stopped whatever happens
    try:
        sigkill_during_export_and_import(tmp_path, servers)
    finally:
        for server in servers:
            server.stop()


def sigkill_during_export_and_import(tmp_path, servers):
    root = str(tmp_path / "s3")
    pause = {"FDYNO_TEST_BACKUP_PAUSE_AFTER": "1"}

    def start(env=None):
        servers.append(Server(tmp_path, ["--export-root", root], env=env))
        return servers[-1].wait_ready()

    first = start(pause)
    ddb = first.client()
    create(ddb, "k_src")
    rng = random.Random(7)
    load(ddb, "k_src", [random_item(rng, i) for i in range(3000)])
    arn = export(ddb, "k_src")["ExportArn"]
    wait(lambda: "worker paused" in first.output(), "the export to pause")
    assert export_done(ddb, arn) is None
    # Paused after its first page of items: data begun, no manifest yet.
    export_dir = tmp_path / "s3" / "bkt" / "exports/run/AWSDynamoDB" / arn.rsplit("/", 1)[1]
    assert (export_dir / "_started").exists() and list((export_dir / "data").iterdir())
    assert not (export_dir / "manifest-files.json").exists()
    assert not (export_dir / "manifest-summary.json").exists()
    first.kill()

    second = start()
    ddb = second.client()
    d = finished_export(ddb, arn)
    assert d["ExportStatus"] == "COMPLETED" and d["ItemCount"] == 3000
    assert "starting again" in second.output()
    second.stop()

    # An import of several batches, killed after its first.
    third = start(pause)
    ddb = third.client()
    data_prefix = os.path.dirname(d["ExportManifest"]) + "/data/"
    imp = ddb.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": data_prefix},
                           InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                           TableCreationParameters=creation_parameters("k_copy"))
    import_arn = imp["ImportTableDescription"]["ImportArn"]
    wait(lambda: "worker paused" in third.output(), "the import to pause")
    half = ddb.describe_import(ImportArn=import_arn)["ImportTableDescription"]
    assert half["ImportStatus"] == "IN_PROGRESS" and 0 < half["ProcessedItemCount"] < 3000, half
    assert ddb.describe_table(TableName="k_copy")["Table"]["TableStatus"] == "CREATING"
    assert error(lambda: ddb.get_item(TableName="k_copy", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}}))[
        0] == "ResourceNotFoundException"
    third.kill()

    fourth = start()
    ddb = fourth.client()
    seen_active_count = []

    def active():
        t = ddb.describe_table(TableName="k_copy")["Table"]
        if t["TableStatus"] == "ACTIVE":
            seen_active_count.append(t["ItemCount"])
            return True
        return False

    wait(active, "the import after a restart")
    assert seen_active_count == [3000]
    done = finished_import(ddb, import_arn)
    assert (done["ImportStatus"], done["ImportedItemCount"], done["ErrorCount"]) == (
        "COMPLETED", 3000, 0)
    assert scan(ddb, "k_copy") == scan(ddb, "k_src")
    assert scan(ddb, "k_copy", "by_g") == scan(ddb, "k_src", "by_g")
    fourth.stop()


def test_exports_and_imports_belong_to_the_callers_account(start_server, tmp_path):
    # Two accounts, each with a table "same" (other items) and the same ClientToken: each sees,
    # exports and imports only its own.
    creds = tmp_path / "two-accounts"
    keys = {"111111111111": ("AKIDACCOUNTA00000001", "secret-of-account-a-0000000000000000001"),
            "222222222222": ("AKIDACCOUNTB00000001", "secret-of-account-b-0000000000000000001")}
    creds.write_text("".join(f"{k} {s} {acct}\n" for acct, (k, s) in keys.items()))
    server = start_server("--credentials", str(creds), "--export-root", str(tmp_path / "s3"),
                          credentials=False)
    a, b = (server.client(access_key=k, secret_key=s) for k, s in keys.values())
    token = str(uuid.uuid4())
    exports = {}
    for ddb, account, n in ((a, "111111111111", 3), (b, "222222222222", 5)):
        create(ddb, "same")
        load(ddb, "same", [random_item(random.Random(n), i) for i in range(n)])
        arn = f"arn:aws:dynamodb:{REGION}:{account}:table/same"
        exports[account] = ddb.export_table_to_point_in_time(
            TableArn=arn, S3Bucket="bkt", S3Prefix=account, ClientToken=token)["ExportDescription"]
    arn_a, arn_b = exports["111111111111"]["ExportArn"], exports["222222222222"]["ExportArn"]
    assert arn_a != arn_b  # one token, two accounts: two exports
    assert [e["ExportArn"] for e in a.list_exports()["ExportSummaries"]] == [arn_a]
    assert [e["ExportArn"] for e in b.list_exports()["ExportSummaries"]] == [arn_b]
    # Another account's export under the caller's account in its ARN: not found.
    other = arn_b.replace("222222222222", "111111111111")
    assert error(lambda: a.describe_export(ExportArn=other))[0] == "ExportNotFoundException"
    # Another account's export by its own ARN: not found either.
    assert error(lambda: a.describe_export(ExportArn=arn_b))[0] == "ExportNotFoundException"
    assert finished_export(a, arn_a)["ItemCount"] == 3
    assert finished_export(b, arn_b)["ItemCount"] == 5

    data = os.path.dirname(finished_export(b, arn_b)["ExportManifest"]) + "/data/"
    imp = b.import_table(S3BucketSource={"S3Bucket": "bkt", "S3KeyPrefix": data},
                         InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                         TableCreationParameters=creation_parameters("copy"))["ImportTableDescription"]
    assert finished_import(b, imp["ImportArn"])["ImportedItemCount"] == 5
    assert scan(b, "copy") == scan(b, "same")
    assert error(lambda: a.describe_table(TableName="copy"))[0] == "ResourceNotFoundException"
    assert a.list_imports()["ImportSummaryList"] == []
    assert error(lambda: a.describe_import(ImportArn=imp["ImportArn"]))[0] == \
        "ImportNotFoundException"
