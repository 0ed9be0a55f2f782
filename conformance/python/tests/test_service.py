"""Service properties with CORS, and service stats on the -secondary endpoint
(docs/protocol.md 3.5-3.7). Properties are account-wide, so these tests run
against a tableemu of their own."""

import urllib.error
import urllib.request

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import (
    TableAnalyticsLogging,
    TableCorsRule,
    TableMetrics,
    TableRetentionPolicy,
    TableServiceClient,
)

from conftest import COSMOS
from helpers import expect_error


def preflight(endpoint, origin, method, headers=None):
    req = urllib.request.Request(endpoint + "/Tables", method="OPTIONS")
    req.add_header("Origin", origin)
    req.add_header("Access-Control-Request-Method", method)
    if headers:
        req.add_header("Access-Control-Request-Headers", headers)
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


# Cosmos DB refuses every Set Service Properties: 405 MethodNotAllowed
# (test_too_many_cors_rules, test_retention_too_long; docs/cosmos.md), and
# Get too (not in the evidence; the FAQ lists it as unsupported).
def test_service_properties_with_cors(own_server):
    with TableServiceClient.from_connection_string(own_server.connection_string) as svc:
        if COSMOS:
            for cors in ([TableCorsRule(["https://a.example"], ["GET"])] * 6, []):
                with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
                    svc.set_service_properties(cors=cors)
            with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
                svc.get_service_properties()
            return
        props = svc.get_service_properties()
        assert set(props) == {"analytics_logging", "hour_metrics", "minute_metrics", "cors"}
        assert props["cors"] == []
        rules = [
            TableCorsRule(["https://app.example", "https://other.example"], ["GET", "PUT", "MERGE"],
                          allowed_headers=["x-ms-meta-*", "content-type"], exposed_headers=["x-ms-request-id"],
                          max_age_in_seconds=300),
            TableCorsRule(["*"], ["GET"]),
        ]
        svc.set_service_properties(
            analytics_logging=TableAnalyticsLogging(read=True, write=True, delete=False,
                                                    retention_policy=TableRetentionPolicy(enabled=True, days=7)),
            hour_metrics=TableMetrics(enabled=True, include_apis=True, retention_policy=TableRetentionPolicy(enabled=True, days=5)),
            minute_metrics=TableMetrics(enabled=False),
            cors=rules,
        )
        got = svc.get_service_properties()
        log = got["analytics_logging"]
        assert (log.read, log.write, log.delete, log.retention_policy.enabled, log.retention_policy.days) == (True, True, False, True, 7)
        hm = got["hour_metrics"]
        assert (hm.enabled, hm.include_apis, hm.retention_policy.days) == (True, True, 5)
        assert got["minute_metrics"].enabled is False
        cors = got["cors"]
        assert len(cors) == 2
        assert cors[0].allowed_origins == ["https://app.example", "https://other.example"]
        assert cors[0].allowed_methods == ["GET", "PUT", "MERGE"]
        # Literal names first, then prefixes, as the service returns them
        # (docs/protocol.md 3.5, live test_set_cors).
        assert cors[0].allowed_headers == ["content-type", "x-ms-meta-*"]
        assert cors[0].exposed_headers == ["x-ms-request-id"]
        assert cors[0].max_age_in_seconds == 300
        assert (cors[1].allowed_origins, cors[1].allowed_methods) == (["*"], ["GET"])

        # The rules take effect on preflight requests.
        status, h = preflight(own_server.endpoint, "https://app.example", "PUT", "x-ms-meta-color, content-type")
        assert status == 200 and h["Access-Control-Allow-Origin"] == "https://app.example"
        assert h["Access-Control-Max-Age"] == "300"
        status, h = preflight(own_server.endpoint, "https://elsewhere.example", "PUT")
        assert status == 403 and h["x-ms-error-code"] == "CorsPreflightFailure"
        # A preflight names the request's origin, even under a "*" rule.
        status, h = preflight(own_server.endpoint, "https://elsewhere.example", "GET")
        assert status == 200 and h["Access-Control-Allow-Origin"] == "https://elsewhere.example"

        # Setting only CORS keeps logging and metrics as they were.
        svc.set_service_properties(cors=[TableCorsRule(["https://only.example"], ["DELETE"])])
        got = svc.get_service_properties()
        assert got["analytics_logging"].read is True and got["hour_metrics"].retention_policy.days == 5
        assert [r.allowed_origins for r in got["cors"]] == [["https://only.example"]]

        # More than five rules: 400 InvalidXmlDocument.
        with expect_error(HttpResponseError, 400, "InvalidXmlDocument"):
            svc.set_service_properties(cors=[TableCorsRule(["https://a.example"], ["GET"])] * 6)
        # A method the service does not know.
        with expect_error(HttpResponseError, 400, "InvalidXmlDocument"):
            svc.set_service_properties(cors=[TableCorsRule(["https://a.example"], ["FETCH"])])
        # An empty CORS list clears the rules (docs/protocol.md 0.1).
        svc.set_service_properties(cors=[])
        assert svc.get_service_properties()["cors"] == []
        status, h = preflight(own_server.endpoint, "https://only.example", "DELETE")
        assert status == 403


# Cosmos DB serves no service properties, statistics or table ACLs (its
# FAQ); tableemu's profile refuses them as Cosmos DB refuses Set Service
# Properties, 405 MethodNotAllowed (docs/cosmos.md, "What Cosmos DB refuses").
def test_service_stats_on_secondary(service, server):
    # The SDK sends get_service_stats to the secondary endpoint, the account
    # name with -secondary (docs/protocol.md 1.1, 3.6). With a path-style
    # endpoint its URL holds the account twice,
    # /devstoreaccount1-secondary/devstoreaccount1/?restype=service&comp=stats,
    # which tableemu serves as Azurite does.
    assert service._secondary_hostname.endswith(f"/{server.account}-secondary")
    if COSMOS:
        with expect_error(HttpResponseError, 405, "MethodNotAllowed"):
            service.get_service_stats()
        return
    stats = service.get_service_stats()
    geo = stats["geo_replication"]
    assert geo["status"] == "live"
    assert geo["last_sync_time"] is not None


def test_service_stats_on_primary_is_refused(server):
    # Pointing the secondary at the primary makes the SDK ask the primary:
    # 400 InvalidQueryParameterValue, as from Azurite.
    host = server.endpoint.split("://", 1)[1].split("/", 1)[0]
    with TableServiceClient.from_connection_string(server.connection_string, secondary_hostname=host) as svc:
        # Cosmos DB: 405, as above.
        with expect_error(HttpResponseError, *((405, "MethodNotAllowed") if COSMOS else (400, "InvalidQueryParameterValue"))):
            svc.get_service_stats()


def test_reads_from_the_secondary(server, table):
    # location_mode="secondary" sends reads to the -secondary endpoint (a
    # TableClient's as /devstoreaccount1-secondary/t(), the account once,
    # signed over the primary's path); the secondary serves the same data,
    # there being one copy.
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
    with TableServiceClient.from_connection_string(server.connection_string, location_mode="secondary") as svc:
        t = svc.get_table_client(table.table_name)
        assert t.get_entity("p", "r")["V"] == 1
        assert [e["RowKey"] for e in t.query_entities("V eq 1")] == ["r"]
        assert table.table_name in [x.name for x in svc.list_tables()]
