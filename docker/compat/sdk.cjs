// node docker/compat/sdk.cjs CONNECTION_STRING LABEL — the first call a
// user of @testcontainers/azurite makes with getConnectionString(): a
// table, an entity written and read back, the table deleted, through the
// JavaScript SDK the conformance suite pins (conformance/js; NODE_PATH
// points at its node_modules). docker/test-compat.sh runs it.
"use strict";
const { TableServiceClient, TableClient } = require("@azure/data-tables");
const version = require("@azure/data-tables/package.json").version;

async function main() {
  const [cs, label] = process.argv.slice(2);
  // http endpoints, as the module's connection string has.
  const options = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
  const name = "compatjs" + Math.random().toString(16).slice(2, 10);
  const service = TableServiceClient.fromConnectionString(cs, options);
  await service.createTable(name);
  const table = TableClient.fromConnectionString(cs, name, options);
  await table.upsertEntity({ partitionKey: "p", rowKey: "r", Configuration: label });
  const got = await table.getEntity("p", "r");
  if (got.Configuration !== label) throw new Error(`read back ${JSON.stringify(got)}, wrote ${label}`);
  await service.deleteTable(name);
  console.log(`${label}: JavaScript SDK (@azure/data-tables ${version}): created a table, wrote and read an entity, deleted the table`);
}

main().catch((err) => {
  console.error(`${process.argv[3]}: the JavaScript SDK's call failed: ${err.message}`);
  process.exit(1);
});
