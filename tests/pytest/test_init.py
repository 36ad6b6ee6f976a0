"""--init DIR: tables created and loaded before the server accepts requests, idempotently, with
errors that name the file and line and nothing left half loaded."""
import json
import subprocess

import pytest

from conftest import ACCESS_KEY, ACCOUNT_ID, FDYNO_BIN, SECRET_KEY, Server, free_port

ORDERS = {
    "TableName": "Orders",
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                             {"AttributeName": "customer", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "BillingMode": "PAY_PER_REQUEST",
    "GlobalSecondaryIndexes": [{"IndexName": "by-customer",
                                "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"}}],
}
ORDER_LINES = [
    '{"Item": {"id": {"S": "o1"}, "customer": {"S": "ann"}, "total": {"N": "12.5"}}}',
    '',
    '{"id": {"S": "o2"}, "customer": {"S": "bob"}, "tags": {"SS": ["a", "b"]}}',
    '{"Item": {"id": {"S": "o3"}, "customer": {"S": "ann"}}}',
]
USERS = {
    "AttributeDefinitions": [{"AttributeName": "user", "AttributeType": "N"}],
    "KeySchema": [{"AttributeName": "user", "KeyType": "HASH"}],
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
}
USERS_CSV = 'user,name,note\n1,Ann,"likes, commas"\n2,Bob,"two\nlines"\n3,Cy,\n'


def write_dir(path, orders_lines=ORDER_LINES, orders=ORDERS):
    path.mkdir(exist_ok=True)
    (path / "Orders.json").write_text(json.dumps(orders))
    (path / "Orders.items.json").write_text("\n".join(orders_lines) + "\n")
    (path / "Users.json").write_text(json.dumps(USERS))
    (path / "Users.csv").write_text(USERS_CSV)
    (path / "README.txt").write_text("not a table")
    return path


def serve(tmp_path, init, extra=()):
    s = Server(tmp_path, (["--init", str(init)] if init else []) + list(extra))
    s.wait_ready()
    return s


def failed_start(tmp_path, init):
    """Runs serve with --init on tmp_path's data directory and Server's key; (exit code,
    output)."""
    keys = tmp_path / "credentials"
    keys.write_text(f"{ACCESS_KEY} {SECRET_KEY} {ACCOUNT_ID}\n")
    r = subprocess.run([FDYNO_BIN, "serve", "--listen", f"127.0.0.1:{free_port()}",
                        "--data-dir", str(tmp_path / "data"), "--credentials", str(keys),
                        "--init", str(init)],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def tags(ddb, table):
    arn = ddb.describe_table(TableName=table)["Table"]["TableArn"]
    return {t["Key"]: t["Value"] for t in ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]}


def test_tables_are_created_and_loaded_before_serving(tmp_path):
    s = serve(tmp_path, write_dir(tmp_path / "init"))
    try:
        ddb = s.client()
        assert sorted(ddb.list_tables()["TableNames"]) == ["Orders", "Users"]
        o2 = ddb.get_item(TableName="Orders", Key={"id": {"S": "o2"}})["Item"]
        assert o2["tags"] == {"SS": ["a", "b"]}
        ann = ddb.query(TableName="Orders", IndexName="by-customer",
                        KeyConditionExpression="customer = :c",
                        ExpressionAttributeValues={":c": {"S": "ann"}})
        assert sorted(i["id"]["S"] for i in ann["Items"]) == ["o1", "o3"]
        users = {i["user"]["N"]: i for i in ddb.scan(TableName="Users")["Items"]}
        assert users["1"]["note"] == {"S": "likes, commas"}
        assert users["2"]["note"] == {"S": "two\nlines"}
        assert "note" not in users["3"]  # an empty cell is no attribute
        assert ddb.describe_table(TableName="Users")["Table"]["ProvisionedThroughput"][
            "WriteCapacityUnits"] == 5
        assert tags(ddb, "Orders") == {"fdyno:init": "complete"}
        assert "--init: table Orders created with 3 item(s)" in s.output()
    finally:
        s.stop()


def test_a_rerun_leaves_existing_tables_alone(tmp_path):
    init = write_dir(tmp_path / "init")
    s = serve(tmp_path, init)
    ddb = s.client()
    ddb.put_item(TableName="Orders", Item={"id": {"S": "o1"}, "customer": {"S": "zed"}})
    ddb.delete_item(TableName="Orders", Key={"id": {"S": "o3"}})
    s.stop()
    s = serve(tmp_path, init)
    try:
        ddb = s.client()
        assert ddb.get_item(TableName="Orders", Key={"id": {"S": "o1"}})["Item"]["customer"] == \
            {"S": "zed"}
        assert "Item" not in ddb.get_item(TableName="Orders", Key={"id": {"S": "o3"}})
        assert "left alone" in s.output()
    finally:
        s.stop()


def test_a_conflicting_definition_is_an_error_naming_the_difference(tmp_path):
    init = write_dir(tmp_path / "init")
    serve(tmp_path, init).stop()
    changed = dict(ORDERS, KeySchema=[{"AttributeName": "customer", "KeyType": "HASH"}],
                   GlobalSecondaryIndexes=[{
                       "IndexName": "by-id", "KeySchema": [{"AttributeName": "id",
                                                            "KeyType": "HASH"}],
                       "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    (init / "Orders.json").write_text(json.dumps(changed))
    code, out = failed_start(tmp_path, init)
    assert code == 2, out
    assert "table Orders exists and differs from" in out
    assert 'KeySchema is ["id" "HASH"] in the table, ["customer" "HASH"] in the file' in out


def test_a_bad_line_names_file_and_line_and_nothing_is_created(tmp_path):
    lines = list(ORDER_LINES)
    lines[2] = '{"id": {"S": "o2"}, "customer": {"S": "bob"'  # line 3: cut short
    init = write_dir(tmp_path / "init", lines)
    code, out = failed_start(tmp_path, init)
    assert code == 2, out
    assert "Orders.items.json:3:" in out
    s = serve(tmp_path, None)
    try:
        assert s.client().list_tables()["TableNames"] == []  # not even Users
    finally:
        s.stop()


def test_an_item_without_its_key_is_named(tmp_path):
    lines = list(ORDER_LINES) + ['{"customer": {"S": "nokey"}}']
    code, out = failed_start(tmp_path, write_dir(tmp_path / "init", lines))
    assert code == 2
    assert "Orders.items.json:5: the item has no key attribute id" in out


def test_tables_belong_to_the_first_keys_account(tmp_path):
    s = serve(tmp_path, write_dir(tmp_path / "init"))
    try:
        arn = s.client().describe_table(TableName="Users")["Table"]["TableArn"]
        assert f":{ACCOUNT_ID}:table/Users" in arn
    finally:
        s.stop()


def test_an_item_dynamodb_refuses_drops_the_table_it_was_loading(tmp_path):
    lines = list(ORDER_LINES) + [json.dumps({"id": {"S": "big"}, "customer": {"S": "x"},
                                             "blob": {"S": "x" * 410_000}})]
    init = write_dir(tmp_path / "init", lines)
    code, out = failed_start(tmp_path, init)
    assert code == 2, out
    assert "Orders.items.json:5: Item size has exceeded the maximum allowed size" in out
    s = serve(tmp_path, None)
    try:
        assert "Orders" not in s.client().list_tables()["TableNames"]
    finally:
        s.stop()


def test_a_table_left_half_loaded_is_loaded_again(tmp_path):
    init = write_dir(tmp_path / "init")
    s = serve(tmp_path, None)
    ddb = s.client()
    # What a start that stopped in the middle of loading leaves.
    ddb.create_table(**ORDERS, Tags=[{"Key": "fdyno:init", "Value": "loading"}])
    ddb.put_item(TableName="Orders", Item={"id": {"S": "stray"}, "customer": {"S": "x"}})
    s.stop()
    s = serve(tmp_path, init)
    try:
        ddb = s.client()
        ids = sorted(i["id"]["S"] for i in ddb.scan(TableName="Orders")["Items"])
        assert ids == ["o1", "o2", "o3"]
        assert tags(ddb, "Orders") == {"fdyno:init": "complete"}
    finally:
        s.stop()


def test_the_table_name_must_match_the_file(tmp_path):
    init = write_dir(tmp_path / "init", orders=dict(ORDERS, TableName="Other"))
    code, out = failed_start(tmp_path, init)
    assert code == 2
    assert "its TableName must be Orders, the file's name" in out


def test_an_invalid_create_table_request_names_the_file(tmp_path):
    init = write_dir(tmp_path / "init", orders=dict(ORDERS, BillingMode="FREE"))
    code, out = failed_start(tmp_path, init)
    assert code == 2
    assert "Orders.json: 1 validation error detected" in out


@pytest.mark.parametrize("env", [True, False])
def test_env_variable_and_flag(tmp_path, env):
    init = write_dir(tmp_path / "init")
    if env:
        s = Server(tmp_path, [], env={"DYNODB_INIT": str(init)})
        s.wait_ready()
    else:
        s = serve(tmp_path, init)
    try:
        assert "Users" in s.client().list_tables()["TableNames"]
    finally:
        s.stop()
