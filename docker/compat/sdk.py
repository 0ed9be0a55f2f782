"""python docker/compat/sdk.py CONNECTION_STRING LABEL

The first call a user of the Python recipe in docs/containers.md makes with
the connection string it builds: a table, an entity written and read back,
the table deleted, through azure-data-tables as the conformance suite pins
it (conformance/python's virtualenv). docker/test-compat.sh runs it.
"""
import secrets
import sys
from importlib.metadata import version

from azure.data.tables import TableServiceClient


def main() -> None:
    cs, label = sys.argv[1], sys.argv[2]
    name = "compatpy" + secrets.token_hex(4)
    with TableServiceClient.from_connection_string(cs) as service:
        table = service.create_table(name)
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "Configuration": label})
        got = table.get_entity("p", "r")
        if got["Configuration"] != label:
            raise SystemExit(f"{label}: read back {dict(got)}, wrote {label}")
        service.delete_table(name)
    print(f"{label}: Python SDK (azure-data-tables {version('azure-data-tables')}): "
          "created a table, wrote and read an entity, deleted the table")


if __name__ == "__main__":
    main()
