"use strict";
// The set-up shared by the tests that run @azure/data-tables in its Cosmos
// mode against a tableemu of their own (test/data-tables/cosmos-*.test.js):
// the SDK takes an endpoint on host "localhost" whose path does not start
// with /devstoreaccount1, and whose account is not the first of the
// client's AZURITE_ACCOUNTS, for Cosmos DB (docs/cosmos.md, "The SDKs'
// Cosmos mode"). So tableemu serves an account of the test's own, named in
// AZURITE_ACCOUNTS for the server only, and the client reaches it as
// http://localhost:<port>/<account>.

const crypto = require("node:crypto");
const { TableClient, TableServiceClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const h = require("./harness");
const dt = require("./dt");

// startCosmosMode starts tableemu with args (["--profile", "cosmos"], or
// none to meet the Cosmos mode under the default profile) serving only
// account, with a random key. It resolves to the server (its stop() ends
// it) with the endpoint and credential a Cosmos-mode client uses.
async function startCosmosMode(args = [], account = "mycosmos") {
  const key = crypto.randomBytes(64).toString("base64");
  const server = await h.startServer(args, { AZURITE_ACCOUNTS: `${account}:${key}` });
  return {
    ...server,
    account,
    endpoint: `http://localhost:${server.port}/${account}`,
    credential: new AzureNamedKeyCredential(account, key),
  };
}

// cosmosModeTable creates a table on srv (from startCosmosMode) and
// resolves to a TableClient of it in the SDK's Cosmos mode.
async function cosmosModeTable(srv) {
  delete process.env.AZURITE_ACCOUNTS; // the SDK reads it to rule out Cosmos
  const name = h.tableName();
  await new TableServiceClient(srv.endpoint, srv.credential, dt.clientOptions).createTable(name);
  return new TableClient(srv.endpoint, name, srv.credential, dt.clientOptions);
}

module.exports = { startCosmosMode, cosmosModeTable };
