"""Sets and clears fdyno's fault rules (docs/testing-your-application.md) from a test.

FDYNO_FAULTS_URL is where /faults is answered: the admin listener (http://127.0.0.1:8001/faults
when fdyno runs with --admin-listen 127.0.0.1:8001) or the data listener with
--allow-fault-api. Standard library only."""
import json
import os
import urllib.request

FAULTS_URL = os.environ.get("FDYNO_FAULTS_URL", "http://127.0.0.1:8000/faults")


def _send(method, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(FAULTS_URL, data=data, method=method)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def set_rules(*rules):
    """Replaces every rule; returns the rules with their counters."""
    return _send("PUT", {"rules": list(rules)})


def counts():
    """{rule name: (requests matched, times fired)}."""
    return {r["name"]: (r["matched"], r["fired"]) for r in _send("GET")["rules"]}


def clear():
    _send("DELETE")
