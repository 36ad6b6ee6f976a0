// The JavaScript SDK v3 meeting a lost answer: TransactWriteItems with a ClientRequestToken,
// whose first answer fdyno loses after the commit (fault rule lose-response-after-commit), is
// sent again with the same token by the application and applies once; without the token the
// second send applies again. Node 18 or later, and @aws-sdk/client-dynamodb:
//
//   npm install @aws-sdk/client-dynamodb
//   FDYNO_ENDPOINT=http://127.0.0.1:8000 FDYNO_FAULTS_URL=http://127.0.0.1:8001/faults \
//     node lost_response_transaction.mjs
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import {
  CreateTableCommand, DynamoDBClient, GetItemCommand, TransactWriteItemsCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";

const endpoint = process.env.FDYNO_ENDPOINT ?? "http://127.0.0.1:8000";
const faultsUrl = process.env.FDYNO_FAULTS_URL ?? `${endpoint}/faults`;
const client = new DynamoDBClient({
  endpoint, region: "us-east-1", maxAttempts: 1,
  credentials: { accessKeyId: "fdyno-example", secretAccessKey: "fdyno-example" },
});

async function setRules(rules) {
  const answer = await fetch(faultsUrl, { method: "PUT", body: JSON.stringify({ rules }) });
  assert.equal(answer.status, 200, await answer.text());
}

// Sends until answered: the application's own retry loop (a lost answer is a network error).
async function withRetry(send) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await send();
    } catch (e) {
      if (e.$metadata?.httpStatusCode) throw e; // an answer: not lost
    }
  }
  throw new Error("no answer after 5 attempts");
}

async function counter(table, key) {
  const { Item } = await client.send(new GetItemCommand({
    TableName: table, Key: { id: { S: key } }, ConsistentRead: true }));
  return Item ? Number(Item.n.N) : 0;
}

function increment(table, key, token) {
  return new TransactWriteItemsCommand({
    ClientRequestToken: token,
    TransactItems: [{ Update: {
      TableName: table, Key: { id: { S: key } }, UpdateExpression: "ADD n :one",
      ExpressionAttributeValues: { ":one": { N: "1" } } } }],
  });
}

const table = `example-${randomUUID().slice(0, 8)}`;
await client.send(new CreateTableCommand({
  TableName: table, BillingMode: "PAY_PER_REQUEST",
  AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
  KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
}));
await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: table });
// The first answer for each counter is lost after its commit.
await setRules(["tokened", "untokened"].map((key) => ({
  name: `lose-${key}`, operations: ["TransactWriteItems"], tables: [table],
  key: { id: { S: key } }, times: 1, action: "lose-response-after-commit", mode: "reset" })));
try {
  const token = randomUUID();
  await withRetry(() => client.send(increment(table, "tokened", token)));
  // A fresh token per send, as an application that builds the request again would do.
  await withRetry(() => client.send(increment(table, "untokened", randomUUID())));
} finally {
  await fetch(faultsUrl, { method: "DELETE" });
}
const tokened = await counter(table, "tokened");
const untokened = await counter(table, "untokened");
console.log(`same token on the retry: counted ${tokened}; a new token each send: ${untokened}`);
assert.equal(tokened, 1);
assert.equal(untokened, 2);
