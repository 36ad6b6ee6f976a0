// The console's client of fdyno's own API: every call is a signed POST to the listener that
// served the page (config.apiPath), exactly as an AWS SDK would send it.
import { sign } from './sigv4.js';

const TARGETS = { dynamodb: 'DynamoDB_20120810', streams: 'DynamoDBStreams_20120810' };

export class ApiError extends Error {
  constructor(type, message) {
    super(`${type}: ${message}`);
    this.type = type;
  }
}

export class Api {
  constructor(config, credentials) {
    this.config = config;
    this.credentials = credentials;  // {accessKeyId, secretAccessKey, region}
    this.onCall = () => {};  // (operation, request) before each call: the page's request log
  }

  // DynamoDB (or, with service 'streams', DynamoDB Streams) operation `op` with `request`.
  async call(op, request, service = 'dynamodb') {
    this.onCall(op, request);
    const body = JSON.stringify(request);
    const headers = {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `${TARGETS[service]}.${op}`,
    };
    const signed = sign({
      host: location.host, path: this.config.apiPath, headers, body,
      credentials: this.credentials, region: this.credentials.region, service: 'dynamodb',
      date: new Date(),
    });
    const response = await fetch(this.config.apiPath, {
      method: 'POST', headers: { ...headers, ...signed }, body, credentials: 'omit',
    });
    const text = await response.text();
    let json = {};
    try { json = text ? JSON.parse(text) : {}; } catch { json = { message: text }; }
    if (!response.ok) {
      const type = String(json.__type || `HTTP ${response.status}`).split('#').pop();
      throw new ApiError(type, json.message || json.Message || text);
    }
    return json;
  }

  // Every page of a paginated call: `next` gives the following request from a response, or
  // null at the end; `take` the items of a response. At most `limit` items.
  async all(op, request, take, next, limit = 10000) {
    const out = [];
    for (let r = request; r && out.length < limit;) {
      const response = await this.call(op, r);
      out.push(...take(response));
      r = next(response, r);
    }
    return out;
  }

  async tableNames() {
    return this.all('ListTables', {}, (r) => r.TableNames || [],
      (r) => (r.LastEvaluatedTableName ? { ExclusiveStartTableName: r.LastEvaluatedTableName } : null));
  }

  async describe(table) {
    return (await this.call('DescribeTable', { TableName: table })).Table;
  }
}

// The key of `item` under the table description's KeySchema.
export function keyOf(table, item) {
  const key = {};
  for (const k of table.KeySchema) key[k.AttributeName] = item[k.AttributeName];
  return key;
}

// Whether two attribute values (DynamoDB JSON) are the same.
export function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
