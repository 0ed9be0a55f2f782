"""The async clients (azure.data.tables.aio over aiohttp): CRUD, query
paging with continuation tokens, transactions, SAS and errors. Each test is
an `async def` run in its own event loop (see conftest.py)."""

import datetime
import uuid

import pytest
from azure.core import MatchConditions
from azure.core.credentials import AzureSasCredential
from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.core.pipeline.transport import AioHttpTransport
from azure.data.tables import (
    EdmType,
    EntityProperty,
    RequestTooLargeError,
    TableSasPermissions,
    TableTransactionError,
    UpdateMode,
    generate_table_sas,
)
from azure.data.tables.aio import TableClient, TableServiceClient

from conftest import COSMOS, table_name
from helpers import PERMISSION, TABLE_NOT_FOUND, expect_error


class aio_table:
    """async with aio_table(server) as (svc, table): a new table, deleted after."""

    def __init__(self, server):
        self.server = server

    async def __aenter__(self):
        self.svc = TableServiceClient.from_connection_string(self.server.connection_string)
        await self.svc.__aenter__()
        self.name = table_name("aio")
        self.table = await self.svc.create_table(self.name)
        return self.svc, self.table

    async def __aexit__(self, *exc):
        await self.svc.delete_table(self.name)
        await self.table.close()
        await self.svc.__aexit__(*exc)


async def collect(pager):
    return [e async for e in pager]


async def test_transport_is_aiohttp(server):
    async with TableServiceClient.from_connection_string(server.connection_string) as svc:
        assert isinstance(svc._client._client._pipeline._transport, AioHttpTransport)
        await collect(svc.list_tables())


async def test_tables_crud(server):
    async with TableServiceClient.from_connection_string(server.connection_string) as svc:
        name = table_name("aio")
        await svc.create_table(name)
        with expect_error(ResourceExistsError, 409, "TableAlreadyExists"):
            await svc.create_table(name)
        again = await svc.create_table_if_not_exists(name)
        assert again.table_name == name
        found = await collect(svc.query_tables("TableName eq @n", parameters={"n": name}))
        assert [t.name for t in found] == [name]
        await svc.delete_table(name)
        assert await collect(svc.query_tables("TableName eq @n", parameters={"n": name})) == []
        # results_per_page paging over tables with a common prefix.
        prefix = table_name("aiopg")[:14]
        names = [prefix + str(i) for i in range(3)]
        for n in names:
            await svc.create_table(n)
        try:
            pages = []
            async for page in svc.query_tables("TableName ge @lo and TableName lt @hi", parameters={"lo": prefix, "hi": prefix + "z"},
                                               results_per_page=2).by_page():
                pages.append([t.name async for t in page])
            assert pages == [names[:2], names[2:]]
        finally:
            for n in names:
                await svc.delete_table(n)


async def test_entities_crud(server):
    async with aio_table(server) as (svc, t):
        created = await t.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1, "Keep": "k",
                                         "L": EntityProperty(2**60 + 1, EdmType.INT64), "G": uuid.UUID(int=7),
                                         "D": float("nan"), "T": datetime.datetime(2020, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)})
        with expect_error(ResourceExistsError, 409, "EntityAlreadyExists", decoded=False):
            await t.create_entity({"PartitionKey": "p", "RowKey": "r"})
        e = await t.get_entity("p", "r")
        assert e.metadata["etag"] == created["etag"]
        assert e["L"] == EntityProperty(2**60 + 1, EdmType.INT64) and e["G"] == uuid.UUID(int=7) and e["D"] != e["D"]
        assert e["T"] == datetime.datetime(2020, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)
        sel = await t.get_entity("p", "r", select=["V"])
        assert dict(sel) == {"V": 1}
        await t.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}, mode=UpdateMode.MERGE,
                              etag=e.metadata["etag"], match_condition=MatchConditions.IfNotModified)
        with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
            await t.update_entity({"PartitionKey": "p", "RowKey": "r", "V": 3}, mode=UpdateMode.REPLACE,
                                  etag=e.metadata["etag"], match_condition=MatchConditions.IfNotModified)
        await t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "V": 4}, mode=UpdateMode.REPLACE)
        assert dict(await t.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "V": 4}
        with expect_error(ResourceModifiedError, 412, "UpdateConditionNotSatisfied"):
            await t.delete_entity("p", "r", etag=e.metadata["etag"], match_condition=MatchConditions.IfNotModified)
        await t.delete_entity("p", "r")
        with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
            await t.get_entity("p", "r")
        with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
            await t.update_entity({"PartitionKey": "p", "RowKey": "r"})


async def test_query_paging_and_tokens(server):
    async with aio_table(server) as (svc, t):
        for pk in ["a", "b"]:
            await t.submit_transaction([("create", {"PartitionKey": pk, "RowKey": f"{i:03d}", "N": i}) for i in range(30)])
        flt = "N lt @n and PartitionKey ne @skip"
        params = {"n": 25, "skip": "none"}  # 50 entities
        pager = t.query_entities(flt, parameters=params, results_per_page=20, select=["N"]).by_page()
        first = [e async for e in await pager.__anext__()]
        assert len(first) == 20 and all(set(e) == {"N"} for e in first)
        token = pager.continuation_token
        assert token
        sizes = []
        async for page in t.query_entities(flt, parameters=params, results_per_page=20).by_page(continuation_token=token):
            sizes.append(len([e async for e in page]))
        assert sizes == [20, 10]
        assert len(await collect(t.list_entities())) == 60
        # true/false filters (docs/protocol.md 0.1).
        assert await collect(t.query_entities("false")) == []
        assert len(await collect(t.query_entities("(true and RowKey eq '001')"))) == 2


async def test_transactions(server):
    async with aio_table(server) as (svc, t):
        await t.create_entity({"PartitionKey": "p", "RowKey": "old", "V": 0})
        await t.create_entity({"PartitionKey": "p", "RowKey": "gone"})
        res = await t.submit_transaction([
            ("create", {"PartitionKey": "p", "RowKey": "new"}),
            ("upsert", {"PartitionKey": "p", "RowKey": "old", "V": 1}, {"mode": "merge"}),
            ("delete", {"PartitionKey": "p", "RowKey": "gone"}),
        ])
        assert len(res) == 3 and res[0]["etag"] and res[1]["etag"]
        with pytest.raises(TableTransactionError) as info:
            await t.submit_transaction([
                ("create", {"PartitionKey": "p", "RowKey": "x"}),
                ("update", {"PartitionKey": "p", "RowKey": "old", "V": 2}),
                ("create", {"PartitionKey": "p", "RowKey": "new"}),
            ])
        assert (info.value.index, info.value.status_code, info.value.error_code) == (2, 409, "EntityAlreadyExists")
        assert sorted(e["RowKey"] for e in await collect(t.list_entities())) == ["new", "old"]
        assert (await t.get_entity("p", "old"))["V"] == 1
        with pytest.raises(RequestTooLargeError) as info:
            await t.submit_transaction([("create", {"PartitionKey": "p", "RowKey": f"b{i}", "S": "x" * 30000, "T": "y" * 12000}) for i in range(100)])
        assert (info.value.status_code, info.value.error_code) == (413, "RequestBodyTooLarge")
        assert len(await collect(t.list_entities())) == 2


async def test_sas_and_errors(server):
    async with aio_table(server) as (svc, t):
        await t.create_entity({"PartitionKey": "p", "RowKey": "r"})
        # Cosmos DB refuses a SAS naming key ranges (405 MethodNotAllowed,
        # test_legacy.py's test_table_sas_key_range): none on the cosmos run.
        ranges = {} if COSMOS else {"start_pk": "p", "end_pk": "p"}
        token = generate_table_sas(server.credential, t.table_name, permission=TableSasPermissions(read=True),
                                   expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
                                   **ranges)
        async with TableClient(server.endpoint, t.table_name, credential=AzureSasCredential(token)) as sc:
            assert (await sc.get_entity("p", "r"))["RowKey"] == "r"
            with expect_error(HttpResponseError, 403, PERMISSION):
                await sc.upsert_entity({"PartitionKey": "p", "RowKey": "x"})
            # Outside the key range a point read finds nothing (docs/protocol.md 0.1).
            if ranges:
                with expect_error(ResourceNotFoundError, 404, "ResourceNotFound"):
                    await sc.get_entity("q", "r")
        async with TableClient(server.endpoint, t.table_name, credential=AzureSasCredential(token + "&sp=r")) as sc:
            with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
                await sc.get_entity("p", "r")
        with expect_error(HttpResponseError, 400, "InvalidInput"):
            await collect(t.query_entities("RowKey eq"))
        with expect_error(HttpResponseError, 501, "NotImplemented"):
            await collect(t.query_entities("1 eq 2"))
        missing = svc.get_table_client(table_name())
        with expect_error(ResourceNotFoundError, 404, TABLE_NOT_FOUND):
            await missing.get_entity("p", "r")
        # Service properties and stats through aio.
        if COSMOS:  # 405 on Cosmos DB: see test_service.py
            with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
                await svc.get_service_properties()
            with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
                await svc.get_service_stats()
            return
        props = await svc.get_service_properties()
        assert "cors" in props
        stats = await svc.get_service_stats()
        assert stats["geo_replication"]["status"] == "live"
