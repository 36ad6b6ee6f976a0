"""Amazon S3's REST API beside the DynamoDB endpoint, over the export root: a program writes its
import files with boto3's S3 client, calls ImportTable, exports, and reads the export's manifest
and data files back through S3, all against the one endpoint. Also: S3's errors (XML, S3's
codes), signatures checked as S3 checks them (the key, the path encoded once, unsigned and
presigned payloads), multipart uploads, ranges, listings, and what is not built answering
NotImplemented. fdyno-specific where it concerns the export root; S3's behaviour otherwise."""
import gzip
import json
import os
import time

import boto3
import botocore.config
import botocore.exceptions
import pytest
import requests

from conftest import ACCESS_KEY, REGION, SECRET_KEY


@pytest.fixture(scope="module")
def s3_server(request, tmp_path_factory):
    from conftest import Server
    tmp = tmp_path_factory.mktemp("s3")
    root = tmp / "export-root"
    server = Server(tmp, ["--export-root", str(root)]).wait_ready()
    server.root = root
    yield server
    server.stop()


def s3_client(server, secret=SECRET_KEY, **config):
    return boto3.client("s3", endpoint_url=server.endpoint, region_name=REGION,
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=secret,
                        config=botocore.config.Config(retries={"max_attempts": 0},
                                                      s3={"addressing_style": "path"}, **config))


def error_code(fn, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(**kw)
    return e.value.response["Error"]["Code"]


def wait(describe, key):
    for _ in range(600):
        d = describe()
        if d[key] != "IN_PROGRESS":
            return d
        time.sleep(0.05)
    raise AssertionError(f"still IN_PROGRESS: {d}")


def test_import_from_and_export_to_s3_through_the_same_endpoint(s3_server):
    s3, ddb = s3_client(s3_server), s3_server.client()
    s3.create_bucket(Bucket="app-data")
    lines = "".join(json.dumps({"Item": {"pk": {"S": f"k{i}"}, "n": {"N": str(i)}}}) + "\n"
                    for i in range(250))
    s3.put_object(Bucket="app-data", Key="incoming/part-1.json", Body=lines.encode())
    # The object is the file ImportTable reads: the bucket is a directory of the export root.
    assert (s3_server.root / "app-data" / "incoming" / "part-1.json").read_text() == lines
    imp = ddb.import_table(
        S3BucketSource={"S3Bucket": "app-data", "S3KeyPrefix": "incoming/"},
        InputFormat="DYNAMODB_JSON",
        TableCreationParameters={
            "TableName": "from_s3", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    arn = imp["ImportTableDescription"]["ImportArn"]
    done = wait(lambda: ddb.describe_import(ImportArn=arn)["ImportTableDescription"],
                "ImportStatus")
    assert (done["ImportStatus"], done["ImportedItemCount"]) == ("COMPLETED", 250)

    ddb.update_continuous_backups(
        TableName="from_s3",
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    table_arn = ddb.describe_table(TableName="from_s3")["Table"]["TableArn"]
    export = ddb.export_table_to_point_in_time(TableArn=table_arn, S3Bucket="app-data",
                                               S3Prefix="exports")["ExportDescription"]
    finished = wait(lambda: ddb.describe_export(ExportArn=export["ExportArn"])["ExportDescription"],
                    "ExportStatus")
    assert finished["ExportStatus"] == "COMPLETED"
    summary = json.loads(s3.get_object(Bucket="app-data",
                                       Key=finished["ExportManifest"])["Body"].read())
    files = s3.get_object(Bucket="app-data", Key=summary["manifestFilesS3Key"])["Body"].read()
    keys = set()
    for line in files.decode().splitlines():
        entry = json.loads(line)
        obj = s3.get_object(Bucket="app-data", Key=entry["dataFileS3Key"])
        assert obj["ETag"] == '"' + entry["etag"] + '"'  # the export's own checksum
        for item_line in gzip.decompress(obj["Body"].read()).decode().splitlines():
            keys.add(json.loads(item_line)["Item"]["pk"]["S"])
    assert keys == {f"k{i}" for i in range(250)}
    listed = s3.list_objects_v2(Bucket="app-data", Prefix="exports/", Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["exports/AWSDynamoDB/"]


def test_objects_ranges_metadata_and_listing_pages(s3_server):
    s3 = s3_client(s3_server)
    s3.create_bucket(Bucket="objects")
    body = bytes(range(256)) * 4
    put = s3.put_object(Bucket="objects", Key="dir/a b+c.bin", Body=body,
                        ContentType="application/x-test", Metadata={"owner": "tests"})
    head = s3.head_object(Bucket="objects", Key="dir/a b+c.bin")
    assert head["ContentLength"] == 1024 and head["ETag"] == put["ETag"]
    assert head["ContentType"] == "application/x-test" and head["Metadata"] == {"owner": "tests"}
    part = s3.get_object(Bucket="objects", Key="dir/a b+c.bin", Range="bytes=10-19")
    assert part["Body"].read() == body[10:20] and part["ContentRange"] == "bytes 10-19/1024"
    assert error_code(s3.get_object, Bucket="objects", Key="dir/a b+c.bin",
                      Range="bytes=2000-") == "InvalidRange"
    for i in range(5):
        s3.put_object(Bucket="objects", Key=f"many/{i}", Body=b"x")
    pages = s3.get_paginator("list_objects_v2").paginate(
        Bucket="objects", Prefix="many/", PaginationConfig={"PageSize": 2})
    assert [o["Key"] for p in pages for o in p["Contents"]] == [f"many/{i}" for i in range(5)]
    v1 = s3.list_objects(Bucket="objects", Prefix="dir/")
    assert [o["Key"] for o in v1["Contents"]] == ["dir/a b+c.bin"]
    deleted = s3.delete_objects(Bucket="objects", Delete={
        "Objects": [{"Key": f"many/{i}"} for i in range(5)]})
    assert len(deleted["Deleted"]) == 5
    assert "Contents" not in s3.list_objects_v2(Bucket="objects", Prefix="many/")
    assert error_code(s3.delete_bucket, Bucket="objects") == "BucketNotEmpty"
    s3.delete_object(Bucket="objects", Key="dir/a b+c.bin")
    s3.delete_bucket(Bucket="objects")
    assert error_code(s3.head_bucket, Bucket="objects") == "404"
    assert error_code(s3.get_object, Bucket="objects", Key="k") == "NoSuchBucket"
    assert error_code(s3.create_bucket, Bucket="Not_Valid") == "InvalidBucketName"


def test_multipart_upload_of_a_large_file(s3_server, tmp_path):
    s3 = s3_client(s3_server)
    s3.create_bucket(Bucket="large")
    data = os.urandom(13 * 1024 * 1024)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    # 5 MiB parts: three of them, the last short.
    s3.upload_file(str(path), "large", "big.bin",
                   Config=boto3.s3.transfer.TransferConfig(multipart_threshold=5 * 1024 * 1024,
                                                           multipart_chunksize=5 * 1024 * 1024))
    head = s3.head_object(Bucket="large", Key="big.bin")
    assert head["ContentLength"] == len(data) and head["ETag"].endswith('-3"')
    assert s3.get_object(Bucket="large", Key="big.bin")["Body"].read() == data
    upload = s3.create_multipart_upload(Bucket="large", Key="small-parts")
    etag = s3.upload_part(Bucket="large", Key="small-parts", UploadId=upload["UploadId"],
                          PartNumber=1, Body=b"too small")["ETag"]
    last = s3.upload_part(Bucket="large", Key="small-parts", UploadId=upload["UploadId"],
                          PartNumber=2, Body=b"last")["ETag"]
    assert error_code(s3.complete_multipart_upload, Bucket="large", Key="small-parts",
                      UploadId=upload["UploadId"],
                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag},
                                                 {"PartNumber": 2, "ETag": last}]}
                      ) == "EntityTooSmall"
    s3.abort_multipart_upload(Bucket="large", Key="small-parts", UploadId=upload["UploadId"])
    assert error_code(s3.upload_part, Bucket="large", Key="small-parts",
                      UploadId=upload["UploadId"], PartNumber=3, Body=b"x") == "NoSuchUpload"


def test_signatures_are_checked_as_s3_checks_them(s3_server):
    s3 = s3_client(s3_server)
    s3.create_bucket(Bucket="signed")
    s3.put_object(Bucket="signed", Key="k", Body=b"v")
    assert error_code(s3_client(s3_server, secret="wrong").get_object, Bucket="signed",
                      Key="k") == "SignatureDoesNotMatch"
    other = boto3.client("s3", endpoint_url=s3_server.endpoint, region_name=REGION,
                         aws_access_key_id="AKIDUNKNOWN", aws_secret_access_key=SECRET_KEY,
                         config=botocore.config.Config(s3={"addressing_style": "path"}))
    assert error_code(other.list_buckets) == "InvalidAccessKeyId"
    unsigned = requests.get(s3_server.endpoint + "/signed/k", timeout=10)
    assert unsigned.status_code != 200  # not an S3 call: no signature names service s3
    # Presigned URLs (SigV4, UNSIGNED-PAYLOAD), for a download and an upload.
    v4 = s3_client(s3_server, signature_version="s3v4")
    url = v4.generate_presigned_url("get_object", Params={"Bucket": "signed", "Key": "k"})
    assert requests.get(url, timeout=10).content == b"v"
    url = v4.generate_presigned_url("put_object", Params={"Bucket": "signed", "Key": "up"})
    assert requests.put(url, data=b"via url", timeout=10).status_code == 200
    assert s3.get_object(Bucket="signed", Key="up")["Body"].read() == b"via url"
    tampered = url.replace("/up?", "/other?")
    r = requests.put(tampered, data=b"x", timeout=10)
    assert r.status_code == 403 and "<Code>SignatureDoesNotMatch</Code>" in r.text


def test_what_is_not_built_answers_not_implemented(s3_server):
    s3 = s3_client(s3_server)
    s3.create_bucket(Bucket="limits")
    s3.put_object(Bucket="limits", Key="k", Body=b"v")
    assert error_code(s3.copy_object, Bucket="limits", Key="copy",
                      CopySource={"Bucket": "limits", "Key": "k"}) == "NotImplemented"
    assert error_code(s3.put_object_tagging, Bucket="limits", Key="k",
                      Tagging={"TagSet": [{"Key": "a", "Value": "b"}]}) == "NotImplemented"
    assert error_code(s3.get_bucket_versioning, Bucket="limits") == "NotImplemented"
    # Keys a file system cannot hold as files are refused, not altered.
    assert error_code(s3.put_object, Bucket="limits", Key="folder/", Body=b"") == "InvalidArgument"
    assert error_code(s3.put_object, Bucket="limits", Key="a//b", Body=b"") == "InvalidArgument"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="limits")["Contents"]] == ["k"]


def test_dynamodb_calls_are_unchanged_beside_s3(s3_server):
    ddb, s3 = s3_server.client(), s3_client(s3_server)
    assert "TableNames" in ddb.list_tables()
    s3.create_bucket(Bucket="counted")
    s3.put_object(Bucket="counted", Key="k", Body=b"v")
    assert s3.get_object(Bucket="counted", Key="k")["Body"].read() == b"v"
    metrics = requests.get(s3_server.endpoint + "/metrics", timeout=10).json()
    s3_calls = {m["labels"]["operation"]: m["value"] for m in metrics["counters"]
                if m["name"] == "fdyno_s3_requests_total"}
    assert s3_calls.get("PutObject", 0) > 0 and s3_calls.get("GetObject", 0) > 0
