"""BatchWriteItem under --enforce-capacity: a provisioned table of 5 write capacity units
writes what its capacity allows and returns the rest as UnprocessedItems; the application
sends only those again, backing off, until none is left. Needs fdyno started with
--enforce-capacity."""
import time

import botocore.exceptions

from client import dynamodb, new_table

ITEMS = 30


def write_all(ddb, table, requests):
    """Writes `requests` (at most 25 at a time), retrying UnprocessedItems with exponential
    backoff; returns how many rounds left something unprocessed."""
    partial_rounds = 0
    pending = list(requests)
    delay = 0.05
    while pending:
        chunk, pending = pending[:25], pending[25:]
        while chunk:
            try:
                left = ddb.batch_write_item(RequestItems={table: chunk})["UnprocessedItems"]
                chunk = left.get(table, [])
            except botocore.exceptions.ClientError as e:
                # Nothing of the chunk could be written: all of it is left.
                if e.response["Error"]["Code"] != "ProvisionedThroughputExceededException":
                    raise
            if chunk:
                partial_rounds += 1
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
            else:
                delay = 0.05
    return partial_rounds


def main():
    ddb = dynamodb()
    table = new_table(ddb, BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 5})
    requests = [{"PutRequest": {"Item": {"id": {"S": f"item-{i}"}, "body": {"S": "x" * 900}}}}
                for i in range(ITEMS)]
    start = time.monotonic()
    partial_rounds = write_all(ddb, table, requests)
    seconds = time.monotonic() - start
    stored = ddb.scan(TableName=table, Select="COUNT", ConsistentRead=True)["Count"]
    print(f"{ITEMS} items of 1 KB at 5 WCU: {seconds:.1f} s, {partial_rounds} rounds with "
          f"UnprocessedItems, {stored} stored")
    assert partial_rounds > 0, "no UnprocessedItems: is fdyno running with --enforce-capacity?"
    assert stored == ITEMS


if __name__ == "__main__":
    main()
