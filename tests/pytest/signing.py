"""Raw DynamoDB calls signed by botocore's own SigV4 implementation (header and presigned
forms), for tests that need to control the time, region, body or headers."""
import contextlib
import datetime
from unittest import mock

import requests
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import ACCESS_KEY, REGION, SECRET_KEY

JSON_10 = "application/x-amz-json-1.0"


def _at(when):
    """Patches botocore's clock so a signature carries `when` (a naive UTC datetime)."""
    if when is None:
        return contextlib.nullcontext()
    fake = mock.MagicMock(wraps=datetime)
    fake.datetime.utcnow.return_value = when
    fake.datetime.strptime = datetime.datetime.strptime
    return mock.patch("botocore.auth.datetime", fake)


def call(server, operation, body="{}", *, access_key=ACCESS_KEY, secret_key=SECRET_KEY,
         region=REGION, when=None, headers=None, send_body=None, target=None, sign=True,
         session=None, verify=None, timeout=60, stream=False):
    """POSTs `body` as X-Amz-Target DynamoDB_20120810.<operation>, signed over `body` (bytes or
    str); `send_body` replaces the body after signing (a tampered request)."""
    if isinstance(body, str):
        body = body.encode()
    h = {"Content-Type": JSON_10,
         "X-Amz-Target": target if target is not None else f"DynamoDB_20120810.{operation}"}
    h.update(headers or {})
    req = AWSRequest(method="POST", url=server.endpoint + "/", data=body, headers=h)
    if sign:
        with _at(when):
            SigV4Auth(Credentials(access_key, secret_key), "dynamodb", region).add_auth(req)
    prepared = req.prepare()
    data = prepared.body if send_body is None else send_body
    http = session or requests
    return http.post(prepared.url, data=data, headers=dict(prepared.headers), verify=verify,
                     timeout=timeout, stream=stream)


class JsonBodyQueryAuth(SigV4QueryAuth):
    """botocore's presigning, keeping the JSON body as the body: SigV4QueryAuth moves body
    parameters into the query string, as the AWS query protocol wants, which DynamoDB's JSON
    protocol does not. The payload hash still covers the body."""

    def _modify_request_before_signing(self, request):
        body = request.data
        request.data = b""
        super()._modify_request_before_signing(request)
        request.data = body


def presigned_call(server, operation, body="{}", *, expires=300, when=None,
                   secret_key=SECRET_KEY, send_body=None):
    """The presigned query-string form: the signature in the URL, no Authorization header."""
    h = {"Content-Type": JSON_10, "X-Amz-Target": f"DynamoDB_20120810.{operation}"}
    req = AWSRequest(method="POST", url=server.endpoint + "/", data=body.encode(), headers=h)
    with _at(when):
        JsonBodyQueryAuth(Credentials(ACCESS_KEY, secret_key), "dynamodb", REGION,
                          expires=expires).add_auth(req)
    assert "X-Amz-Signature=" in req.url and "Authorization" not in req.headers
    data = body if send_body is None else send_body
    return requests.post(req.url, data=data, headers=h, timeout=60)


def error_type(response):
    body = response.json()
    return body["__type"].split("#")[-1]


def error_message(response):
    body = response.json()
    return body.get("message", body.get("Message", ""))
