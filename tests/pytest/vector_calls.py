"""Raw signed calls for the vector index tests (botocore predates vector indexes and
SearchVectors), and the brute-force reference a search is compared with."""
import json
import math
import time

from signing import call, error_message, error_type


def op(server, operation, body):
    r = call(server, operation, json.dumps(body))
    return r.status_code, r.json()


def ok(server, operation, body):
    status, out = op(server, operation, body)
    assert status == 200, out
    return out


def err(server, operation, body):
    r = call(server, operation, json.dumps(body))
    assert r.status_code == 400, r.text
    return error_type(r), error_message(r)


def number(v):
    """v as DynamoDB returns it (3.0 is "3")."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def vec(values):
    return {"L": [{"N": number(v)} for v in values]}


def vindex(name="vix", dims=3, distance="COSINE", schema=None, projection=None, attribute="v"):
    out = {"IndexName": name, "VectorAttribute": {"AttributeName": attribute}, "Dimensions": dims,
           "DistanceFunction": distance, "Projection": projection or {"ProjectionType": "ALL"}}
    if schema:
        out["SearchSchema"] = [{"AttributeName": n, "SearchSchemaElementType": t}
                               for n, t in schema]
    return out


def search(server, table, vector, top_k, **kw):
    body = {"TableName": table, "IndexName": kw.pop("index", "vix"), "SearchVector":
            vec(vector)["L"], "TopK": top_k}
    body.update(kw)
    return op(server, "SearchVectors", body)


def describe(server, table):
    return ok(server, "DescribeTable", {"TableName": table})["Table"]


def vector_indexes(server, table):
    return describe(server, table).get("VectorIndexes", [])


def wait_active(server, table, timeout=60):
    deadline = time.time() + timeout
    while True:
        t = describe(server, table)
        if t["TableStatus"] == "ACTIVE":
            return t
        assert time.time() < deadline, f"{table} is not ACTIVE after {timeout} s"
        time.sleep(0.1)


def brute(items, query, k, distance):
    """The TopK (score, key) of `items` (key -> vector) for `query`, most similar first."""
    def score(v):
        if distance == "DOT_PRODUCT":
            return sum(a * b for a, b in zip(query, v))
        if distance == "EUCLIDEAN":
            return math.sqrt(sum((a - b) ** 2 for a, b in zip(query, v)))
        dot = sum(a * b for a, b in zip(query, v))
        na, nb = math.sqrt(sum(a * a for a in query)), math.sqrt(sum(b * b for b in v))
        return 1.0 if na == 0 or nb == 0 else 1 - dot / (na * nb)
    scored = sorted(((score(v), pk) for pk, v in items.items()),
                    key=lambda s: -s[0] if distance == "DOT_PRODUCT" else s[0])
    return scored[:k]
