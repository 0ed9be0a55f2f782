"""User delegation keys and SAS for tables (docs/protocol.md 9.10), through
azure-data-tables over HTTPS with --oauth basic, as an application signed in
with Microsoft Entra ID meets them.

The SDK pinned here (12.7.0) has no get_user_delegation_key and no
user_delegation_key for generate_table_sas: those arrive in 12.8.0b1, which
is not on PyPI. So the key is asked for through the SDK's own pipeline with
its bearer-token policy (send_request), and the SAS is signed here, with the
standard library, from docs/protocol.md 9.10; the SDK then uses it through
AzureSasCredential for every table operation, as it would a SAS from 12.8.0b1."""

import base64
import datetime
import hashlib
import hmac
import ipaddress
import json
import os
import tempfile
import time
import xml.etree.ElementTree as ET
from urllib.parse import urlencode

import pytest
from azure.core.credentials import AccessToken, AzureSasCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.core.rest import HttpRequest
from azure.data.tables import TableClient, TableServiceClient

from conftest import COSMOS, start_server, table_name
from helpers import PERMISSION, expect_error

# User delegation keys and SAS are Table storage's (Microsoft Entra ID
# through Blob's Get User Delegation Key); Cosmos DB for Table has neither,
# and what it answers is not in the evidence (docs/cosmos.md).
pytestmark = pytest.mark.skipif(COSMOS, reason="user delegation SAS: a Table storage feature, not Cosmos DB's")

OID = "62c18f92-db7d-44d1-be01-46057bcaf9e2"
TID = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class FakeEntraToken:
    """A TokenCredential handing out a token shaped like Entra ID's for
    storage; --oauth basic checks its claims, not its signature
    (docs/security.md)."""

    def get_token(self, *scopes, **kwargs):
        now = int(time.time())
        claims = {"aud": "https://storage.azure.com", "iss": f"https://sts.windows.net/{TID}/",
                  "iat": now - 60, "nbf": now - 60, "exp": now + 3600, "oid": OID, "tid": TID}
        head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = b64url(json.dumps(claims).encode())
        sig = b64url(hmac.new(b"not the issuer's key", f"{head}.{body}".encode(), hashlib.sha256).digest())
        return AccessToken(f"{head}.{body}.{sig}", now + 3600)


@pytest.fixture(scope="module")
def tls_server(server):
    """A tableemu of its own serving HTTPS with --oauth basic, its
    certificate trusted by this process (REQUESTS_CA_BUNDLE)."""
    if not server.own:
        pytest.skip("needs a tableemu of its own (TABLEEMU_TEST_CONNECTION_STRING is set)")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    d = tempfile.mkdtemp(prefix="tableemu-py-tls-")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tableemu test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(hours=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    old = os.environ.get("REQUESTS_CA_BUNDLE")
    os.environ["REQUESTS_CA_BUNDLE"] = cert_path
    srv = start_server(0, "--oauth", "basic", "--cert", cert_path, "--key", key_path)
    yield srv
    srv.stop()
    if old is None:
        os.environ.pop("REQUESTS_CA_BUNDLE", None)
    else:
        os.environ["REQUESTS_CA_BUNDLE"] = old


def iso(t: datetime.datetime) -> str:
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def get_key(tsc: TableServiceClient, start, expiry, version="2025-07-05"):
    """Get User Delegation Key through the SDK's pipeline (its bearer-token
    policy signs it); returns the response."""
    body = ("<?xml version='1.0' encoding='utf-8'?>\n<KeyInfo>"
            + (f"<Start>{iso(start)}</Start>" if start else "")
            + f"<Expiry>{iso(expiry)}</Expiry></KeyInfo>")
    req = HttpRequest("POST", tsc.url.rstrip("/") + "/?restype=service&comp=userdelegationkey",
                      headers={"Content-Type": "application/xml", "x-ms-version": version}, content=body.encode())
    return tsc._client.send_request(req)


def read_key(resp):
    assert resp.status_code == 200, f"{resp.status_code} {resp.headers.get('x-ms-error-code')}: {resp.text()}"
    root = ET.fromstring(resp.content.lstrip(b"\xef\xbb\xbf"))
    assert root.tag == "UserDelegationKey"
    return {child.tag: child.text for child in root}


def user_delegation_sas(account, table, permission, key, start, expiry, **ranges):
    """A user delegation SAS for table, signed here (docs/protocol.md 9.10)."""
    f = {"sv": "2025-07-05", "tn": table, "sp": permission, "spr": "https", "st": iso(start), "se": iso(expiry),
         "skoid": key["SignedOid"], "sktid": key["SignedTid"], "skt": key["SignedStart"], "ske": key["SignedExpiry"],
         "sks": key["SignedService"], "skv": key["SignedVersion"], **ranges}
    sts = "\n".join([f["sp"], f["st"], f["se"], f"/table/{account}/{table.lower()}",
                     f["skoid"], f["sktid"], f["skt"], f["ske"], f["sks"], f["skv"], "", "",
                     "", f["spr"], f["sv"], f.get("spk", ""), f.get("srk", ""), f.get("epk", ""), f.get("erk", "")])
    f["sig"] = base64.b64encode(hmac.new(base64.b64decode(key["Value"]), sts.encode(), hashlib.sha256).digest()).decode()
    return urlencode(f)


def test_user_delegation_sas(tls_server):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    start, expiry = now - datetime.timedelta(minutes=5), now + datetime.timedelta(hours=1)
    with TableServiceClient(tls_server.endpoint, credential=FakeEntraToken()) as tsc:
        key = read_key(get_key(tsc, start, expiry))
        assert key["SignedOid"] == OID and key["SignedTid"] == TID
        assert key["SignedStart"] == iso(start) and key["SignedExpiry"] == iso(expiry)
        assert key["SignedService"] == "t" and key["SignedVersion"] == "2025-07-05"
        assert len(base64.b64decode(key["Value"])) == 32

        name = table_name()
        tsc.create_table(name)  # with the token, as the SDK's own test does
        try:
            token = user_delegation_sas(tls_server.account, name, "raud", key, start, expiry)
            sas = TableClient(tls_server.endpoint, name, credential=AzureSasCredential(token))
            sas.create_entity({"PartitionKey": "pk", "RowKey": "rk1", "Value": "test_value"})
            assert sas.get_entity("pk", "rk1")["Value"] == "test_value"
            sas.upsert_entity({"PartitionKey": "pk", "RowKey": "rk2", "Value": "other"})
            assert sorted(e["RowKey"] for e in sas.query_entities("PartitionKey eq 'pk'")) == ["rk1", "rk2"]
            sas.delete_entity("pk", "rk2")

            # Too narrow: read only, then a key range.
            ro = TableClient(tls_server.endpoint, name, credential=AzureSasCredential(
                user_delegation_sas(tls_server.account, name, "r", key, start, expiry)))
            assert ro.get_entity("pk", "rk1")["Value"] == "test_value"
            with expect_error(HttpResponseError, 403, PERMISSION):
                ro.upsert_entity({"PartitionKey": "pk", "RowKey": "rk3"})
            ranged = TableClient(tls_server.endpoint, name, credential=AzureSasCredential(
                user_delegation_sas(tls_server.account, name, "raud", key, start, expiry, spk="a", epk="m")))
            with expect_error(HttpResponseError, 403, "AuthorizationFailure"):
                ranged.upsert_entity({"PartitionKey": "z", "RowKey": "1"})

            # A key tableemu never issued: another object id than the key's.
            forged = dict(key, SignedOid="00000000-db7d-44d1-be01-46057bcaf9e2")
            bad = TableClient(tls_server.endpoint, name, credential=AzureSasCredential(
                user_delegation_sas(tls_server.account, name, "raud", forged, start, expiry)))
            with expect_error(ClientAuthenticationError, 403, "AuthenticationFailed"):
                bad.get_entity("pk", "rk1")
        finally:
            tsc.delete_table(name)


def test_get_user_delegation_key_refusals(tls_server):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    with TableServiceClient(tls_server.endpoint, credential=FakeEntraToken()) as tsc:
        cases = [
            # Expiry past, and more than seven days away (Blob's answer).
            (get_key(tsc, now - datetime.timedelta(hours=2), now - datetime.timedelta(hours=1)), 400, "InvalidXmlNodeValue"),
            (get_key(tsc, None, now + datetime.timedelta(days=8)), 400, "InvalidXmlNodeValue"),
            # Before 2025-07-05 the Table service had no such operation.
            (get_key(tsc, None, now + datetime.timedelta(hours=1), version="2024-08-04"), 400, "InvalidUri"),
        ]
        for resp, status, code in cases:
            assert (resp.status_code, resp.headers.get("x-ms-error-code")) == (status, code), resp.text()
    # The account key may not ask for one (live Blob: 403 AuthenticationFailed).
    with TableServiceClient(tls_server.endpoint, credential=tls_server.credential) as tsc:
        resp = get_key(tsc, None, now + datetime.timedelta(hours=1))
        assert (resp.status_code, resp.headers.get("x-ms-error-code")) == (403, "AuthenticationFailed"), resp.text()
