"""fdyno started as DynamoDB Local is (`-jar DynamoDBLocal.jar -sharedDb -inMemory`, as the
amazon/dynamodb-local image and Testcontainers start it): it serves the AWS CLI on every
interface; without -sharedDb each access key and region has its own tables;
-delayTransientStatuses holds an online index's CREATING and DELETING as DynamoDB Local does;
options fdyno cannot honour, or that DynamoDB Local refuses, stop it with the reason."""
import json
import os
import subprocess
import time

import boto3
import botocore.config
import pytest
import requests

from conftest import FDYNO_BIN, free_port

AWS = "/usr/bin/aws"  # Debian's awscli (scripts/setup.sh)


class Local:
    def __init__(self, tmp_path, *args):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = open(tmp_path / f"local-{self.port}.log", "w+")
        self.proc = subprocess.Popen([FDYNO_BIN, *args, "-port", str(self.port)], cwd=tmp_path,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(300):
            try:
                if requests.get(self.endpoint, timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.05)
        raise RuntimeError("did not start")

    def client(self, key="fake", region="us-east-1"):
        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name=region,
                            aws_access_key_id=key, aws_secret_access_key="fake",
                            config=botocore.config.Config(retries={"max_attempts": 0}))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


@pytest.fixture
def local(tmp_path):
    started = []

    def start(*args):
        s = Local(tmp_path, *args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def make_table(ddb, name="Tab"):
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])


@pytest.mark.skipif(not os.path.exists(AWS), reason="Debian's awscli not installed")
def test_testcontainers_command_answers_the_aws_cli(local):
    s = local("-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
              "-sharedDb", "-inMemory")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y",
               AWS_DEFAULT_REGION="us-west-2")
    aws = [AWS, "dynamodb", "--endpoint-url", s.endpoint, "--output", "json"]
    subprocess.run(aws + ["create-table", "--table-name", "cli", "--billing-mode",
                          "PAY_PER_REQUEST", "--attribute-definitions",
                          "AttributeName=id,AttributeType=S", "--key-schema",
                          "AttributeName=id,KeyType=HASH"], env=env, check=True,
                   capture_output=True)
    subprocess.run(aws + ["put-item", "--table-name", "cli", "--item", '{"id": {"S": "a"}}'],
                   env=env, check=True, capture_output=True)
    out = subprocess.run(aws + ["scan", "--table-name", "cli"], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out)["Items"] == [{"id": {"S": "a"}}]
    # -sharedDb: another key in another region sees the same table.
    assert s.client(key="other", region="eu-west-1").list_tables()["TableNames"] == ["cli"]


def test_without_shared_db_each_key_and_region_has_its_tables(local):
    s = local("-jar", "DynamoDBLocal.jar", "-inMemory")
    a, b, a_west = s.client("alice"), s.client("bob"), s.client("alice", "us-west-2")
    make_table(a)
    assert a.list_tables()["TableNames"] == ["Tab"]
    assert b.list_tables()["TableNames"] == []
    assert a_west.list_tables()["TableNames"] == []
    make_table(b)  # the same name: another table
    a.put_item(TableName="Tab", Item={"id": {"S": "alice's"}})
    assert b.scan(TableName="Tab")["Items"] == []
    arn = a_west.create_table(
        TableName="West", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])["TableDescription"]["TableArn"]
    assert arn.startswith("arn:aws:dynamodb:us-west-2:")


def test_db_path_keeps_the_data(local, tmp_path):
    db = tmp_path / "db"
    s = local("-jar", "DynamoDBLocal.jar", "-sharedDb", "-dbPath", str(db))
    make_table(s.client())
    s.client().put_item(TableName="Tab", Item={"id": {"S": "kept"}})
    s.stop()
    s = local("-sharedDb", "-dbPath", str(db), "-optimizeDbBeforeStartup", "-disableTelemetry")
    assert s.client().get_item(TableName="Tab", Key={"id": {"S": "kept"}})["Item"]


def test_cors_is_open_by_default_as_dynamodb_local(local):
    s = local("-jar", "DynamoDBLocal.jar", "-inMemory")
    r = requests.options(s.endpoint, headers={"Origin": "http://app.example",
                                              "Access-Control-Request-Method": "POST"})
    assert r.headers.get("Access-Control-Allow-Origin") in ("*", "http://app.example")


def run(*args):
    return subprocess.run([FDYNO_BIN, *args], capture_output=True, text=True, timeout=30)


def test_help_and_refusals():
    r = run("-jar", "DynamoDBLocal.jar", "-help")
    assert r.returncode == 0 and "-sharedDb" in r.stdout
    for args, message in [
        (["-jar", "DynamoDBLocal.jar", "-inMemory", "-dbPath", "/tmp"],
         "You cannot specify both -dbPath and -inMemory"),
        (["-jar", "DynamoDBLocal.jar", "-optimizeDbBeforeStartup"],
         "-optimizeDbBeforeStartup needs -dbPath"),
        (["-inMemory", "-colour"], "unknown option -colour"),
        (["-inMemory", "-port", "http"], "-port must be a port number"),
    ]:
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)


def _index_status(ddb, name="Tab"):
    """The status of index "by_v", or None once it is gone."""
    for index in ddb.describe_table(TableName=name)["Table"].get("GlobalSecondaryIndexes", []):
        if index["IndexName"] == "by_v":
            return index["IndexStatus"]
    return None


def _status_for(ddb, status, limit_s=30):
    """Seconds index "by_v" keeps `status` (it must have it now), polled every 0.1 s."""
    start = time.monotonic()
    assert _index_status(ddb) == status
    while _index_status(ddb) == status:
        assert time.monotonic() - start < limit_s, f"still {status} after {limit_s} s"
        time.sleep(0.1)
    return time.monotonic() - start


@pytest.mark.parametrize("delay", [False, True], ids=["without", "with"])
def test_delay_transient_statuses_holds_an_online_indexs_creating_and_deleting(local, delay):
    s = local("-jar", "DynamoDBLocal.jar", "-sharedDb", "-inMemory",
              *(["-delayTransientStatuses"] if delay else []))
    ddb = s.client()
    make_table(ddb)
    ddb.put_item(TableName="Tab", Item={"id": {"S": "a"}, "v": {"S": "x"}})
    ddb.update_table(
        TableName="Tab", AttributeDefinitions=[{"AttributeName": "v", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by_v", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    if delay:
        held = _status_for(ddb, "CREATING")
        print(f"CREATING for {held:.1f} s")
        assert held >= 4.5
    else:
        deadline = time.monotonic() + 10
        while _index_status(ddb) != "ACTIVE" and time.monotonic() < deadline:
            time.sleep(0.05)
    assert _index_status(ddb) == "ACTIVE"
    assert ddb.query(TableName="Tab", IndexName="by_v", KeyConditionExpression="v = :x",
                     ExpressionAttributeValues={":x": {"S": "x"}})["Count"] == 1
    ddb.update_table(TableName="Tab",
                     GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_v"}}])
    if delay:
        held = _status_for(ddb, "DELETING")
        print(f"DELETING for {held:.1f} s")
        assert held >= 4.5
    deadline = time.monotonic() + 10
    while _index_status(ddb) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _index_status(ddb) is None
