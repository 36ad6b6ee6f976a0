"""A boto3 DynamoDB client for the examples: FDYNO_ENDPOINT (default http://127.0.0.1:8000), the
AWS_* credentials of the environment or placeholders (fdyno's open mode accepts any)."""
import os
import uuid

import boto3
import botocore.config

ENDPOINT = os.environ.get("FDYNO_ENDPOINT", "http://127.0.0.1:8000")


def dynamodb(**retries):
    """A client; `retries` is botocore's retry configuration (default: none, so that every
    failure reaches the example's own code)."""
    return boto3.client(
        "dynamodb", endpoint_url=ENDPOINT,
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "fdyno-example"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "fdyno-example"),
        config=botocore.config.Config(retries=retries or {"max_attempts": 0, "mode": "standard"},
                                      read_timeout=10))


def new_table(ddb, **kw):
    """A fresh on-demand table keyed by the string "id" (or as `kw` says); its name."""
    name = "example-" + uuid.uuid4().hex[:8]
    args = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    args.update(kw)
    ddb.create_table(**args)
    ddb.get_waiter("table_exists").wait(TableName=name)
    return name
