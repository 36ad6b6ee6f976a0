"""Resource-based policies: PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy and
CreateTable's ResourcePolicy as DynamoDB answers them, and their enforcement with --credentials:
another account reaches a table only when its policy allows, an explicit Deny refuses anyone.

Debian's boto3 predates these operations, so the requests are signed by hand (signing.call). The
documents and resource ARNs DynamoDB refuses are in cases/policies.txt."""
import json
import uuid

import pytest

from conftest import Server
from signing import call

OWNER = ("AKIDOWNER0000000001", "owner-secret", "111111111111")
OTHER = ("AKIDOTHER0000000001", "other-secret", "222222222222")
REGION = "us-east-1"


@pytest.fixture(scope="module")
def ps(tmp_path_factory):
    d = tmp_path_factory.mktemp("policies")
    creds = d / "creds"
    creds.write_text("".join(f"{k} {s} {a}\n" for k, s, a in (OWNER, OTHER)))
    s = Server(d, ["--credentials", str(creds), "--policy-update-interval", "0"],
               credentials=False)
    s.wait_ready()
    yield s
    s.stop()


def api(server, who, operation, body):
    r = call(server, operation, json.dumps(body), access_key=who[0], secret_key=who[1])
    return r.status_code, r.json()


def arn(table, account=OWNER[2]):
    return f"arn:aws:dynamodb:{REGION}:{account}:table/{table}"


def new_table(server, who=OWNER, **extra):
    name = "rp" + uuid.uuid4().hex[:10]
    status, body = api(server, who, "CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], **extra})
    assert status == 200, body
    return name


def statement(effect, principal, actions, resource, **extra):
    return {"Effect": effect, "Principal": principal, "Action": actions, "Resource": resource,
            **extra}


def policy(*statements, version="2012-10-17"):
    doc = {"Statement": list(statements)}
    if version:
        doc = {"Version": version, **doc}
    return json.dumps(doc)


def put(server, table, document, who=OWNER, account=OWNER[2], **extra):
    return api(server, who, "PutResourcePolicy",
               {"ResourceArn": arn(table, account), "Policy": document, **extra})


def error(result):
    status, body = result
    assert status == 400, body
    return body["__type"].split("#")[-1], body.get("message", body.get("Message"))


def test_lifecycle_canonical_form_and_revisions(ps):
    t = new_table(ps)
    assert error(api(ps, OWNER, "GetResourcePolicy", {"ResourceArn": arn(t)})) == (
        "PolicyNotFoundException",
        f"Resource-based policy not found for the provided ResourceArn: {arn(t)}")
    # Deleting a policy that never existed: an empty answer.
    assert api(ps, OWNER, "DeleteResourcePolicy", {"ResourceArn": arn(t)}) == (200, {})
    sent = json.dumps({"Statement": {"Effect": "allow", "Action": ["dynamodb:GetItem"],
                                     "Principal": {"AWS": [OTHER[2], f"arn:aws:iam::{OTHER[2]}:root"]},
                                     "Resource": [arn(t)], "Sid": "read"}}, indent=2)
    status, body = put(ps, t, sent)
    assert status == 200
    revision = body["RevisionId"]
    assert revision.isdigit() and len(revision) == 13
    status, got = api(ps, OWNER, "GetResourcePolicy", {"ResourceArn": arn(t)})
    assert got == {"RevisionId": revision, "Policy": (
        '{"Version":"2008-10-17","Statement":[{"Sid":"read","Effect":"Allow","Principal":'
        f'{{"AWS":"arn:aws:iam::{OTHER[2]}:root"}},"Action":"dynamodb:GetItem",'
        f'"Resource":"{arn(t)}"}}]}}')}
    # The same document again changes nothing.
    assert put(ps, t, sent) == (200, {"RevisionId": revision})
    # ExpectedRevisionId must be the current one.
    code, message = error(put(ps, t, policy(statement("Deny", {"AWS": OTHER[2]}, "dynamodb:*", "*")),
                              ExpectedRevisionId="123"))
    assert code == "PolicyNotFoundException" and "revision id 123" in message
    status, body = put(ps, t, policy(statement("Deny", {"AWS": OTHER[2]}, "dynamodb:*", "*")),
                       ExpectedRevisionId=revision)
    assert status == 200 and body["RevisionId"] > revision
    second = body["RevisionId"]
    assert api(ps, OWNER, "DeleteResourcePolicy", {"ResourceArn": arn(t)}) == \
        (200, {"RevisionId": second})
    assert error(api(ps, OWNER, "GetResourcePolicy", {"ResourceArn": arn(t)}))[0] == \
        "PolicyNotFoundException"
    # NO_POLICY: attach only when none is attached.
    assert put(ps, t, sent, ExpectedRevisionId="NO_POLICY")[0] == 200
    assert error(put(ps, t, policy(statement("Deny", {"AWS": OTHER[2]}, "dynamodb:*", "*")),
                     ExpectedRevisionId="NO_POLICY"))[0] == "PolicyNotFoundException"


def test_a_document_over_20480_bytes_is_refused(ps):
    # The other documents DynamoDB refuses, and the resource ARNs it refuses, are in
    # cases/policies.txt; this request is a 20 KB line.
    t = new_table(ps)
    assert error(put(ps, t, " " * 20481)) == (
        "ValidationException",
        "One or more parameter values were invalid: Maximum policy size of 20480 bytes exceeded")


def test_create_table_with_a_policy(ps):
    doc = policy(statement("Allow", {"AWS": OTHER[2]}, "dynamodb:GetItem", "*"))
    t = new_table(ps, ResourcePolicy=doc)
    status, got = api(ps, OWNER, "GetResourcePolicy", {"ResourceArn": arn(t)})
    assert status == 200 and json.loads(got["Policy"])["Statement"][0]["Action"] == \
        "dynamodb:GetItem"
    code, _ = error(api(ps, OWNER, "CreateTable", {
        "TableName": "rp-bad", "BillingMode": "PAY_PER_REQUEST", "ResourcePolicy": "{",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}))
    assert code == "ValidationException"
    assert error(api(ps, OWNER, "DescribeTable", {"TableName": "rp-bad"}))[0] == \
        "ResourceNotFoundException"


def test_another_account_needs_an_allow_and_a_deny_wins(ps):
    t = new_table(ps)
    api(ps, OWNER, "PutItem", {"TableName": t, "Item": {"pk": {"S": "k"}, "v": {"N": "1"}}})
    get = {"TableName": arn(t), "Key": {"pk": {"S": "k"}}}
    assert error(api(ps, OTHER, "GetItem", get)) == (
        "AccessDeniedException",
        f"User: arn:aws:iam::{OTHER[2]}:root is not authorized to perform: dynamodb:GetItem on "
        f"resource: {arn(t)} because no resource-based policy allows the dynamodb:GetItem action")
    # By name, the other account has no such table of its own.
    assert error(api(ps, OTHER, "GetItem", {"TableName": t, "Key": {"pk": {"S": "k"}}}))[0] == \
        "ResourceNotFoundException"
    assert put(ps, t, policy(
        statement("Allow", {"AWS": OTHER[2]}, ["dynamodb:GetItem", "dynamodb:Query"], arn(t)),
        statement("Deny", {"AWS": OTHER[2]}, "dynamodb:PutItem", "*")))[0] == 200
    status, body = api(ps, OTHER, "GetItem", get)
    assert status == 200 and body["Item"]["v"] == {"N": "1"}
    status, body = api(ps, OTHER, "Query", {
        "TableName": arn(t), "KeyConditionExpression": "pk = :k",
        "ExpressionAttributeValues": {":k": {"S": "k"}}})
    assert status == 200 and body["Count"] == 1
    code, message = error(api(ps, OTHER, "PutItem", {"TableName": arn(t),
                                                     "Item": {"pk": {"S": "x"}}}))
    assert code == "AccessDeniedException" and message.endswith(
        "with an explicit deny in a resource-based policy")
    code, message = error(api(ps, OTHER, "DeleteItem", {"TableName": arn(t),
                                                        "Key": {"pk": {"S": "k"}}}))
    assert code == "AccessDeniedException" and "no resource-based policy allows" in message
    # A Deny that names everyone refuses the owner too; an Allow that also matches loses.
    assert put(ps, t, policy(
        statement("Allow", {"AWS": OWNER[2]}, "dynamodb:*", "*"),
        statement("Deny", "*", "dynamodb:DeleteItem", arn(t))))[0] == 200
    assert error(api(ps, OWNER, "DeleteItem", {"TableName": t, "Key": {"pk": {"S": "k"}}}))[0] \
        == "AccessDeniedException"
    assert api(ps, OWNER, "GetItem", {"TableName": t, "Key": {"pk": {"S": "k"}}})[0] == 200


def test_leading_keys_condition(ps):
    t = new_table(ps)
    for k in ("mine", "theirs"):
        api(ps, OWNER, "PutItem", {"TableName": t, "Item": {"pk": {"S": k}}})
    assert put(ps, t, policy(statement(
        "Allow", {"AWS": OTHER[2]}, ["dynamodb:GetItem", "dynamodb:BatchGetItem"], arn(t),
        Condition={"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["mine"]}})))[0] == 200
    assert api(ps, OTHER, "GetItem", {"TableName": arn(t), "Key": {"pk": {"S": "mine"}}})[0] == 200
    assert error(api(ps, OTHER, "GetItem", {"TableName": arn(t),
                                            "Key": {"pk": {"S": "theirs"}}}))[0] == \
        "AccessDeniedException"
    batch = {"RequestItems": {arn(t): {"Keys": [{"pk": {"S": "mine"}}, {"pk": {"S": "theirs"}}]}}}
    assert error(api(ps, OTHER, "BatchGetItem", batch))[0] == "AccessDeniedException"


def test_a_policy_that_locks_the_caller_out_needs_confirmation(ps):
    t = new_table(ps)
    lockout = policy(statement("Deny", "*", "dynamodb:PutResourcePolicy", arn(t)))
    assert error(put(ps, t, lockout)) == (
        "AccessDeniedException",
        "The new resource policy will not allow you to update the resource policy in the future.")
    assert put(ps, t, lockout, ConfirmRemoveSelfResourceAccess=True)[0] == 200
    code, message = error(put(ps, t, policy(statement("Deny", "*", "dynamodb:GetItem", "*")),
                              ConfirmRemoveSelfResourceAccess=True))
    assert code == "AccessDeniedException" and "dynamodb:PutResourcePolicy" in message
    assert api(ps, OWNER, "GetResourcePolicy", {"ResourceArn": arn(t)})[0] == 200


def test_changes_within_the_interval_are_throttled(start_server):
    """Open mode: policies are kept and checked there too (one account, not enforced)."""
    s = start_server(credentials=False)
    t = new_table(s)
    own = "000000000001"
    first = policy(statement("Deny", {"AWS": OTHER[2]}, "dynamodb:GetItem", "*"))
    status, body = put(s, t, first, account=own)
    assert status == 200
    code, message = error(put(s, t, policy(statement("Deny", {"AWS": OTHER[2]},
                                                      "dynamodb:PutItem", "*")), account=own))
    assert code == "ThrottlingException"
    assert message.startswith(f"Resource-based policy for table {t} modified within the previous "
                              "15000 milliseconds. Please try again after ")
    # The same document is not a change.
    assert put(s, t, first, account=own) == (200, body)
    assert error(api(s, OWNER, "DeleteResourcePolicy", {"ResourceArn": arn(t, own)}))[0] == \
        "ThrottlingException"
