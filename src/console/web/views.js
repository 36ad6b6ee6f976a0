// The console's views. Each is a class built once after sign-in with the API client and the
// shell's ui helpers; show() runs whenever the view is opened.
import { keyOf, sameValue } from './api.js';

// DynamoDB JSON to plain JavaScript, for display.
function plain(v) {
  if ('S' in v) return v.S;
  if ('N' in v) return Number(v.N);
  if ('BOOL' in v) return v.BOOL;
  if ('NULL' in v) return null;
  if ('B' in v) return `<binary ${v.B}>`;
  if ('SS' in v) return v.SS;
  if ('NS' in v) return v.NS.map(Number);
  if ('BS' in v) return v.BS.map((b) => `<binary ${b}>`);
  if ('L' in v) return v.L.map(plain);
  if ('M' in v) return Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, plain(x)]));
  return v;
}

function cellText(v) {
  if (v === undefined) return '';
  if ('S' in v) return v.S;
  if ('N' in v) return v.N;
  const p = plain(v);
  return typeof p === 'string' ? p : JSON.stringify(p);
}

// Parses an optional JSON input; the message names the field when it is not JSON.
function jsonInput(input, what) {
  const text = input.value.trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not JSON: ${e.message}`);
  }
}

// Adds each of the expression fields that has a value to `request`.
function withExpressions(request, fields) {
  for (const [member, value] of Object.entries(fields)) {
    if (value !== undefined && value !== '') request[member] = value;
  }
  return request;
}

function option(text, value = text) {
  const o = document.createElement('option');
  o.textContent = text;
  o.value = value;
  return o;
}

// Fills a <select> with the table names, keeping its choice when it still exists.
async function fillTables(api, select) {
  const names = await api.tableNames();
  const keep = select.value;
  select.replaceChildren(...names.map((n) => option(n)));
  if (names.includes(keep)) select.value = keep;
  return names;
}

// Items as an HTML table: key attributes first, then every other attribute once. `actions`
// adds buttons to each row: [{label, run(item)}]. Each row carries its key as data-key.
function renderItems(container, items, table, actions = []) {
  const keys = table ? table.KeySchema.map((k) => k.AttributeName) : [];
  const others = new Set();
  for (const item of items) for (const name of Object.keys(item)) if (!keys.includes(name)) others.add(name);
  const columns = [...keys, ...[...others].sort()];
  const t = document.createElement('table');
  const head = t.createTHead().insertRow();
  for (const c of columns) {
    const th = document.createElement('th');
    th.textContent = c;
    if (keys.includes(c)) th.className = 'key';
    head.append(th);
  }
  if (actions.length) head.append(document.createElement('th'));
  const body = t.createTBody();
  for (const item of items) {
    const row = body.insertRow();
    if (table) row.dataset.key = JSON.stringify(keyOf(table, item));
    for (const c of columns) {
      const cell = row.insertCell();
      cell.textContent = cellText(item[c]);
      cell.title = cell.textContent;
    }
    if (actions.length) {
      const cell = row.insertCell();
      for (const a of actions) {
        const b = document.createElement('button');
        b.textContent = a.label;
        b.className = `action-${a.label.toLowerCase()}`;
        b.addEventListener('click', () => a.run(item));
        cell.append(b);
      }
    }
  }
  container.replaceChildren(t);
}

class TablesView {
  constructor(api, ui) {
    this.api = api;
    this.ui = ui;
    const { $ } = ui;
    this.selected = null;
    $('create-table-json').value = JSON.stringify({
      TableName: 'Orders',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      BillingMode: 'PAY_PER_REQUEST',
    }, null, 2);
    $('refresh-tables').addEventListener('click', () => ui.guard(() => this.list()));
    $('create-table-button').addEventListener('click', () => ui.guard(() => this.create()));
    $('delete-table').addEventListener('click', () => ui.guard(() => this.remove()));
  }

  show() { this.ui.guard(() => this.list()); }

  async list() {
    const { $ } = this.ui;
    const names = await this.api.tableNames();
    $('table-list').replaceChildren(...names.map((name) => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.textContent = name;
      a.classList.toggle('active', name === this.selected);
      a.addEventListener('click', () => this.ui.guard(() => this.select(name)));
      li.append(a);
      return li;
    }));
    if (this.selected && !names.includes(this.selected)) this.selected = null;
    if (this.selected) await this.select(this.selected);
  }

  async select(name) {
    const { $ } = this.ui;
    this.selected = name;
    for (const a of $('table-list').querySelectorAll('a')) a.classList.toggle('active', a.textContent === name);
    $('table-title').textContent = name;
    $('table-description').textContent = JSON.stringify(await this.api.describe(name), null, 2);
    $('delete-table').hidden = false;
  }

  async create() {
    const request = jsonInput(this.ui.$('create-table-json'), 'The CreateTable request');
    const r = await this.api.call('CreateTable', request);
    this.ui.status(`Created table ${r.TableDescription.TableName}`);
    this.selected = r.TableDescription.TableName;
    await this.list();
  }

  async remove() {
    if (!this.selected || !confirm(`Delete table ${this.selected} and every item in it?`)) return;
    await this.api.call('DeleteTable', { TableName: this.selected });
    this.ui.status(`Deleted table ${this.selected}`);
    this.selected = null;
    this.ui.$('table-title').textContent = 'No table selected';
    this.ui.$('table-description').textContent = '';
    this.ui.$('delete-table').hidden = true;
    await this.list();
  }
}

class ItemsView {
  constructor(api, ui) {
    this.api = api;
    this.ui = ui;
    const { $ } = ui;
    this.table = null;      // the selected table's description
    this.pageStart = null;  // ExclusiveStartKey of the page shown
    this.next = null;       // LastEvaluatedKey of the page shown
    this.editing = null;    // {item} being edited, or {item: null} for a new one
    $('items-table').addEventListener('change', () => ui.guard(() => this.scan(null)));
    $('items-scan').addEventListener('click', () => ui.guard(() => this.scan(null)));
    $('items-next').addEventListener('click', () => ui.guard(() => this.scan(this.next)));
    $('items-add').addEventListener('click', () => ui.guard(() => this.edit(null)));
    $('item-save').addEventListener('click', () => ui.guard(() => this.save()));
    $('item-cancel').addEventListener('click', () => { $('item-editor').hidden = true; });
  }

  show() {
    this.ui.guard(async () => {
      await fillTables(this.api, this.ui.$('items-table'));
      await this.scan(null);
    });
  }

  async scan(start) {
    const { $ } = this.ui;
    const name = $('items-table').value;
    if (!name) return;
    this.table = await this.api.describe(name);
    const request = withExpressions({ TableName: name, Limit: 25 }, {
      FilterExpression: $('items-filter').value.trim(),
      ExpressionAttributeNames: jsonInput($('items-names'), 'Names'),
      ExpressionAttributeValues: jsonInput($('items-values'), 'Values'),
      ExclusiveStartKey: start || undefined,
    });
    const r = await this.api.call('Scan', request);
    this.pageStart = start;
    this.next = r.LastEvaluatedKey || null;
    $('items-next').disabled = !this.next;
    $('items-summary').textContent = `${r.Count} items on this page (${r.ScannedCount} scanned)`;
    renderItems($('items-grid'), r.Items, this.table, [
      { label: 'Edit', run: (item) => this.edit(item) },
      { label: 'Delete', run: (item) => this.ui.guard(() => this.remove(item)) },
    ]);
  }

  edit(item) {
    const { $ } = this.ui;
    if (!this.table) return;
    this.editing = { item };
    let shown = item;
    if (!shown) {  // a new item: its key attributes, typed as the table defines them
      shown = {};
      for (const k of this.table.KeySchema) {
        const type = this.table.AttributeDefinitions.find((d) => d.AttributeName === k.AttributeName).AttributeType;
        shown[k.AttributeName] = { [type]: type === 'N' ? '0' : '' };
      }
    }
    $('item-editor-title').textContent = item ? 'Edit item' : `New item in ${this.table.TableName}`;
    $('item-json').value = JSON.stringify(shown, null, 2);
    $('item-editor').hidden = false;
    $('item-json').focus();
  }

  async save() {
    const { $ } = this.ui;
    const item = jsonInput($('item-json'), 'The item');
    const table = this.table.TableName;
    const old = this.editing.item;
    const hash = this.table.KeySchema[0].AttributeName;
    const absent = { ConditionExpression: 'attribute_not_exists(#k)', ExpressionAttributeNames: { '#k': hash } };
    if (!old) {
      await this.api.call('PutItem', { TableName: table, Item: item, ...absent });
    } else if (sameValue(keyOf(this.table, old), keyOf(this.table, item))) {
      await this.api.call('PutItem', { TableName: table, Item: item });
    } else {
      await this.api.call('TransactWriteItems', {
        TransactItems: [
          { Delete: { TableName: table, Key: keyOf(this.table, old) } },
          { Put: { TableName: table, Item: item, ...absent } },
        ],
      });
    }
    $('item-editor').hidden = true;
    this.ui.status(old ? 'Item saved' : 'Item added');
    await this.scan(this.pageStart);
  }

  async remove(item) {
    const key = keyOf(this.table, item);
    if (!confirm(`Delete the item ${JSON.stringify(key)}?`)) return;
    await this.api.call('DeleteItem', { TableName: this.table.TableName, Key: key });
    this.ui.status('Item deleted');
    await this.scan(this.pageStart);
  }
}

class QueryView {
  constructor(api, ui) {
    this.api = api;
    this.ui = ui;
    const { $ } = ui;
    this.table = null;
    this.next = null;
    $('q-table').addEventListener('change', () => ui.guard(() => this.loadIndexes()));
    $('q-mode').addEventListener('change', () => { $('q-key').disabled = $('q-mode').value === 'Scan'; });
    $('q-run').addEventListener('click', () => ui.guard(() => this.run(null)));
    $('q-next').addEventListener('click', () => ui.guard(() => this.run(this.next)));
  }

  show() {
    this.ui.guard(async () => {
      await fillTables(this.api, this.ui.$('q-table'));
      await this.loadIndexes();
    });
  }

  async loadIndexes() {
    const { $ } = this.ui;
    if (!$('q-table').value) return;
    this.table = await this.api.describe($('q-table').value);
    const indexes = [...(this.table.GlobalSecondaryIndexes || []), ...(this.table.LocalSecondaryIndexes || [])];
    $('q-index').replaceChildren(option('(the table)', ''), ...indexes.map((i) => option(i.IndexName)));
  }

  async run(start) {
    const { $ } = this.ui;
    const op = $('q-mode').value;
    const request = withExpressions({ TableName: $('q-table').value, ReturnConsumedCapacity: 'TOTAL' }, {
      IndexName: $('q-index').value,
      KeyConditionExpression: op === 'Query' ? $('q-key').value.trim() : '',
      FilterExpression: $('q-filter').value.trim(),
      ProjectionExpression: $('q-projection').value.trim(),
      ExpressionAttributeNames: jsonInput($('q-names'), 'Names'),
      ExpressionAttributeValues: jsonInput($('q-values'), 'Values'),
      Limit: $('q-limit').value ? Number($('q-limit').value) : undefined,
      ExclusiveStartKey: start || undefined,
    });
    if (op === 'Query') request.ScanIndexForward = $('q-forward').checked;
    const r = await this.api.call(op, request);
    this.next = r.LastEvaluatedKey || null;
    $('q-next').disabled = !this.next;
    const capacity = r.ConsumedCapacity ? `, ${r.ConsumedCapacity.CapacityUnits} read units` : '';
    $('q-summary').textContent = `${op}: ${r.Count} items (${r.ScannedCount} scanned)${capacity}`;
    renderItems($('q-grid'), r.Items || [], this.table);
  }
}

class PartiqlView {
  constructor(api, ui) {
    this.api = api;
    this.ui = ui;
    const { $ } = ui;
    this.next = null;
    $('pq-run').addEventListener('click', () => ui.guard(() => this.run(null)));
    $('pq-next').addEventListener('click', () => ui.guard(() => this.run(this.next)));
  }

  show() {}

  async run(token) {
    const { $ } = this.ui;
    const request = withExpressions({ Statement: $('pq-statement').value.trim() }, {
      Parameters: jsonInput($('pq-parameters'), 'Parameters'),
      NextToken: token || undefined,
    });
    const r = await this.api.call('ExecuteStatement', request);
    this.next = r.NextToken || null;
    $('pq-next').disabled = !this.next;
    const items = r.Items || [];
    $('pq-summary').textContent = `${items.length} items`;
    renderItems($('pq-grid'), items, null);
  }
}

class StreamsView {
  constructor(api, ui) {
    this.api = api;
    this.ui = ui;
    const { $ } = ui;
    this.watch = null;  // {arn, iterators: Map shard id -> iterator, timer}
    $('st-watch').addEventListener('click', () => ui.guard(() => this.start()));
    $('st-stop').addEventListener('click', () => this.stop('Stopped'));
  }

  show() { this.ui.guard(() => fillTables(this.api, this.ui.$('st-table'))); }

  async start() {
    const { $ } = this.ui;
    this.stop('');
    const table = await this.api.describe($('st-table').value);
    if (!table.LatestStreamArn || !(table.StreamSpecification || {}).StreamEnabled) {
      throw new Error(`Table ${table.TableName} has no stream: enable one with UpdateTable's StreamSpecification`);
    }
    this.watch = { arn: table.LatestStreamArn, iterators: new Map(), seen: new Set(), timer: null };
    await this.addShards('LATEST');
    $('st-stop').disabled = false;
    $('st-status').textContent = `Watching ${table.TableName} (${table.StreamSpecification.StreamViewType})`;
    const poll = async () => {
      if (!this.watch) return;
      await this.ui.guard(() => this.poll());
      if (this.watch) this.watch.timer = setTimeout(poll, 1000);
    };
    this.watch.timer = setTimeout(poll, 500);
  }

  stop(text) {
    if (this.watch) clearTimeout(this.watch.timer);
    this.watch = null;
    this.ui.$('st-stop').disabled = true;
    if (text !== '') this.ui.$('st-status').textContent = text;
  }

  // Starts reading every open shard not read yet: the first ones from `position`, shards that
  // appear later (after a shard closes) from their beginning.
  async addShards(position) {
    const w = this.watch;
    const r = await this.api.call('DescribeStream', { StreamArn: w.arn }, 'streams');
    for (const shard of r.StreamDescription.Shards || []) {
      if (w.seen.has(shard.ShardId)) continue;
      const open = !(shard.SequenceNumberRange || {}).EndingSequenceNumber;
      if (position === 'LATEST' && !open) continue;
      w.seen.add(shard.ShardId);
      const it = await this.api.call('GetShardIterator', {
        StreamArn: w.arn, ShardId: shard.ShardId, ShardIteratorType: position,
      }, 'streams');
      w.iterators.set(shard.ShardId, it.ShardIterator);
    }
  }

  async poll() {
    const w = this.watch;
    let closed = false;
    for (const [shard, iterator] of [...w.iterators]) {
      const r = await this.api.call('GetRecords', { ShardIterator: iterator, Limit: 100 }, 'streams');
      for (const record of r.Records || []) this.append(record);
      if (r.NextShardIterator) w.iterators.set(shard, r.NextShardIterator);
      else { w.iterators.delete(shard); closed = true; }
    }
    if (closed) await this.addShards('TRIM_HORIZON');
  }

  append(record) {
    const li = document.createElement('li');
    const d = record.dynamodb || {};
    const when = d.ApproximateCreationDateTime ? new Date(d.ApproximateCreationDateTime * 1000).toLocaleTimeString() : '';
    li.className = `record record-${record.eventName}`;
    const parts = [`${when} ${record.eventName} ${JSON.stringify(plain({ M: d.Keys || {} }))}`];
    if (d.OldImage) parts.push(`old: ${JSON.stringify(plain({ M: d.OldImage }))}`);
    if (d.NewImage) parts.push(`new: ${JSON.stringify(plain({ M: d.NewImage }))}`);
    li.textContent = parts.join('  ');
    this.ui.$('st-records').prepend(li);
    while (this.ui.$('st-records').children.length > 500) this.ui.$('st-records').lastChild.remove();
  }
}

class MetricsView {
  show() {}
}

export const VIEWS = {
  tables: TablesView,
  items: ItemsView,
  query: QueryView,
  partiql: PartiqlView,
  streams: StreamsView,
  metrics: MetricsView,
};
