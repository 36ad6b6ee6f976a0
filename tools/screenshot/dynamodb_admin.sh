#!/usr/bin/env bash
# dynamodb_admin.sh OUT_DIR [ADMIN_DIR]: screenshots of dynamodb-admin browsing fdyno, taken
# with Debian's headless Chromium: OUT_DIR/tables.png (the table list) and OUT_DIR/items.png
# (the items of one table).
#
# Needs: the npm package dynamodb-admin installed in ADMIN_DIR (default /tmp/dyn-admin:
#   mkdir -p /tmp/dyn-admin && cd /tmp/dyn-admin && npm install dynamodb-admin), Debian's
# chromium and python3-boto3, and an fdyno binary ($FDYNO_BIN, default build-release/, then
# build/). fdyno runs in memory on a free port; nothing outside OUT_DIR is left behind.
set -euo pipefail
out=${1:?usage: dynamodb_admin.sh OUT_DIR [ADMIN_DIR]}
admin_dir=${2:-/tmp/dyn-admin}
root=$(cd "$(dirname "$0")/../.." && pwd)
fdyno=${FDYNO_BIN:-}
if [ -z "$fdyno" ]; then
  for candidate in "$root/build-release/src/main/fdyno" "$root/build/src/main/fdyno"; do
    if [ -x "$candidate" ]; then fdyno=$candidate; break; fi
  done
fi
[ -x "$fdyno" ] || { echo "no fdyno binary (set FDYNO_BIN)" >&2; exit 2; }
admin="$admin_dir/node_modules/.bin/dynamodb-admin"
[ -x "$admin" ] || { echo "dynamodb-admin is not installed in $admin_dir" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() {
  for _ in $(seq 1 300); do
    if curl -fs -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "nothing answered at $1" >&2
  return 1
}

fdyno_port=$(free_port)
"$fdyno" serve --in-memory --port "$fdyno_port" >"$work/fdyno.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$fdyno_port/"

# Sample data: two tables, one with a global secondary index, a few items.
/usr/bin/python3 - "$fdyno_port" <<'PY'
import sys
import boto3
ddb = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}",
                   region_name="us-east-1", aws_access_key_id="fake",
                   aws_secret_access_key="fake")
ddb.create_table(
    TableName="Music", BillingMode="PAY_PER_REQUEST",
    AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                          for a in ("Artist", "SongTitle", "Genre")],
    KeySchema=[{"AttributeName": "Artist", "KeyType": "HASH"},
               {"AttributeName": "SongTitle", "KeyType": "RANGE"}],
    GlobalSecondaryIndexes=[{"IndexName": "by_genre",
                             "KeySchema": [{"AttributeName": "Genre", "KeyType": "HASH"}],
                             "Projection": {"ProjectionType": "ALL"}}])
songs = [("No One You Know", "Call Me Today", "Country", 2015, 2),
         ("No One You Know", "My Dog Spot", "Country", 2016, 3),
         ("Acme Band", "Happy Day", "Rock", 2017, 4),
         ("Acme Band", "PartiQL Rocks", "Rock", 2018, 5),
         ("The Acme Band", "Still in Love", "Rock", 2019, 1)]
for artist, title, genre, year, stars in songs:
    ddb.put_item(TableName="Music", Item={
        "Artist": {"S": artist}, "SongTitle": {"S": title}, "Genre": {"S": genre},
        "Year": {"N": str(year)}, "Stars": {"N": str(stars)},
        "Tags": {"SS": [genre.lower(), "demo"]}})
ddb.create_table(TableName="Orders", BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "OrderId", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "OrderId", "KeyType": "HASH"}])
ddb.put_item(TableName="Orders", Item={"OrderId": {"S": "o-1"}, "Total": {"N": "42.50"},
                                       "Lines": {"L": [{"M": {"Sku": {"S": "A1"}}}]}})
PY

admin_port=$(free_port)
DYNAMO_ENDPOINT="http://127.0.0.1:$fdyno_port" AWS_REGION=us-east-1 \
  AWS_ACCESS_KEY_ID=fake AWS_SECRET_ACCESS_KEY=fake \
  "$admin" --host 127.0.0.1 --port "$admin_port" >"$work/admin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$admin_port/"

# Chromium as root, without a sandbox, GPU or any background connection (the network here is
# closed), with a fresh profile.
shoot() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile-$2" --hide-scrollbars --window-size=1400,900 \
    --virtual-time-budget=3000 --screenshot="$out/$2.png" "$1" >"$work/chromium-$2.log" 2>&1
  [ -s "$out/$2.png" ] || { cat "$work/chromium-$2.log" >&2; return 1; }
}
shoot "http://127.0.0.1:$admin_port/" tables
shoot "http://127.0.0.1:$admin_port/tables/Music" items
echo "$out/tables.png"
echo "$out/items.png"
