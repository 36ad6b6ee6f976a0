"""The browser console (GET /console/): where it is served, what the admin listener lets its page
call, and the page itself driven in Debian's Chromium by playwright-core (console/drive.mjs):
sign in, create a table, add, edit and delete items, query, PartiQL, a stream's records, a chart
that updates. The data the page wrote is then checked with boto3. fdyno-specific.

The browser tests need FDYNO_PLAYWRIGHT, a node_modules directory holding playwright-core
(scripts/console_browser.sh installs it; CI sets it), and /usr/bin/chromium; without
FDYNO_PLAYWRIGHT they are skipped, with it they fail when the browser is missing."""
import os
import shutil
import subprocess

import boto3
import botocore.config
import botocore.exceptions
import pytest
import requests

from conftest import ACCESS_KEY, REGION, SECRET_KEY, free_port

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "console", "drive.mjs")
PLAYWRIGHT = os.environ.get("FDYNO_PLAYWRIGHT")
needs_browser = pytest.mark.skipif(not PLAYWRIGHT, reason="FDYNO_PLAYWRIGHT is not set")


def _client(endpoint, secret=SECRET_KEY):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=secret,
                        config=botocore.config.Config(retries={"max_attempts": 0}))


def _with_admin(start_server, *args, credentials=True):
    admin = free_port()
    server = start_server("--admin-listen", f"127.0.0.1:{admin}", *args, credentials=credentials)
    return server, f"http://127.0.0.1:{admin}"


def _drive(console_url, tmp_path, key=None):
    chromium = shutil.which("chromium")
    assert chromium, "FDYNO_PLAYWRIGHT is set but Debian's chromium is not installed"
    env = dict(os.environ, CONSOLE_URL=console_url, CHROMIUM=chromium,
               FDYNO_PLAYWRIGHT=PLAYWRIGHT, SCREENSHOTS=str(tmp_path))
    if key:
        env.update(CONSOLE_KEY=key[0], CONSOLE_SECRET=key[1])
    run = subprocess.run(["node", DRIVER], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    assert "all steps passed" in run.stdout, run.stdout


def _check_what_the_page_wrote(ddb):
    """What drive.mjs did, as the server holds it: the edited item exactly, the deleted one gone,
    the table as the page created it."""
    item = ddb.get_item(TableName="ConsoleOrders", Key={"pk": {"S": "o1"}, "sk": {"S": "a"}},
                        ConsistentRead=True).get("Item")
    assert item == {"pk": {"S": "o1"}, "sk": {"S": "a"}, "status": {"S": "shipped"},
                    "total": {"N": "15.5"}, "tags": {"SS": ["gift", "red"]}}
    assert "Item" not in ddb.get_item(TableName="ConsoleOrders",
                                      Key={"pk": {"S": "o2"}, "sk": {"S": "b"}},
                                      ConsistentRead=True)
    table = ddb.describe_table(TableName="ConsoleOrders")["Table"]
    assert table["StreamSpecification"] == {"StreamEnabled": True,
                                            "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert ddb.scan(TableName="ConsoleOrders")["Count"] == 1


@needs_browser
def test_the_console_on_the_admin_listener_signs_in_and_works(start_server, tmp_path):
    server, admin = _with_admin(start_server)
    _drive(admin + "/console/", tmp_path, key=(ACCESS_KEY, SECRET_KEY))
    _check_what_the_page_wrote(server.client())


@needs_browser
def test_the_console_in_open_mode_on_loopback_needs_no_sign_in(start_server, tmp_path):
    server = start_server(credentials=False)
    _drive(server.endpoint + "/console", tmp_path)
    _check_what_the_page_wrote(server.client())


def test_where_the_console_is_served(start_server):
    # The data listener in open mode on loopback, with no admin listener: served.
    open_loopback = start_server(credentials=False)
    r = requests.get(open_loopback.endpoint + "/console/", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert requests.get(open_loopback.endpoint + "/console/console.js",
                        timeout=10).headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert requests.get(open_loopback.endpoint + "/console/config.json", timeout=10).json() == {
        "region": REGION, "signIn": False, "apiPath": "/console/api", "metrics": True}
    assert requests.get(open_loopback.endpoint + "/console/nothing.js",
                        timeout=10).status_code == 404
    # With --credentials, or listening beyond loopback: not on the data listener.
    signed = start_server()
    assert requests.get(signed.endpoint + "/console/", timeout=10).status_code == 404
    everywhere = start_server("--allow-anonymous", credentials=False, listen_host="0.0.0.0")
    assert requests.get(everywhere.endpoint + "/console/", timeout=10).status_code == 404
    # With an admin listener: there, and no longer on the data listener.
    server, admin = _with_admin(start_server, credentials=False)
    assert requests.get(server.endpoint + "/console/", timeout=10).status_code == 404
    assert requests.get(admin + "/console/", timeout=10).status_code == 200
    assert requests.get(admin + "/console/config.json", timeout=10).json()["metrics"] is True


def test_the_admin_listener_takes_api_calls_only_from_the_console_path(start_server):
    server, admin = _with_admin(start_server)
    assert requests.get(admin + "/console/config.json", timeout=10).json()["signIn"] is True
    # A signed call at /console/api is a DynamoDB call, checked like one on the data listener.
    console = _client(admin + "/console/api")
    console.create_table(TableName="from-console", BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
    assert "from-console" in server.client().list_tables()["TableNames"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        _client(admin + "/console/api", secret="wrong").list_tables()
    assert e.value.response["Error"]["Code"] == "InvalidSignatureException"
    # Anywhere else on the admin listener a POST is not an API call.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        _client(admin + "/").list_tables()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
