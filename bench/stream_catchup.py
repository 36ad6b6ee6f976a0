#!/usr/bin/env python3
"""stream_catchup.py ENDPOINT TABLE [RECORDS]: a consumer catching up on a table's stream.

Reads the table's latest stream from TRIM_HORIZON with GetRecords (Limit 1000), shard after
shard, over one keep-alive HTTP connection with Python's C JSON parser (boto3's own parsing would
measure Python more than the server), until it has RECORDS records or the shards end, and prints
records/s, pages/s and the server time per page. The server must run in open mode (any
well-formed signature is accepted): requests carry a fixed one.
"""
import http.client
import json
import sys
import time
import urllib.parse

endpoint, table = sys.argv[1], sys.argv[2]
want = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
url = urllib.parse.urlparse(endpoint)
conn = http.client.HTTPConnection(url.hostname, url.port)
AUTH = ("AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host;x-amz-date;x-amz-target, Signature=" + "0" * 64)


def call(target, body):
    conn.request("POST", "/", json.dumps(body), {
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target,
        "X-Amz-Date": "20260101T000000Z", "Authorization": AUTH})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"{target}: {r.status} {data[:300]!r}")
    return json.loads(data)


arn = call("DynamoDB_20120810.DescribeTable", {"TableName": table})["Table"]["LatestStreamArn"]
shards = call("DynamoDBStreams_20120810.DescribeStream", {"StreamArn": arn})
shards = shards["StreamDescription"]["Shards"]
records = pages = 0
server_s = 0.0
start = time.perf_counter()
for shard in shards:
    it = call("DynamoDBStreams_20120810.GetShardIterator",
              {"StreamArn": arn, "ShardId": shard["ShardId"],
               "ShardIteratorType": "TRIM_HORIZON"})["ShardIterator"]
    while it and records < want:
        t0 = time.perf_counter()
        page = call("DynamoDBStreams_20120810.GetRecords", {"ShardIterator": it, "Limit": 1000})
        server_s += time.perf_counter() - t0
        pages += 1
        records += len(page["Records"])
        if not page["Records"]:
            break
        it = page.get("NextShardIterator")
elapsed = time.perf_counter() - start
print(f"records {records}  pages {pages}  {records / elapsed:,.0f} records/s  "
      f"{pages / elapsed:.1f} pages/s  {1000 * server_s / max(pages, 1):.1f} ms per page "
      f"(request to parsed response)")
