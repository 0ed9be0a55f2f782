package tableemu.conformance;

import com.azure.core.http.rest.PagedResponse;
import com.azure.core.http.rest.Response;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.ListTablesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableItem;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static tableemu.conformance.Errors.assertServiceError;
import static tableemu.conformance.Errors.assertSwallowed;

/** Tables through TableServiceClient and TableClient: create, list, delete (docs/protocol.md 1.4, 3.1–3.3). */
class TablesTest extends Base {

    private static List<String> names(Iterable<TableItem> items) {
        List<String> out = new ArrayList<>();
        items.forEach(t -> out.add(t.getName()));
        return out;
    }

    private static String eqFilter(String name) {
        return "TableName eq '" + name + "'";
    }

    @Test
    void createTableIfNotExistsCreatesOnceThenFindsIt() {
        TableServiceClient svc = Target.service();
        String name = cleanup(Target.tableName("ifne"));
        Response<TableClient> first = svc.createTableIfNotExistsWithResponse(name, null, null);
        assertEquals(204, first.getStatusCode(), "created (the SDK asks for return-no-content)");
        // The service's response headers (docs/protocol.md 2.2): the SDK's client request id
        // echoed, a request id, the request's version echoed, a Date.
        // Cosmos DB sends none of the three (every net-cosmos recording).
        String clientId = first.getRequest().getHeaders().getValue("x-ms-client-request-id");
        assertNotNull(clientId);
        assertEquals(Target.COSMOS ? null : clientId, first.getHeaders().getValue("x-ms-client-request-id"));
        assertEquals(Target.COSMOS, first.getHeaders().getValue("x-ms-request-id") == null);
        assertEquals("2020-12-06", first.getRequest().getHeaders().getValue("x-ms-version"));
        assertEquals(Target.COSMOS ? null : "2020-12-06", first.getHeaders().getValue("x-ms-version"));
        assertNotNull(first.getHeaders().getValue("Date"));
        first.getValue().createEntity(new TableEntity("p", "r"));

        // The second call sees the service's 409 and hands back a client for the table.
        Response<TableClient> second = svc.createTableIfNotExistsWithResponse(name, null, null);
        assertSwallowed(second, 409, "TableAlreadyExists");
        assertEquals("r", second.getValue().getEntity("p", "r").getRowKey());
        assertNotNull(svc.createTableIfNotExists(name));

        // TableClient.createTableIfNotExists... is TableClient.createTable here: a plain create.
        TableClient c = Target.table(name);
        assertServiceError(409, "TableAlreadyExists", c::createTable);
    }

    @Test
    void createTableAndDeleteThroughTableClient() {
        String name = Target.tableName("tc");
        TableClient c = Target.table(name);
        TableItem item = c.createTable();
        assertEquals(name, item.getName());
        c.createEntity(new TableEntity("p", "r"));
        c.deleteTable();
        assertServiceError(404, Cosmos.tableNotFound(), () -> c.getEntity("p", "r"));
        // Deleting it again: the SDK swallows the 404; the response is the service's.
        assertSwallowed(c.deleteTableWithResponse(null, null), 404, "ResourceNotFound");
    }

    @Test
    void refusesADuplicateNameRegardlessOfCase() {
        TableServiceClient svc = Target.service();
        String name = cleanup(Target.tableName("dup"));
        svc.createTable(name);
        assertServiceError(409, "TableAlreadyExists", () -> svc.createTable(name));
        if (Target.COSMOS) {
            // Cosmos DB's table names are case-sensitive (its FAQ): another table, beside the
            // first (docs/cosmos.md, "table names").
            svc.createTable(name.toUpperCase());
            svc.deleteTable(name.toUpperCase());
            return;
        }
        assertServiceError(409, "TableAlreadyExists", () -> svc.createTable(name.toUpperCase()));
    }

    @Test
    void checksTableNamesWithTheServiceCodes() {
        TableServiceClient svc = Target.service();
        assertServiceError(400, "InvalidResourceName", () -> svc.createTable("invalid_table_name"));
        assertServiceError(400, "InvalidResourceName", () -> svc.createTable("1nvalid"));
        assertServiceError(400, "OutOfRangeInput", () -> svc.createTable("tt"));
        assertServiceError(400, "OutOfRangeInput", () -> svc.createTable("t".repeat(64)));
        assertServiceError(400, "InvalidInput", () -> svc.createTable("tables"));
    }

    @Test
    void deletingAMissingTableIs404ResourceNotFound() {
        Response<Void> r = Target.service().deleteTableWithResponse(Target.tableName("gone"), null, null);
        assertSwallowed(r, 404, "ResourceNotFound");
    }

    @Test
    void listsWithAFilterAndPagesWithTop() {
        TableServiceClient svc = Target.service();
        String prefix = Target.tableName("pg");
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String name = cleanup(prefix + String.format("%02d", i));
            svc.createTable(name);
            made.add(name);
        }
        // A prefix as a range: ge prefix and lt the prefix with its last character incremented.
        char last = prefix.charAt(prefix.length() - 1);
        String upper = prefix.substring(0, prefix.length() - 1) + (char) (last + 1);
        String filter = "TableName ge '" + prefix + "' and TableName lt '" + upper + "'";

        assertEquals(made, names(svc.listTables(new ListTablesOptions().setFilter(filter), null, null)));
        assertEquals(List.of(made.get(3)), names(svc.listTables(new ListTablesOptions().setFilter(eqFilter(made.get(3))), null, null)));

        // top is the page size; NextTableName carries on.
        ListTablesOptions paged = new ListTablesOptions().setFilter(filter).setTop(5);
        List<Integer> sizes = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        for (PagedResponse<TableItem> page : svc.listTables(paged, null, null).iterableByPage()) {
            sizes.add(page.getValue().size());
            seen.addAll(names(page.getValue()));
            tokens.add(page.getContinuationToken());
        }
        assertEquals(List.of(5, 5, 2), sizes);
        assertEquals(Cosmos.unordered(made), Cosmos.unordered(seen));
        assertNotNull(tokens.get(0));
        assertNull(tokens.get(2), "the last page has no continuation");

        // Resume from the first page's token, later, through another client.
        Iterator<PagedResponse<TableItem>> rest = Target.service().listTables(paged, null, null)
            .iterableByPage(tokens.get(0)).iterator();
        assertEquals(made.subList(5, 10), names(rest.next().getValue()));
        assertEquals(made.subList(10, 12), names(rest.next().getValue()));

        // An unfiltered listing holds them too, in order.
        List<String> all = names(svc.listTables()).stream().filter(n -> n.startsWith(prefix)).collect(Collectors.toList());
        assertEquals(Cosmos.unordered(made), Cosmos.unordered(all));
    }

    @Test
    void keepsTheCaseATableWasCreatedWith() {
        String name = cleanup("Mixed" + Target.tableName("Case"));
        Target.service().createTable(name);
        assertEquals(List.of(name), names(Target.service().listTables(new ListTablesOptions().setFilter(eqFilter(name)), null, null)));
        if (Target.COSMOS) {
            // Cosmos DB's table names are case-sensitive (its FAQ): another case names no table.
            assertServiceError(404, "ResourceNotFound", () -> Target.table(name.toLowerCase()).createEntity(new TableEntity("p", "r")));
            return;
        }
        Target.table(name.toLowerCase()).createEntity(new TableEntity("p", "r"));
        assertEquals("r", Target.table(name).getEntity("p", "r").getRowKey());
    }

    @Test
    void deletingATableDeletesItsEntities() {
        TableServiceClient svc = Target.service();
        String name = cleanup(Target.tableName("del"));
        svc.createTable(name);
        Target.table(name).createEntity(new TableEntity("p", "r"));
        svc.deleteTable(name);
        svc.createTable(name);
        assertTrue(Target.table(name).listEntities(new ListEntitiesOptions(), null, null).stream().findAny().isEmpty());
    }

    @Test
    void listingTablesThroughTheConnectionStringClient() {
        TableServiceClient svc = new com.azure.data.tables.TableServiceClientBuilder()
            .connectionString(Target.CONNECTION_STRING).httpClient(Target.HTTP).retryOptions(Target.NO_RETRY)
            .buildClient();
        assertEquals(Target.ENDPOINT, svc.getServiceEndpoint().replaceAll("/+$", ""));
        String name = cleanup(Target.tableName("cs"));
        svc.createTable(name);
        assertEquals(List.of(name), names(svc.listTables(new ListTablesOptions().setFilter(eqFilter(name)), null, null)));
    }
}
