"""Paging under tableemu --profile cosmos (docs/cosmos.md, "Queries and
paging"): azure-data-tables, in its Cosmos mode (a localhost endpoint on a
port other than 10002), reads Cosmos DB for Table's continuation
(NextPartitionKey {"token":...,"range":{...}}, an array after the first
page; NextRowKey "NA") and sends it back, page after page and from a saved
token."""

import re

import pytest
from azure.data.tables import TableServiceClient

from conftest import start_server, table_name

FIRST = re.compile(r'^\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}$')
LATER = re.compile(r'^\[\{"token":"[A-Za-z0-9+/]+=*","range":\{"min":"","max":"FF"\}\}\]$')
KEYS = [(pk, "r%02d" % i) for pk in ["a", "b'1", "c é", "d+=&"] for i in range(7)]


@pytest.fixture
def cosmos_service(server):
    if not server.own:
        pytest.skip("needs a tableemu of its own (TABLEEMU_TEST_CONNECTION_STRING is set)")
    srv = start_server(0, "--profile", "cosmos")
    cs = srv.connection_string.replace("127.0.0.1", "localhost")
    with TableServiceClient.from_connection_string(cs) as svc:
        assert svc._cosmos_endpoint, "the SDK is in its Cosmos mode"
        yield svc
    srv.stop()


def test_pages_with_cosmos_tokens(cosmos_service):
    t = cosmos_service.create_table(table_name())
    for pk, rk in KEYS:
        t.create_entity({"PartitionKey": pk, "RowKey": rk})
    got, tokens = [], []
    pager = t.list_entities(results_per_page=3).by_page()
    for page in pager:
        got += [(e["PartitionKey"], e["RowKey"]) for e in page]
        tokens.append(pager.continuation_token)
    assert got == KEYS
    assert len(tokens) == 10 and tokens[-1] is None
    assert FIRST.match(tokens[0]["PartitionKey"]), tokens[0]
    assert all(LATER.match(tok["PartitionKey"]) and tok["RowKey"] == "NA" for tok in tokens[1:-1]), tokens

    # From a saved token, as a web page of results would.
    resumed = next(t.list_entities(results_per_page=3).by_page(continuation_token=tokens[0]))
    assert [(e["PartitionKey"], e["RowKey"]) for e in resumed] == KEYS[3:6]
