package tableemu.conformance;

import com.azure.core.http.rest.PagedResponse;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Queries through TableClient.listEntities with ListEntitiesOptions (filter, select, top) over
 * 2,500 entities, and continuation through iterableByPage, resumed from a saved token
 * (docs/protocol.md 6). The table is loaded once, through transactions, and only read.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryTest {
    static final int PARTITIONS = 5;
    static final int PER_PARTITION = 500;

    String name;
    TableClient c;
    /** Every key in the service's order (PartitionKey, then RowKey). */
    final List<String> keys = new ArrayList<>();

    @BeforeAll
    void load() {
        name = Target.tableName("query");
        Target.service().createTable(name);
        c = Target.table(name);
        for (int p = 0; p < PARTITIONS; p++) {
            String pk = "p" + p;
            for (int start = 0; start < PER_PARTITION; start += 100) {
                List<TableTransactionAction> batch = new ArrayList<>();
                for (int r = start; r < start + 100; r++) {
                    TableEntity e = new TableEntity(pk, String.format("r%04d", r)).addProperty("N", p * PER_PARTITION + r)
                        .addProperty("Even", r % 2 == 0).addProperty("Tag", "t" + (r % 10)).addProperty("Big", (long) r << 40);
                    batch.add(new TableTransactionAction(TableTransactionActionType.CREATE, e));
                }
                c.submitTransaction(batch);
            }
            for (int r = 0; r < PER_PARTITION; r++) {
                keys.add(pk + "/" + String.format("r%04d", r));
            }
        }
    }

    @AfterAll
    void drop() {
        Target.service().deleteTable(name);
    }

    static String key(TableEntity e) {
        return e.getPartitionKey() + "/" + e.getRowKey();
    }

    static List<String> keysOf(Iterable<TableEntity> es) {
        List<String> out = new ArrayList<>();
        es.forEach(e -> out.add(key(e)));
        return out;
    }

    /** Page sizes and continuation tokens of a listing. */
    record Pages(List<Integer> sizes, List<String> keys, List<String> tokens) {
    }

    static Pages pages(Iterable<PagedResponse<TableEntity>> it) {
        List<Integer> sizes = new ArrayList<>();
        List<String> ks = new ArrayList<>();
        List<String> tokens = new ArrayList<>();
        for (PagedResponse<TableEntity> page : it) {
            sizes.add(page.getValue().size());
            ks.addAll(keysOf(page.getValue()));
            tokens.add(page.getContinuationToken());
        }
        return new Pages(sizes, ks, tokens);
    }

    @Test
    void aFullScanComesInPagesOf1000InKeyOrder() {
        Pages p = pages(c.listEntities().iterableByPage());
        assertEquals(List.of(1000, 1000, 500), p.sizes());
        assertEquals(Cosmos.unordered(keys), Cosmos.unordered(p.keys()));
        assertNull(p.tokens().get(2), "no continuation after the last page");
        // The SDK's token is "NextPartitionKey;NextRowKey" from the x-ms-continuation headers.
        assertTrue(p.tokens().get(0).contains(";"), p.tokens().get(0));
        // Cosmos DB's whole position is in NextPartitionKey, a JSON document, and NextRowKey says NA
        // (python-cosmos test_query_entities_with_top_and_next).
        if (Target.COSMOS) {
            assertTrue(p.tokens().get(0).matches("(?s)^\\[?\\{\"token\":.*;NA$"), p.tokens().get(0));
        }
    }

    @Test
    void topIsThePageSize() {
        ListEntitiesOptions o = new ListEntitiesOptions().setFilter("PartitionKey eq 'p1' and RowKey lt 'r0020'").setTop(7);
        Pages p = pages(c.listEntities(o, null, null).iterableByPage());
        assertEquals(List.of(7, 7, 6), p.sizes());
        assertEquals(Cosmos.unordered(keys.subList(500, 520)), Cosmos.unordered(p.keys()));
        // The whole listing (not by page) follows the continuations too.
        assertEquals(20, c.listEntities(o, null, null).stream().count());
    }

    @Test
    void resumesFromASavedContinuationToken() {
        ListEntitiesOptions o = new ListEntitiesOptions().setFilter("Even eq true").setTop(300);
        Iterator<PagedResponse<TableEntity>> first = c.listEntities(o, null, null).iterableByPage().iterator();
        PagedResponse<TableEntity> page1 = first.next();
        PagedResponse<TableEntity> page2 = first.next();
        String saved = page1.getContinuationToken();
        assertNotNull(saved);

        // Later, through another client: the same pages again, from page 2 on.
        TableClient other = Target.table(name);
        Pages resumed = pages(other.listEntities(o, null, null).iterableByPage(saved));
        assertEquals(keysOf(page2.getValue()), resumed.keys().subList(0, 300));
        List<String> evens = keys.stream().filter(k -> Integer.parseInt(k.substring(k.length() - 4)) % 2 == 0)
            .collect(Collectors.toList());
        assertEquals(evens.subList(300, evens.size()), resumed.keys());
        assertEquals(List.of(300, 300, 300, 50), resumed.sizes());
        // Resuming twice from one token gives the same page.
        assertEquals(keysOf(page2.getValue()),
            keysOf(other.listEntities(o, null, null).iterableByPage(saved).iterator().next().getValue()));
    }

    @Test
    void filtersOnKeysAndProperties() {
        assertEquals(List.of("p2/r0007"), keysOf(list("PartitionKey eq 'p2' and RowKey eq 'r0007'")));
        assertEquals(keys.subList(1498, 1502), keysOf(list("(PartitionKey eq 'p2' and RowKey ge 'r0498') or (PartitionKey eq 'p3' and RowKey lt 'r0002')")));
        assertEquals(List.of("p4/r0499"), keysOf(list("N eq 2499")));
        assertEquals(List.of("p0/r0003", "p1/r0003"), keysOf(list("Big eq 3298534883328L and Tag eq 't3' and N lt 1000")));
        assertEquals(250, list("PartitionKey eq 'p0' and not (Even eq true)").size());
        assertEquals(List.of(), list("PartitionKey eq 'nope'"));
    }

    @Test
    void selectReturnsOnlyTheNamedProperties() {
        ListEntitiesOptions o = new ListEntitiesOptions().setFilter("PartitionKey eq 'p0' and RowKey le 'r0001'")
            .setSelect(List.of("N", "Tag"));
        List<TableEntity> es = c.listEntities(o, null, null).stream().collect(Collectors.toList());
        assertEquals(2, es.size());
        for (TableEntity e : es) {
            assertEquals(List.of("N", "Tag"), EntitiesTest.userProps(e).keySet().stream().sorted().collect(Collectors.toList()));
            // Keys were not selected, so the service did not send them.
            assertNull(e.getPartitionKey());
            assertNotNull(e.getETag(), "odata.etag comes back even when not selected");
        }
        assertEquals(1, es.get(1).getProperty("N"));

        // Selecting the keys (and a property no entity has: it comes back null).
        o.setSelect(List.of("PartitionKey", "RowKey", "Missing"));
        TableEntity e = c.listEntities(o, null, null).stream().findFirst().orElseThrow();
        assertEquals("p0/r0000", key(e));
        assertTrue(e.getProperties().containsKey("Missing"));
        assertNull(e.getProperty("Missing"));
        assertFalse(e.getProperties().containsKey("N"));
    }

    @Test
    void queryErrorsFromTheSyncIterator() {
        // An SDK bug, documented: TableClient.listEntities does not map a failed page to
        // TableServiceException (every other sync method does); the caller gets the
        // implementation's TableServiceJsonErrorException, an HttpResponseException. The service's
        // status and x-ms-error-code are on it all the same.
        Errors.assertHttpError(400, "InvalidInput", () -> list("N eq"));
        Errors.assertHttpError(404, Cosmos.tableNotFound(), () -> Target.table(Target.tableName("none")).listEntities().stream().count());
        // The async client maps it: see AsyncTest.
    }

    private List<TableEntity> list(String filter) {
        return c.listEntities(new ListEntitiesOptions().setFilter(filter), null, null).stream().collect(Collectors.toList());
    }
}
