"""Contributor Insights: UpdateContributorInsights, DescribeContributorInsights and
ListContributorInsights as DynamoDB answers them, and the most accessed and throttled keys
counted from live traffic, shown at /contributor-insights and in /metrics. The request rules
that one request shows are in cases/insights.txt."""
import json
import uuid

import pytest
import requests

from conftest import ACCOUNT_ID, client_error
from signing import call


@pytest.fixture(scope="module")
def cs(capacity_server):
    return capacity_server


@pytest.fixture
def ddb(cs):
    return cs.client()


def table(ddb, sort=False, gsi=False, rcu=None):
    name = "ci" + uuid.uuid4().hex[:10]
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    kw = {"BillingMode": "PAY_PER_REQUEST"}
    if rcu:
        kw = {"ProvisionedThroughput": {"ReadCapacityUnits": rcu, "WriteCapacityUnits": 100}}
    if sort:
        attrs.append({"AttributeName": "sk", "AttributeType": "N"})
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
    if gsi:
        attrs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    ddb.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=keys, **kw)
    return name


def update(cs, body):
    r = call(cs, "UpdateContributorInsights", json.dumps(body))
    return r.status_code, r.json()


def test_a_table_never_configured_is_disabled_and_unlisted(ddb):
    name = table(ddb)
    assert_only = ddb.describe_contributor_insights(TableName=name)
    assert assert_only["TableName"] == name
    assert assert_only["ContributorInsightsStatus"] == "DISABLED"
    assert "LastUpdateDateTime" not in assert_only and "ContributorInsightsRuleList" not in assert_only
    assert ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"] == []
    # DISABLE of a disabled table changes nothing.
    out = ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE")
    assert out["ContributorInsightsStatus"] == "DISABLED"
    assert "LastUpdateDateTime" not in ddb.describe_contributor_insights(TableName=name)


def test_enable_describe_disable_cycle(cs, ddb):
    name = table(ddb, sort=True)
    status, out = update(cs, {"TableName": name, "ContributorInsightsAction": "ENABLE"})
    assert status == 200
    assert out == {"TableName": name, "ContributorInsightsStatus": "ENABLING",
                   "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"}
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    rules = d["ContributorInsightsRuleList"]
    stamp = rules[0].rsplit("-", 1)[1]
    assert rules == [f"DynamoDBContributorInsights-{k}-{name}-{stamp}"
                     for k in ("PKC", "SKC", "PKT", "SKT")]
    # ENABLE again in the same mode: nothing changes, the answer is the settled status.
    status, again = update(cs, {"TableName": name, "ContributorInsightsAction": "ENABLE"})
    assert again["ContributorInsightsStatus"] == "ENABLED"
    assert ddb.describe_contributor_insights(TableName=name)["LastUpdateDateTime"] == \
        d["LastUpdateDateTime"]
    # Narrowing the mode keeps the throttle rules and their names.
    status, narrowed = update(cs, {"TableName": name, "ContributorInsightsAction": "ENABLE",
                                   "ContributorInsightsMode": "THROTTLED_KEYS"})
    assert narrowed["ContributorInsightsStatus"] == "ENABLING"
    body = json.loads(call(cs, "DescribeContributorInsights",
                           json.dumps({"TableName": name})).text)
    assert body["ContributorInsightsRuleList"] == rules[2:]
    assert body["ContributorInsightsMode"] == "THROTTLED_KEYS"
    listed = json.loads(call(cs, "ListContributorInsights",
                             json.dumps({"TableName": name})).text)["ContributorInsightsSummaries"]
    assert listed == [{"TableName": name, "ContributorInsightsStatus": "ENABLED",
                       "ContributorInsightsMode": "THROTTLED_KEYS"}]
    status, off = update(cs, {"TableName": name, "ContributorInsightsAction": "DISABLE"})
    assert off == {"TableName": name, "ContributorInsightsStatus": "DISABLING",
                   "ContributorInsightsMode": "THROTTLED_KEYS"}
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "DISABLED"
    assert "LastUpdateDateTime" in d and "ContributorInsightsRuleList" not in d
    assert ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"] == []


def test_indexes_and_errors(ddb):
    name = table(ddb, gsi=True)
    out = ddb.update_contributor_insights(TableName=name, IndexName="byg",
                                          ContributorInsightsAction="ENABLE")
    assert out["IndexName"] == "byg" and out["ContributorInsightsStatus"] == "ENABLING"
    d = ddb.describe_contributor_insights(TableName=name, IndexName="byg")
    stamp = d["ContributorInsightsRuleList"][0].rsplit("-", 1)[1]
    assert d["ContributorInsightsRuleList"] == [
        f"DynamoDBContributorInsights-PKC-{name}-byg-{stamp}",
        f"DynamoDBContributorInsights-PKT-{name}-byg-{stamp}"]
    # The table stays disabled; the list has the index alone.
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == \
        "DISABLED"
    listed = ddb.list_contributor_insights(TableName=name)["ContributorInsightsSummaries"]
    assert [(s["TableName"], s.get("IndexName")) for s in listed] == [(name, "byg")]
    assert client_error(ddb.describe_contributor_insights, TableName=name, IndexName="nope") == (
        "ResourceNotFoundException",
        f"Requested resource not found: Index: nope not found for table: {name}")


def test_list_pages_through_the_account(ddb):
    names = sorted(table(ddb, gsi=True) for _ in range(3))
    for n in names:
        ddb.update_contributor_insights(TableName=n, ContributorInsightsAction="ENABLE")
        ddb.update_contributor_insights(TableName=n, IndexName="byg",
                                        ContributorInsightsAction="ENABLE")
    seen, token = [], None
    while True:
        kw = {"MaxResults": 1}
        if token:
            kw["NextToken"] = token
        page = ddb.list_contributor_insights(**kw)
        seen += [(s["TableName"], s.get("IndexName")) for s in page["ContributorInsightsSummaries"]]
        token = page.get("NextToken")
        if not token:
            break
    mine = [s for s in seen if s[0] in names]
    assert mine == [(n, i) for n in names for i in (None, "byg")]


def test_top_keys_are_counted_from_traffic(cs, ddb):
    name = table(ddb, sort=True, rcu=1)
    ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    for i in range(5):
        ddb.put_item(TableName=name, Item={"pk": {"S": "hot"}, "sk": {"N": str(i)}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "cold"}, "sk": {"N": "1"}})
    ddb.get_item(TableName=name, Key={"pk": {"S": "hot"}, "sk": {"N": "1"}})
    ddb.query(TableName=name, KeyConditionExpression="pk = :p",
              ExpressionAttributeValues={":p": {"S": "hot"}})
    # Reads beyond the table's one read unit a second are throttled (and counted).
    throttled = 0
    for _ in range(40):
        try:
            ddb.get_item(TableName=name, Key={"pk": {"S": "cold"}, "sk": {"N": "1"}},
                         ConsistentRead=True)
        except ddb.exceptions.ProvisionedThroughputExceededException:
            throttled += 1
    assert throttled > 0
    report = requests.get(cs.endpoint + "/contributor-insights").json()
    [mine] = [r for r in report["resources"] if r["table"] == name]
    rules = {r["rule"].split("-")[1]: r["top"] for r in mine["rules"]}
    # PKC: 5 puts + 1 get + 5 items queried of "hot"; "cold": 1 put and the admitted gets.
    assert rules["PKC"][0] == {"keys": ["hot"], "count": 11}
    assert rules["SKC"][0] == {"keys": ["hot", "1"], "count": 3}
    assert rules["PKT"] == [{"keys": ["cold"], "count": throttled}]
    assert rules["SKT"] == [{"keys": ["cold", "1"], "count": throttled}]
    pkc = next(r["rule"] for r in mine["rules"] if "-PKC-" in r["rule"])
    text = requests.get(cs.endpoint + "/metrics/prometheus").text
    assert (f'fdyno_contributor_insights_key_events{{account="{ACCOUNT_ID}",table="{name}",'
            f'index="",rule="{pkc}",key="hot"}} 11') in text
    # Disabled: counting stops and the report forgets the table.
    ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE")
    ddb.put_item(TableName=name, Item={"pk": {"S": "hot"}, "sk": {"N": "1"}})
    report = requests.get(cs.endpoint + "/contributor-insights").json()
    assert [r for r in report["resources"] if r["table"] == name] == []


def test_index_reads_count_on_the_index(cs, ddb):
    name = table(ddb, gsi=True)
    ddb.update_contributor_insights(TableName=name, IndexName="byg",
                                    ContributorInsightsAction="ENABLE")
    for i in range(3):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i}"}, "g": {"S": "shared"}})
    ddb.query(TableName=name, IndexName="byg", KeyConditionExpression="g = :g",
              ExpressionAttributeValues={":g": {"S": "shared"}})
    report = requests.get(cs.endpoint + "/contributor-insights").json()
    [mine] = [r for r in report["resources"] if r["table"] == name]
    assert mine["index"] == "byg"
    assert mine["rules"][0]["top"] == [{"keys": ["shared"], "count": 3}]


def test_the_rule_quota_fails_an_enable_past_it(start_server):
    """100 rules per account: 25 tables with a sort key (4 rules each) fill it; the 26th ENABLE
    is accepted, then FAILED with LimitExceededException, and fits again after a DISABLE."""
    s = start_server()
    ddb = s.client()
    names = [table(ddb, sort=True) for _ in range(26)]
    for n in names[:25]:
        ddb.update_contributor_insights(TableName=n, ContributorInsightsAction="ENABLE")
    out = ddb.update_contributor_insights(TableName=names[25], ContributorInsightsAction="ENABLE")
    assert out["ContributorInsightsStatus"] == "ENABLING"
    d = ddb.describe_contributor_insights(TableName=names[25])
    assert d["ContributorInsightsStatus"] == "FAILED"
    assert "ContributorInsightsRuleList" not in d
    assert d["FailureException"]["ExceptionName"] == "LimitExceededException"
    listed = ddb.list_contributor_insights(TableName=names[25])["ContributorInsightsSummaries"]
    assert [x["ContributorInsightsStatus"] for x in listed] == ["FAILED"]
    ddb.update_contributor_insights(TableName=names[0], ContributorInsightsAction="DISABLE")
    ddb.update_contributor_insights(TableName=names[25], ContributorInsightsAction="ENABLE")
    d = ddb.describe_contributor_insights(TableName=names[25])
    assert d["ContributorInsightsStatus"] == "ENABLED" and "FailureException" not in d
