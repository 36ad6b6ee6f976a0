"""A conditional create (attribute_not_exists) whose first attempt committed but answered
InternalServerError ("the transaction outcome may be unknown"): the retry meets
ConditionalCheckFailedException. Reporting that as a failure would be wrong, and so would
treating every condition failure as a success (another writer may own the item): the
application reads the item and compares the operation id it wrote."""
import uuid

import botocore.exceptions

import fdyno_faults
from client import dynamodb, new_table


def create_order(ddb, table, order_id, op_id):
    """'created' when this operation created the order (now or in an attempt whose answer was
    lost), 'taken' when another operation did."""
    item = {"id": {"S": order_id}, "op": {"S": op_id}, "state": {"S": "NEW"}}
    for _ in range(5):
        try:
            ddb.put_item(TableName=table, Item=item,
                         ConditionExpression="attribute_not_exists(id)")
            return "created"
        except botocore.exceptions.ClientError as e:
            code = e.response["Error"]["Code"]
            if code == "InternalServerError":
                continue  # the outcome is unknown: the same request again
            if code != "ConditionalCheckFailedException":
                raise
            current = ddb.get_item(TableName=table, Key={"id": {"S": order_id}},
                                   ConsistentRead=True)["Item"]
            return "created" if current["op"]["S"] == op_id else "taken"
    raise RuntimeError("no answer after 5 attempts")


def main():
    ddb = dynamodb()
    table = new_table(ddb)
    fdyno_faults.set_rules(
        {"name": "ambiguous-create", "operations": ["PutItem"], "tables": [table], "times": 1,
         "action": "unknown-outcome", "committed": True})
    try:
        mine = create_order(ddb, table, "order-1", str(uuid.uuid4()))
        fired = fdyno_faults.counts()["ambiguous-create"][1]
    finally:
        fdyno_faults.clear()
    # Another operation creating the same order finds it taken.
    theirs = create_order(ddb, table, "order-1", str(uuid.uuid4()))
    print(f"first create, answered 'outcome unknown' then retried: {mine}")
    print(f"a second operation creating the same order: {theirs}")
    assert fired == 1
    assert mine == "created" and theirs == "taken"


if __name__ == "__main__":
    main()
