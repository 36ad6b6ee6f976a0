"""An ADD retried after its answer was lost counts twice; the same increment as a
TransactWriteItems with a ClientRequestToken, retried with the same token, counts once.

The fault rule lose-response-after-commit makes fdyno commit the write and then reset the
connection: the client cannot tell whether the write happened, exactly as after a timeout or a
proxy failure in production. Run against fdyno with the fault API reachable (README.md here)."""
import uuid

import botocore.exceptions

import fdyno_faults
from client import dynamodb, new_table

LOST = (botocore.exceptions.ConnectionClosedError, botocore.exceptions.EndpointConnectionError,
        botocore.exceptions.ReadTimeoutError)


def with_retry(send, attempts=5):
    """Calls send() until it answers: the application's own retry loop."""
    for _ in range(attempts):
        try:
            return send()
        except LOST:
            continue
    raise RuntimeError(f"no answer after {attempts} attempts")


def counter(ddb, table, key):
    item = ddb.get_item(TableName=table, Key={"id": {"S": key}}, ConsistentRead=True).get("Item")
    return int(item["n"]["N"]) if item else 0


def increment(key, table):
    return {"TableName": table, "Key": {"id": {"S": key}}, "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}}}


def main():
    ddb = dynamodb()
    table = new_table(ddb)
    fdyno_faults.set_rules(
        {"name": "lose-first-update", "operations": ["UpdateItem"], "tables": [table],
         "times": 1, "action": "lose-response-after-commit", "mode": "reset"},
        {"name": "lose-first-transaction", "operations": ["TransactWriteItems"],
         "tables": [table], "times": 1, "action": "lose-response-after-commit", "mode": "reset"})
    try:
        # 1. A plain UpdateItem ADD, retried after its answer was lost: not idempotent.
        with_retry(lambda: ddb.update_item(**increment("plain", table)))
        plain = counter(ddb, table, "plain")
        # 2. The same increment in a transaction whose token is kept across the retries.
        token = str(uuid.uuid4())
        with_retry(lambda: ddb.transact_write_items(
            ClientRequestToken=token,
            TransactItems=[{"Update": increment("tokened", table)}]))
        tokened = counter(ddb, table, "tokened")
        fired = fdyno_faults.counts()
    finally:
        fdyno_faults.clear()
    print(f"UpdateItem ADD retried after a lost answer: counted {plain} times")
    print(f"TransactWriteItems with a ClientRequestToken, retried: counted {tokened} time(s)")
    assert fired["lose-first-update"][1] == 1 and fired["lose-first-transaction"][1] == 1, fired
    assert plain == 2, "a retried ADD without a token applies twice"
    assert tokened == 1, "a retried transaction with the same token applies once"


if __name__ == "__main__":
    main()
