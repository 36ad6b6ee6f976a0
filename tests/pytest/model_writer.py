"""A random writer with an exact model of a table with secondary indexes, and the checks that
compare a server with the model, shared by the black-box tests that crash the server.

Writer issues random PutItem, UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems
requests (with conditions) and PartiQL writes (ExecuteStatement INSERT, UPDATE and DELETE,
BatchExecuteStatement of them, ExecuteTransaction of them and EXISTS, mostly with a
ClientRequestToken; `?` parameters throughout) over its own partition keys of TABLE (an LSI and
two GSIs, one sparse, one with an INCLUDE projection) and keeps the model of those keys, predicting
every DuplicateItem and ConditionalCheckFailed (STEP_SHARES: the share of each kind). When the
server goes away during a request (Crashed), resolve() settles from the items what the request
did, and resends an interrupted tokened ExecuteTransaction. check_all
reads the table and every index (Query of every partition in both directions, paginated; parallel
Scan) and the item counts, and compares them with the model.
"""
import os
import collections
import random
import threading
import time
import uuid

import botocore.exceptions

TABLE = "model_table"
SEEDS = [int(os.environ["FDYNO_SEED"])] if os.environ.get("FDYNO_SEED") else [1, 2]
NUMERIC = {"sk", "g2", "x"}  # every other attribute is a string
TOKEN_WINDOW_MS = 10 * 60 * 1000  # how long a ClientRequestToken is remembered


class Index:
    def __init__(self, name, hash_key, range_key, projection, include=(), local=False):
        self.name, self.hash, self.range = name, hash_key, range_key
        self.projection, self.include, self.local = projection, tuple(include), local

    def spec(self):
        schema = [{"AttributeName": self.hash, "KeyType": "HASH"}]
        if self.range:
            schema.append({"AttributeName": self.range, "KeyType": "RANGE"})
        projection = {"ProjectionType": self.projection}
        if self.include:
            projection["NonKeyAttributes"] = list(self.include)
        return {"IndexName": self.name, "KeySchema": schema, "Projection": projection}

    def key_attrs(self):
        return {"pk", "sk", self.hash} | ({self.range} if self.range else set())


BY_LSK = Index("by_lsk", "pk", "lsk", "KEYS_ONLY", local=True)
SPARSE = Index("sparse", "g", None, "ALL")  # g is on about a third of the items
INCL = Index("incl", "g2", "g3", "INCLUDE", ("x", "y"))
LATE = Index("late", "h", "x", "INCLUDE", ("y",))  # created by UpdateTable
INITIAL = [BY_LSK, SPARSE, INCL]


def attr_def(name):
    return {"AttributeName": name, "AttributeType": "N" if name in NUMERIC else "S"}


def value(attr, v):
    return {"N": str(v)} if attr in NUMERIC else {"S": v}


def plain(av):
    return int(av["N"]) if "N" in av else av["S"]


def key_of(item):
    return (item["pk"]["S"], int(item["sk"]["N"]))


def key_item(key):
    return {"pk": {"S": key[0]}, "sk": {"N": str(key[1])}}


def describe(item):
    return "{" + ", ".join(f"{k}={str(plain(v))[:12]}" for k, v in sorted(item.items())) + "}"


def project(index, item):
    if index.projection == "ALL":
        return dict(item)
    keep = index.key_attrs() | set(index.include)
    return {k: v for k, v in item.items() if k in keep}


def expected_index(index, model):
    """hash value -> [(range value, base key, projected item)] in index order; items lacking an
    index key attribute have no entry (sparse)."""
    parts = {}
    for key, item in model.items():
        if index.hash not in item or (index.range and index.range not in item):
            continue
        r = plain(item[index.range]) if index.range else None
        parts.setdefault(plain(item[index.hash]), []).append((r, key, project(index, item)))
    for entries in parts.values():
        entries.sort(key=lambda e: (e[0] if e[0] is not None else 0, e[1]))
    return parts


def create_table(ddb, stream=None):
    extra = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": stream}} \
        if stream else {}
    ddb.create_table(
        TableName=TABLE, **extra,
        AttributeDefinitions=[attr_def(a) for a in ("pk", "sk", "lsk", "g", "g2", "g3")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[BY_LSK.spec()],
        GlobalSecondaryIndexes=[SPARSE.spec(), INCL.spec()],
        BillingMode="PAY_PER_REQUEST")
    wait_for(lambda: ddb.describe_table(TableName=TABLE)["Table"]["TableStatus"] == "ACTIVE")


def wait_for(predicate, timeout=60):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.05)


def gsi(ddb, name):
    for g in ddb.describe_table(TableName=TABLE)["Table"].get("GlobalSecondaryIndexes", []):
        if g["IndexName"] == name:
            return g
    return None


def updated(sets, removes):
    """The function old, key -> new item of an update that SETs `sets` and REMOVEs `removes`."""
    def apply(old, key):
        if old is None and not sets:
            return None  # an update that only removes does not create the item
        item = dict(old) if old is not None else key_item(key)
        item.update(sets)
        for attr in removes:
            item.pop(attr, None)
        return item

    return apply


class PartiqlWrite:
    """One PartiQL write statement on one item and what the model predicts of it: `holds(old)`
    whether it applies to the current item `old` (None: absent), `apply(old)` the item it leaves
    when it does, and `code` the error DynamoDB names when it does not (the Code of a batch
    answer or a cancellation reason; ExecuteStatement's error is code + "Exception")."""

    def __init__(self, key, statement, parameters, holds, apply, code):
        self.key, self.statement, self.parameters = key, statement, parameters
        self.holds, self.apply, self.code = holds, apply, code

    def member(self):
        return {"Statement": self.statement, "Parameters": self.parameters}


PARTIQL_KEY = '"pk" = ? AND "sk" = ?'  # a WHERE that pins the whole key of TABLE


# Each kind of Writer step (a method of Writer) and its share of the steps, in percent.
STEP_SHARES = (("put_step", 21), ("update_step", 26), ("delete_step", 13),
               ("batch_write_step", 13), ("transact_write_step", 12),
               ("statement_step", 9), ("batch_statement_step", 3), ("transaction_step", 3))
PARTIQL_STEPS = ("statement_step", "batch_statement_step", "transaction_step")
ERROR_MESSAGES = {"DuplicateItem": "Duplicate primary key exists in table",
                  "ConditionalCheckFailed": "The conditional request failed"}


class Crashed(Exception):
    """The server went away during a request; Writer.resolve settles what it did."""


class Lost(AssertionError):
    """After a crash an item holds neither what was acknowledged nor what the interrupted
    request would have left."""


class Partial(AssertionError):
    """After a crash a transaction is applied in part."""


class Double(AssertionError):
    """A request applied twice (a tokened resend left a second effect)."""


class Writer:
    """Random write requests over its own partition keys, with an exact model of them.

    Before each request the writer records, per key, the item before and the item if the request
    is applied (`pending`); when the connection fails (the server was killed) the request may or
    may not have committed, and resolve() reads the keys back after the restart: each must hold
    one of the two images, all the same one for a transaction."""

    def __init__(self, ddb, seed, pks, label):
        self.ddb, self.rng, self.pks, self.label = ddb, random.Random(seed), pks, label
        self.model, self.steps = {}, 0
        self.changes = collections.defaultdict(list)  # key -> [(old, new)] in commit order
        self.history, self.current = {}, []  # recent requests per key, for failure messages
        self.pending, self.atomic = None, False
        self.answered = collections.Counter()  # step kind -> requests answered
        self.tokened_statements = None  # a tokened ExecuteTransaction in flight
        self.resends_after_crash = 0  # tokened requests resent after a crash interrupted them
        self.statement_resends_after_crash = 0  # of them, ExecuteTransaction

    def now_ms(self):
        """The server's wall clock, for the token window (the real one unless overridden)."""
        return int(time.time() * 1000)

    def note(self, key, what, ok):
        h = self.history.setdefault(key, [])
        now = self.model.get(key)
        h.append(f"step {self.steps} {what} -> {'ok' if ok else 'failed'}; model "
                 f"{describe(now) if now else 'absent'}")
        del h[:-6]

    def where(self):
        lines = [f"{self.label} step {self.steps}"]
        for key in self.current:
            lines += [f"  history of {key}:"] + [f"    {h}" for h in self.history.get(key, [])]
        return "\n".join(lines) + "\n"

    def random_key(self):
        return (self.rng.choice(self.pks), self.rng.randrange(8))

    def random_value(self, attr):
        r = self.rng.randrange
        return value(attr, {"lsk": f"l{r(4)}", "g": f"g{r(3)}", "g2": r(3), "g3": f"v{r(3)}",
                            "h": f"h{r(3)}", "x": r(100), "y": f"y{r(1000)}",
                            "z": f"z{r(10)}"}[attr])

    def random_item(self, key):
        item = key_item(key)
        for attr, percent in (("lsk", 70), ("g", 30), ("g2", 75), ("g3", 75), ("h", 60),
                              ("x", 60), ("y", 50), ("z", 50)):
            if self.rng.randrange(100) < percent:
                item[attr] = self.random_value(attr)
        return item

    def random_condition(self, allow_none=True):
        """(request members, predicate on the old item or None)."""
        kinds = ["exists", "not_exists", "x_less"] + (["none"] * 2 if allow_none else [])
        kind = self.rng.choice(kinds)
        if kind == "none":
            return {}, lambda old: True
        if kind == "exists":
            return ({"ConditionExpression": "attribute_exists(#c)",
                     "ExpressionAttributeNames": {"#c": "pk"}}, lambda old: old is not None)
        if kind == "not_exists":
            return ({"ConditionExpression": "attribute_not_exists(#c)",
                     "ExpressionAttributeNames": {"#c": "pk"}}, lambda old: old is None)
        c = self.rng.randrange(100)
        return ({"ConditionExpression": "#c < :c", "ExpressionAttributeNames": {"#c": "x"},
                 "ExpressionAttributeValues": {":c": {"N": str(c)}}},
                lambda old: old is not None and "x" in old and int(old["x"]["N"]) < c)

    def random_changes(self):
        """(attribute -> value to SET, attributes to REMOVE), not both empty."""
        sets, removes = {}, []
        attrs = ("lsk", "g", "g2", "g3", "h", "x", "y", "z")
        if self.rng.randrange(8) == 0:
            # Only removals: on a missing item they create nothing.
            removes = [a for a in attrs if self.rng.randrange(3) == 0] or ["z"]
        for attr in attrs if not removes else ():
            p = self.rng.randrange(10)
            if p < 3:
                sets[attr] = self.random_value(attr)
            elif p < 5:
                removes.append(attr)
        if not sets and not removes:
            sets["x"] = self.random_value("x")
        return sets, removes

    def random_update(self):
        """(request members, function old, key -> new item or None)."""
        sets, removes = self.random_changes()
        names, values, parts = {}, {}, []
        if sets:
            actions = []
            for i, (attr, v) in enumerate(sets.items()):
                names[f"#u{i}"], values[f":u{i}"] = attr, v
                actions.append(f"#u{i} = :u{i}")
            parts.append("SET " + ", ".join(actions))
        if removes:
            for i, attr in enumerate(removes):
                names[f"#r{i}"] = attr
            parts.append("REMOVE " + ", ".join(f"#r{i}" for i in range(len(removes))))
        members = {"UpdateExpression": " ".join(parts), "ExpressionAttributeNames": names}
        if values:
            members["ExpressionAttributeValues"] = values
        return members, updated(sets, removes)

    @staticmethod
    def merge(a, b):
        """Request members of a condition and an update together."""
        out = dict(a)
        for k, v in b.items():
            out[k] = {**out[k], **v} if isinstance(v, dict) and k in out else v
        return out

    def send(self, call):
        try:
            r = call()
        except (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError) as e:
            raise Crashed() from e
        self.pending = None
        return r

    def resolve(self, ddb):
        """After a crash and restart: what the interrupted request did, from the items; an
        interrupted tokened ExecuteTransaction is then resent."""
        if self.pending:
            self.settle(ddb)
        self.resend_statements(ddb)

    def settle(self, ddb):
        choices = []
        for key, (old, new) in self.pending.items():
            actual = ddb.get_item(TableName=TABLE, Key=key_item(key),
                                  ConsistentRead=True).get("Item")
            if actual not in (old, new):
                raise Lost(f"{self.where()}{key} after the crash: {actual}, neither {old} nor {new}")
            choices.append({name for name, v in (("old", old), ("new", new)) if v == actual})
            self.set(key, actual)
        if self.atomic and not set.intersection(*choices):
            raise Partial(f"{self.where()}a transaction applied in part")
        self.pending = None

    def expect(self, call, holds, code, what):
        try:
            r = self.send(call)
        except botocore.exceptions.ClientError as e:
            self.pending = None
            got = e.response["Error"]["Code"]
            assert not holds and got == code, \
                f"{self.where()}{what}: {got}: {e.response['Error']['Message']}"
            return None
        assert holds, f"{self.where()}{what} succeeded; the model says {code}"
        return r

    def step(self):
        """One random write request, its outcome checked against the model and applied to it."""
        self.steps += 1
        op = self.rng.randrange(100)
        for kind, share in STEP_SHARES:
            if op < share:
                break
            op -= share
        getattr(self, kind)()
        self.answered[kind] += 1

    def put_step(self):
        key = self.random_key()
        self.current = [key]
        item = self.random_item(key)
        cond, holds = self.random_condition()
        old = self.model.get(key)
        self.pending, self.atomic = {key: (old, item if holds(old) else old)}, True
        r = self.expect(lambda: self.ddb.put_item(TableName=TABLE, Item=item,
                                                  ReturnValues="ALL_OLD", **cond),
                        holds(old), "ConditionalCheckFailedException", f"PutItem {key}")
        if r is not None:
            assert r.get("Attributes") == old, f"{self.where()}ALL_OLD"
            self.set(key, item)
        self.note(key, f"PutItem {describe(item)} {cond.get('ConditionExpression', '')}",
                  r is not None)

    def update_step(self):
        key = self.random_key()
        self.current = [key]
        cond, holds = self.random_condition()
        update, apply = self.random_update()
        old = self.model.get(key)
        self.pending, self.atomic = {key: (old, apply(old, key) if holds(old) else old)}, True
        r = self.expect(lambda: self.ddb.update_item(TableName=TABLE, Key=key_item(key),
                                                     ReturnValues="ALL_NEW",
                                                     **self.merge(cond, update)),
                        holds(old), "ConditionalCheckFailedException", f"UpdateItem {key}")
        if r is not None:
            new = apply(old, key)
            assert r.get("Attributes") == new, f"{self.where()}ALL_NEW"
            self.set(key, new)
        self.note(key, f"UpdateItem {update['UpdateExpression']} "
                       f"{cond.get('ConditionExpression', '')}", r is not None)

    def delete_step(self):
        key = self.random_key()
        self.current = [key]
        cond, holds = self.random_condition()
        old = self.model.get(key)
        self.pending, self.atomic = {key: (old, None if holds(old) else old)}, True
        r = self.expect(lambda: self.ddb.delete_item(TableName=TABLE, Key=key_item(key),
                                                     ReturnValues="ALL_OLD", **cond),
                        holds(old), "ConditionalCheckFailedException", f"DeleteItem {key}")
        if r is not None:
            assert r.get("Attributes") == old, f"{self.where()}ALL_OLD"
            self.set(key, None)
        self.note(key, f"DeleteItem {cond.get('ConditionExpression', '')}", r is not None)

    def batch_write_step(self):
        keys = self.rng.sample([(p, s) for p in self.pks for s in range(8)],
                               1 + self.rng.randrange(6))
        writes = [self.random_item(k) if self.rng.randrange(3) else None for k in keys]
        requests = [{"PutRequest": {"Item": w}} if w else
                    {"DeleteRequest": {"Key": key_item(k)}} for k, w in zip(keys, writes)]
        self.current = keys
        self.pending = {k: (self.model.get(k), w) for k, w in zip(keys, writes)}
        self.atomic = False  # BatchWriteItem may apply part of the request
        r = self.send(lambda: self.ddb.batch_write_item(RequestItems={TABLE: requests}))
        unprocessed = {key_of(u.get("PutRequest", {}).get("Item") or
                              u["DeleteRequest"]["Key"])
                       for u in r.get("UnprocessedItems", {}).get(TABLE, [])}
        for k, w in zip(keys, writes):
            if k not in unprocessed:
                self.set(k, w)
            self.note(k, f"BatchWriteItem {'put ' + describe(w) if w else 'delete'}",
                      k not in unprocessed)

    def transact_write_step(self):
        keys = self.rng.sample([(p, s) for p in self.pks for s in range(8)],
                               1 + self.rng.randrange(4))
        self.current = keys
        actions, effects, all_hold = [], [], True
        for k in keys:
            kind = self.rng.choice(["Put", "Update", "Delete", "ConditionCheck"])
            cond, holds = self.random_condition(allow_none=kind != "ConditionCheck")
            all_hold = all_hold and holds(self.model.get(k))
            body = {"TableName": TABLE, **cond}
            if kind == "Put":
                item = self.random_item(k)
                body["Item"] = item
                effects.append((k, lambda old, item=item: item))
            else:
                body["Key"] = key_item(k)
            if kind == "Update":
                update, apply = self.random_update()
                body = self.merge(body, update)
                effects.append((k, lambda old, apply=apply, k=k: apply(old, k)))
            if kind == "Delete":
                effects.append((k, lambda old: None))
            actions.append({kind: body})
        self.pending = {k: (self.model.get(k), self.model.get(k)) for k in keys}
        if all_hold:
            for k, effect in effects:
                self.pending[k] = (self.model.get(k), effect(self.model.get(k)))
        self.atomic = True
        r = self.expect(lambda: self.ddb.transact_write_items(TransactItems=actions),
                        all_hold, "TransactionCanceledException", "TransactWriteItems")
        if r is not None:
            for k, effect in effects:
                self.set(k, effect(self.model.get(k)))
        for action in actions:
            (kind, body), = action.items()
            k = key_of(body.get("Item") or body["Key"])
            self.note(k, f"TransactWriteItems {kind} {body.get('UpdateExpression', '')} "
                         f"{body.get('ConditionExpression', '')}", r is not None)

    # ---- PartiQL: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction ----------------

    def random_predicate(self, on_missing_false=False):
        """A WHERE condition beyond the key: (text, parameters, predicate on an existing item).
        With on_missing_false, never empty, and false on an item lacking its attribute."""
        kinds = ["x_less", "g2_equals", "g_present"]
        if not on_missing_false:
            kinds += ["h_missing", "none", "none"]
        kind = self.rng.choice(kinds)
        if kind == "none":
            return "", [], lambda old: True
        if kind == "h_missing":
            return ' AND "h" IS MISSING', [], lambda old: "h" not in old
        if kind == "g_present":
            return ' AND "g" IS NOT MISSING', [], lambda old: "g" in old
        if kind == "g2_equals":
            v = value("g2", self.rng.randrange(3))
            return ' AND "g2" = ?', [v], lambda old: old.get("g2") == v
        c = self.rng.randrange(100)
        return (' AND "x" < ?', [value("x", c)],
                lambda old: "x" in old and int(old["x"]["N"]) < c)

    def partiql_insert(self, key):
        item = self.random_item(key)
        statement = (f'INSERT INTO "{TABLE}" VALUE {{' +
                     ", ".join(f"'{attr}': ?" for attr in item) + "}")
        return PartiqlWrite(key, statement, list(item.values()), lambda old: old is None,
                            lambda old: item, "DuplicateItem")

    def partiql_update(self, key, returning=""):
        """UPDATE ... SET ... REMOVE ... WHERE <key> [AND predicate]: fails on a missing item."""
        sets, removes = self.random_changes()
        parts, parameters = [], []
        if sets:
            parts.append("SET " + ", ".join(f'"{attr}" = ?' for attr in sets))
            parameters += list(sets.values())
        parts += [f'REMOVE "{attr}"' for attr in removes]
        text, values, predicate = self.random_predicate()
        statement = (f'UPDATE "{TABLE}" {" ".join(parts)} WHERE {PARTIQL_KEY}{text}{returning}')
        apply = updated(sets, removes)
        return PartiqlWrite(key, statement, parameters + list(key_item(key).values()) + values,
                            lambda old: old is not None and predicate(old),
                            lambda old: apply(old, key), "ConditionalCheckFailed")

    def partiql_delete(self, key, returning=""):
        """DELETE ... WHERE <key> [AND predicate]: a missing item is deleted silently (the
        predicate conditions an existing item only; docs/compatibility.md)."""
        text, values, predicate = self.random_predicate()
        statement = f'DELETE FROM "{TABLE}" WHERE {PARTIQL_KEY}{text}{returning}'
        return PartiqlWrite(key, statement, list(key_item(key).values()) + values,
                            lambda old: old is None or predicate(old), lambda old: None,
                            "ConditionalCheckFailed")

    def partiql_exists(self, key):
        """EXISTS(SELECT ...) in ExecuteTransaction: a condition check that writes nothing."""
        text, values, predicate = self.random_predicate(on_missing_false=True)
        statement = f'EXISTS(SELECT * FROM "{TABLE}" WHERE {PARTIQL_KEY}{text})'
        return PartiqlWrite(key, statement, list(key_item(key).values()) + values,
                            lambda old: old is not None and predicate(old), lambda old: old,
                            "ConditionalCheckFailed")

    def likely_holding(self, key, makers):
        """A random statement on key, three times in four (of a few draws) one that holds, so
        that most transactions commit."""
        want = self.rng.randrange(4) > 0
        for _ in range(8):
            w = self.rng.choice(makers)(key)
            if not want or w.holds(self.model.get(key)):
                break
        return w

    def statement_step(self):
        """ExecuteStatement: one INSERT, UPDATE or DELETE, with RETURNING."""
        key = self.random_key()
        self.current = [key]
        kind = self.rng.choice(["INSERT", "UPDATE", "DELETE"])
        if kind == "INSERT":
            w, returning = self.partiql_insert(key), None
        elif kind == "UPDATE":
            returning = self.rng.choice(["", " RETURNING ALL NEW *", " RETURNING ALL OLD *"])
            w = self.partiql_update(key, returning)
        else:
            returning = self.rng.choice(["", " RETURNING ALL OLD *"])
            w = self.partiql_delete(key, returning)
        old = self.model.get(key)
        holds = w.holds(old)
        self.pending, self.atomic = {key: (old, w.apply(old) if holds else old)}, True
        r = self.expect(lambda: self.ddb.execute_statement(**w.member()), holds,
                        w.code + "Exception", f"ExecuteStatement {w.statement}")
        if r is not None:
            new = w.apply(old)
            want = {" RETURNING ALL NEW *": new, " RETURNING ALL OLD *": old}.get(returning)
            assert r["Items"] == ([want] if want else []), f"{self.where()}Items {r['Items']}"
            self.set(key, new)
        self.note(key, f"ExecuteStatement {w.statement} {w.parameters}", r is not None)

    def batch_statement_step(self):
        """BatchExecuteStatement of INSERT, UPDATE and DELETE statements on distinct items: each
        statement answers for itself."""
        keys = self.rng.sample([(p, s) for p in self.pks for s in range(8)],
                               1 + self.rng.randrange(4))
        makers = (self.partiql_insert, self.partiql_update, self.partiql_delete)
        writes = [self.rng.choice(makers)(k) for k in keys]
        self.current = keys
        self.pending = {k: (self.model.get(k), w.apply(self.model.get(k))
                            if w.holds(self.model.get(k)) else self.model.get(k))
                        for k, w in zip(keys, writes)}
        self.atomic = False  # each statement is a write of its own
        r = self.send(lambda: self.ddb.batch_execute_statement(
            Statements=[w.member() for w in writes]))
        assert len(r["Responses"]) == len(writes), f"{self.where()}{r['Responses']}"
        for w, answer in zip(writes, r["Responses"]):
            old = self.model.get(w.key)
            holds = w.holds(old)
            want = {"TableName": TABLE}
            if not holds:
                want["Error"] = {"Code": w.code, "Message": ERROR_MESSAGES[w.code]}
            assert answer == want, f"{self.where()}{w.statement}: {answer}"
            if holds:
                self.set(w.key, w.apply(old))
            self.note(w.key, f"BatchExecuteStatement {w.statement} {w.parameters}", holds)

    def transaction_step(self):
        """ExecuteTransaction of INSERT, UPDATE, DELETE and EXISTS statements on distinct items,
        mostly with a ClientRequestToken: sent twice (the second a replay, or the same
        cancellation), and once more after a crash interrupted it (resolve)."""
        keys = self.rng.sample([(p, s) for p in self.pks for s in range(8)],
                               1 + self.rng.randrange(4))
        makers = (self.partiql_insert, self.partiql_update, self.partiql_delete,
                  self.partiql_exists)
        writes = [self.likely_holding(k, makers) for k in keys]
        self.current = keys
        all_hold = all(w.holds(self.model.get(w.key)) for w in writes)
        images = {w.key: (self.model.get(w.key), w.apply(self.model.get(w.key)) if all_hold
                          else self.model.get(w.key)) for w in writes}
        request = {"TransactStatements": [w.member() for w in writes]}
        if self.rng.randrange(4):
            request["ClientRequestToken"] = str(uuid.UUID(int=self.rng.getrandbits(128)))
            self.tokened_statements = (request, writes, all_hold, images, self.now_ms())
        for attempt in range(2 if "ClientRequestToken" in request else 1):
            self.pending, self.atomic = dict(images), True
            if attempt:
                self.pending = {k: (new, new) for k, (_, new) in images.items()}
            self.execute_transaction(self.ddb, request, writes, all_hold, attempt)
            for k, (_, new) in images.items():
                self.set(k, new)
        self.tokened_statements = None
        for w in writes:
            self.note(w.key, f"ExecuteTransaction {w.statement} {w.parameters}"
                             f"{' (token)' if 'ClientRequestToken' in request else ''}", all_hold)

    def execute_transaction(self, ddb, request, writes, all_hold, attempt):
        try:
            self.send(lambda: ddb.execute_transaction(**request))
        except botocore.exceptions.ClientError as e:
            self.pending = None
            err = e.response["Error"]
            assert not all_hold and err["Code"] == "TransactionCanceledException", \
                f"{self.where()}ExecuteTransaction (send {attempt + 1}): {err}"
            reasons = [r["Code"] for r in e.response.get("CancellationReasons", [])]
            want = ["None" if w.holds(self.model.get(w.key)) else w.code for w in writes]
            assert reasons == want, f"{self.where()}CancellationReasons {reasons} != {want}"
            return
        assert all_hold, f"{self.where()}ExecuteTransaction succeeded; the model says cancelled"

    def resend_statements(self, ddb):
        """After a crash interrupted a tokened ExecuteTransaction and resolve() settled it: the
        same request again, which replays it if it committed and executes it if not. Either way
        the items hold exactly its effect (or, when cancelled, none)."""
        tokened, self.tokened_statements = self.tokened_statements, None
        if tokened is None:
            return
        request, writes, all_hold, images, sent_ms = tokened
        if self.now_ms() - sent_ms > TOKEN_WINDOW_MS - 60_000:
            return  # too near the end of the token's window to count on a replay
        settled = {k: self.model.get(k) for k in images}  # what resolve() found
        for k, (old, _) in images.items():
            self.assume(k, old)  # what the statements' conditions are evaluated against
        self.execute_transaction(ddb, request, writes, all_hold, 2)
        for k, (_, new) in images.items():
            actual = ddb.get_item(TableName=TABLE, Key=key_item(k),
                                  ConsistentRead=True).get("Item")
            if actual != new:
                raise Double(f"{self.where()}{k} after resending a token: {actual} != {new}")
            self.assume(k, settled[k])
            self.set(k, new)  # a change only if the interrupted send had not committed
        self.resends_after_crash += 1
        self.statement_resends_after_crash += 1

    def set(self, key, item):
        """The item at key is now `item` (None: absent): a committed change of it when it
        differs from the model's, recorded in `changes` (what a stream must show)."""
        old = self.model.get(key)
        if old != item:
            self.changes[key].append((old, item))
        self.assume(key, item)

    def assume(self, key, item):
        """The model's item at key, set without recording a change."""
        if item is None:
            self.model.pop(key, None)
        else:
            self.model[key] = item


class TokenedWriter(Writer):
    """A Writer that also sends tokened TransactWriteItems adding to a counter (15% of its
    steps), twice each: the second send is replayed from the token record, no second effect. One
    a crash interrupted is resent by resolve() and must leave exactly one effect. `now_ms`: the
    server's wall clock in ms (default: the real one), for the token window."""

    def __init__(self, ddb, seed, pks, label, now_ms=None):
        super().__init__(ddb, seed, pks, label)
        self.server_now_ms = now_ms or super().now_ms
        self.acknowledged = 0
        self.tokened = None  # (request, image it leaves, server ms of its first send)

    def now_ms(self):
        return self.server_now_ms()

    def send(self, call):
        r = super().send(call)
        self.acknowledged += 1
        return r

    def step(self):
        if self.rng.randrange(100) >= 15:
            self.tokened = None
            return super().step()
        self.steps += 1
        key = self.random_key()
        self.current = [key]
        delta = 1 + self.rng.randrange(9)
        request = {
            "ClientRequestToken": str(uuid.UUID(int=self.rng.getrandbits(128))),
            "TransactItems": [{"Update": {
                "TableName": TABLE, "Key": key_item(key), "UpdateExpression": "ADD c :d",
                "ExpressionAttributeValues": {":d": {"N": str(delta)}}}}]}
        old = self.model.get(key)
        new = dict(old) if old is not None else key_item(key)
        new["c"] = {"N": str(int(new.get("c", {"N": "0"})["N"]) + delta)}
        self.tokened = (request, new, self.now_ms())
        self.pending, self.atomic = {key: (old, new)}, True
        self.send(lambda: self.ddb.transact_write_items(**request))
        self.set(key, new)
        self.note(key, f"tokened ADD c {delta}", True)
        # The same request again: replayed from the token record, no second effect.
        self.pending = {key: (new, new)}
        self.send(lambda: self.ddb.transact_write_items(**request))
        self.note(key, f"tokened ADD c {delta} resent", True)
        self.tokened = None
        self.answered["tokened_add_step"] += 1

    def resolve(self, ddb):
        tokened, self.tokened = self.tokened, None
        super().resolve(ddb)
        if tokened is None:
            return
        request, new, sent_ms = tokened
        if self.now_ms() - sent_ms > TOKEN_WINDOW_MS - 60_000:
            return  # too near the end of the token's window to count on a replay
        # Resent after the crash: applied now if the interrupted attempt did not commit, a
        # replay if it did. Either way the item holds exactly one effect.
        ddb.transact_write_items(**request)
        key = self.current[0]
        actual = ddb.get_item(TableName=TABLE, Key=key_item(key),
                              ConsistentRead=True).get("Item")
        if actual != new:
            raise Double(f"{self.where()}{key} after resending a token: {actual} != {new}")
        self.set(key, new)
        self.resends_after_crash += 1


def all_pages(ddb, op, request, limit, key_attrs, where):
    out, start = [], None
    for _ in range(10_000):
        kw = dict(request)
        if limit:
            kw["Limit"] = limit
        if start:
            kw["ExclusiveStartKey"] = start
        r = getattr(ddb, op)(**kw)
        if limit:
            assert len(r["Items"]) <= limit, where
        out += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return out
        assert set(start) == key_attrs, f"{where}: LastEvaluatedKey {start}"
    raise AssertionError(f"{where}: pagination does not end")


def by_key(items, where):
    out = {}
    for item in items:
        assert key_of(item) not in out, f"{where}: {key_of(item)} returned twice"
        out[key_of(item)] = item
    return out


def assert_same(got, want, where):
    if got == want:
        return
    lines = [f"missing {k} {describe(v)}" for k, v in want.items() if k not in got]
    lines += [f"extra {k} {describe(v)}" for k, v in got.items() if k not in want]
    lines += [f"differs {k}: got {describe(got[k])} want {describe(v)}"
              for k, v in want.items() if k in got and got[k] != v]
    raise AssertionError(f"{where}:\n  " + "\n  ".join(lines))


def scan_all(ddb, index, limit, segments, key_attrs, where):
    items = []
    for segment in range(segments):
        request = {"TableName": TABLE}
        if index:
            request["IndexName"] = index
        if segments > 1:
            request.update(Segment=segment, TotalSegments=segments)
        items += all_pages(ddb, "scan", request, limit, key_attrs, f"{where} segment {segment}")
    return by_key(items, where)


def check_item_counts(ddb, model, indexes, where):
    """fdyno keeps DescribeTable's ItemCount exact (docs/format/item_counts.md)."""
    table = ddb.describe_table(TableName=TABLE)["Table"]
    assert table["ItemCount"] == len(model), f"{where}: table ItemCount"
    described = {i["IndexName"]: i for i in table.get("LocalSecondaryIndexes", []) +
                 table.get("GlobalSecondaryIndexes", [])}
    for index in indexes:
        want = sum(len(e) for e in expected_index(index, model).values())
        assert described[index.name]["ItemCount"] == want, f"{where}: {index.name} ItemCount"


def check_all(ddb, model, indexes, rng, where):
    check_table(ddb, model, rng, where)
    check_indexes(ddb, model, indexes, rng, where)
    check_item_counts(ddb, model, indexes, where)


def check_table(ddb, model, rng, where):
    """The table, by paginated parallel Scan, holds exactly the model's items."""
    limit = rng.choice([1, 3, 7, None] if len(model) <= 100 else [10, 50, None])
    segments = rng.randrange(1, 5)
    assert_same(scan_all(ddb, None, limit, segments, {"pk", "sk"}, f"{where} table Scan"),
                model, f"{where} table Scan (Limit {limit}, TotalSegments {segments})")


def check_indexes(ddb, model, indexes, rng, where):
    """Every index, by Scan and by Query of each partition in both directions, holds exactly
    the entries the model's items give it."""
    for index in indexes:
        expected = expected_index(index, model)
        w = f"{where} index {index.name}"
        limit, segments = rng.choice([2, 5, None] if len(model) <= 100 else [10, 50, None]), \
            rng.randrange(1, 5)
        flat = {key: image for entries in expected.values() for _, key, image in entries}
        assert_same(scan_all(ddb, index.name, limit, segments, index.key_attrs(), w), flat,
                    f"{w} Scan (Limit {limit}, TotalSegments {segments})")
        absent = 77 if index.hash in NUMERIC else "absent"
        for h in list(expected) + [absent]:
            want = [image for _, _, image in expected.get(h, [])]
            request = {"TableName": TABLE, "IndexName": index.name,
                       "KeyConditionExpression": "#h = :h",
                       "ExpressionAttributeNames": {"#h": index.hash},
                       "ExpressionAttributeValues": {":h": value(index.hash, h)}}
            for forward in (True, False):
                limit = rng.choice([1, 2, 3, 5, None] if len(want) <= 40 else [7, 25, None])
                got = all_pages(ddb, "query", {**request, "ScanIndexForward": forward}, limit,
                                index.key_attrs(), f"{w} partition {h}")
                ordered = want if forward else want[::-1]
                assert [key_of(i) for i in got] == [key_of(i) for i in ordered], \
                    f"{w} partition {h} forward={forward} Limit {limit}"
                assert got == ordered, f"{w} partition {h} forward={forward} Limit {limit}"


class Background:
    """A Writer running in a thread until stopped or the server goes away (crashed); its
    failure is re-raised by stop()."""

    def __init__(self, writer):
        self.writer, self.error, self.crashed = writer, None, False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        try:
            for _ in range(100_000):
                if self.done.is_set():
                    return
                self.writer.step()
        except Crashed:
            self.crashed = True
        except Exception as e:  # reported by stop()
            self.error = e

    def await_steps(self, n, timeout=60):
        target = self.writer.steps + n
        wait_for(lambda: self.writer.steps >= target or self.error is not None or self.crashed,
                 timeout)

    def stop(self):
        self.done.set()
        self.thread.join()
        if self.error is not None:
            raise self.error
