"""The SDK's own retry policy meeting throttling: boto3's standard mode retries
ProvisionedThroughputExceededException with backoff, so a write throttled twice succeeds on its
third attempt, and the response says how many retries it took. A client without retries sees
the error itself, and nothing was written."""
import botocore.exceptions

import fdyno_faults
from client import dynamodb, new_table


def main():
    plain = dynamodb()
    table = new_table(plain)
    retrying = dynamodb(max_attempts=3, mode="standard")
    fdyno_faults.set_rules(
        {"name": "throttle-twice", "operations": ["PutItem"], "tables": [table], "times": 2,
         "action": "throttle", "error": "ProvisionedThroughputExceededException"})
    try:
        answer = retrying.put_item(TableName=table, Item={"id": {"S": "a"}})
        fired = fdyno_faults.counts()["throttle-twice"][1]
        fdyno_faults.set_rules(
            {"name": "throttle-once", "operations": ["PutItem"], "tables": [table], "times": 1,
             "action": "throttle", "error": "ProvisionedThroughputExceededException"})
        try:
            plain.put_item(TableName=table, Item={"id": {"S": "b"}})
            raise AssertionError("a client without retries must see the throttle")
        except botocore.exceptions.ClientError as e:
            code = e.response["Error"]["Code"]
    finally:
        fdyno_faults.clear()
    retries = answer["ResponseMetadata"]["RetryAttempts"]
    print(f"throttled {fired} times, succeeded after {retries} retries; without retries: {code}")
    assert fired == 2 and retries == 2
    assert code == "ProvisionedThroughputExceededException"
    assert not plain.get_item(TableName=table, Key={"id": {"S": "b"}}).get("Item")


if __name__ == "__main__":
    main()
