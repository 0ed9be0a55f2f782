package tableemu.conformance;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionResponse;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import com.azure.data.tables.models.TableTransactionResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static tableemu.conformance.EntitiesTest.entity;
import static tableemu.conformance.EntitiesTest.userProps;
import static tableemu.conformance.Errors.assertServiceError;

/**
 * Entity group transactions through TableClient.submitTransaction: every TableTransactionActionType,
 * and failures that name the failed action with nothing written (docs/protocol.md 7).
 */
class BatchTest extends Base {

    static TableTransactionAction action(TableTransactionActionType type, TableEntity e) {
        return new TableTransactionAction(type, e);
    }

    static boolean exists(TableClient c, String pk, String rk) {
        return c.listEntities(new com.azure.data.tables.models.ListEntitiesOptions()
            .setFilter("PartitionKey eq '" + pk + "' and RowKey eq '" + rk + "'"), null, null).stream().findAny().isPresent();
    }

    /**
     * Submits actions, which must fail as a transaction: TableTransactionFailedException with the
     * failed part's code and the index of the failed action, which the SDK reads from the part's
     * message ("index:…") and names in its own message.
     */
    static TableTransactionFailedException failed(TableClient c, List<TableTransactionAction> actions, int status,
        String code, int index) {
        TableTransactionFailedException e = assertServiceError(TableTransactionFailedException.class, status, code,
            () -> c.submitTransaction(actions));
        assertEquals(index, e.getFailedTransactionActionIndex(), e.getMessage());
        assertTrue(e.getMessage().contains("The failed operation was: "), e.getMessage());
        assertTrue(e.getValue().getErrorMessage().startsWith(index + ":"), e.getValue().getErrorMessage());
        return e;
    }

    /**
     * Submits one action, which must fail against the stored entity: the service's message then
     * names no index (docs/protocol.md 7.4), so the SDK reports none. Cosmos DB's names index 0
     * (python-cosmos test_new_delete_nonexistent_entity).
     */
    static TableTransactionFailedException failedAlone(TableClient c, TableTransactionAction action, int status,
        String code, String message) {
        TableTransactionFailedException e = assertServiceError(TableTransactionFailedException.class, status, code,
            () -> c.submitTransaction(List.of(action)));
        assertEquals(Target.COSMOS ? Integer.valueOf(0) : null, e.getFailedTransactionActionIndex(), e.getMessage());
        assertTrue(e.getValue().getErrorMessage().startsWith((Target.COSMOS ? "0:" : "") + message),
            e.getValue().getErrorMessage());
        return e;
    }

    @Test
    void everyActionTypeInOneTransaction() {
        TableClient c = newTable("tx");
        c.createEntity(entity("p", "merge", "A", 1, "B", 1));
        c.createEntity(entity("p", "replace", "A", 1, "B", 1));
        c.createEntity(entity("p", "umerge", "A", 1, "B", 1));
        c.createEntity(entity("p", "ureplace", "A", 1, "B", 1));
        c.createEntity(entity("p", "delete", "A", 1));
        c.createEntity(entity("p", "ifu", "A", 1));
        TableEntity current = c.getEntity("p", "ifu");
        current.getProperties().put("A", 2);

        List<TableTransactionAction> actions = List.of(
            action(TableTransactionActionType.CREATE, entity("p", "new", "A", 1)),
            action(TableTransactionActionType.UPSERT_MERGE, entity("p", "merge", "B", 2)),
            action(TableTransactionActionType.UPSERT_REPLACE, entity("p", "replace", "B", 2)),
            action(TableTransactionActionType.UPSERT_MERGE, entity("p", "upsertnew", "C", 3)),
            action(TableTransactionActionType.UPDATE_MERGE, entity("p", "umerge", "B", 2)),
            action(TableTransactionActionType.UPDATE_REPLACE, entity("p", "ureplace", "B", 2)),
            action(TableTransactionActionType.DELETE, entity("p", "delete")),
            new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE, current, true));
        TableTransactionResult result = c.submitTransaction(actions);
        List<TableTransactionActionResponse> rs = result.getTransactionActionResponses();
        assertEquals(actions.size(), rs.size());
        for (TableTransactionActionResponse r : rs) {
            assertEquals(204, r.getStatusCode(), "every part answers 204 (the SDK asks for return-no-content)");
        }
        assertNotNull(result.getTableTransactionActionResponseByRowKey("merge"));
        // An SDK bug, documented: each part's response carries its headers (ETag for every write;
        // the Go suite checks them), but TablesMultipartSerializer's builder copies the new
        // response's empty headers into its own (setAllHttpHeaders the wrong way round), so
        // TableTransactionActionResponse.getHeaders() is always empty.
        for (TableTransactionActionResponse r : rs) {
            assertEquals(0, r.getHeaders().getSize(), "the SDK started passing part headers on: assert the ETag here");
        }

        assertEquals(Map.of("A", 1), userProps(c.getEntity("p", "new")));
        assertEquals(Map.of("A", 1, "B", 2), userProps(c.getEntity("p", "merge")));
        assertEquals(Map.of("B", 2), userProps(c.getEntity("p", "replace")));
        assertEquals(Map.of("C", 3), userProps(c.getEntity("p", "upsertnew")));
        assertEquals(Map.of("A", 1, "B", 2), userProps(c.getEntity("p", "umerge")));
        assertEquals(Map.of("B", 2), userProps(c.getEntity("p", "ureplace")));
        assertFalse(exists(c, "p", "delete"));
        assertEquals(Map.of("A", 2), userProps(c.getEntity("p", "ifu")));
    }

    @Test
    void aFailingActionFailsTheWholeTransactionNamingItsIndex() {
        TableClient c = newTable("txf");
        c.createEntity(entity("p", "taken", "V", 1));
        for (int pos : new int[] {0, 1, 2, 49, 99}) {
            int n = Math.max(5, pos + 1);
            List<TableTransactionAction> actions = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                actions.add(i == pos
                    ? action(TableTransactionActionType.CREATE, entity("p", "taken", "V", 2))
                    : action(TableTransactionActionType.UPSERT_REPLACE, entity("p", "r" + pos + "-" + i, "V", i)));
            }
            TableTransactionFailedException e = failed(c, actions, 409, "EntityAlreadyExists", pos);
            assertTrue(e.getValue().getErrorMessage().startsWith(pos + ":The specified entity already exists."),
                e.getValue().getErrorMessage());
            for (int i = 0; i < n; i++) {
                if (i != pos) {
                    assertFalse(exists(c, "p", "r" + pos + "-" + i), "action " + i + " was committed although " + pos + " failed");
                }
            }
            assertEquals(1, c.getEntity("p", "taken").getProperty("V"));
        }
    }

    @Test
    void eTagConditionsInsideATransaction() {
        TableClient c = newTable("txe");
        c.createEntity(entity("p", "r", "V", 1));
        TableEntity v1 = c.getEntity("p", "r");
        c.updateEntity(entity("p", "r", "V", 2));
        v1.getProperties().put("V", 3);
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "x")),
            new TableTransactionAction(TableTransactionActionType.UPDATE_REPLACE, v1, true)), 412,
            "UpdateConditionNotSatisfied", 1);
        failedAlone(c, new TableTransactionAction(TableTransactionActionType.DELETE, v1, true), 412,
            "UpdateConditionNotSatisfied", "The update condition specified in the request was not satisfied.");
        // ifUnchanged=false sends If-Match: *, which needs the entity.
        failedAlone(c, action(TableTransactionActionType.UPDATE_MERGE, entity("p", "missing", "V", 3)), 404,
            "ResourceNotFound", "The specified resource does not exist.");
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "y")),
            action(TableTransactionActionType.CREATE, entity("p", "z")),
            action(TableTransactionActionType.DELETE, entity("p", "missing"))), 404, "ResourceNotFound", 2);
        assertEquals(2, c.getEntity("p", "r").getProperty("V"));
        for (String rk : List.of("x", "y", "z")) {
            assertFalse(exists(c, "p", rk), rk);
        }
    }

    @Test
    void aBadEntityFailsWithItsOwnCodeAndIndex() {
        TableClient c = newTable("txb");
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "ok")),
            action(TableTransactionActionType.CREATE, entity("p", "big", "S", "x".repeat(32 * 1024 + 1)))), 400,
            "PropertyValueTooLarge", 1);
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "a#b"))), 400, "OutOfRangeInput", 0);
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "ok2")),
            action(TableTransactionActionType.UPSERT_MERGE, entity("p", "bad", "1x", 1))), 400, "PropertyNameInvalid", 1);
        assertFalse(exists(c, "p", "ok"));
        assertFalse(exists(c, "p", "ok2"));
    }

    @Test
    void batchLimits() {
        TableClient c = newTable("txl");
        List<TableTransactionAction> hundred = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            hundred.add(action(TableTransactionActionType.CREATE, entity("p", String.format("a%03d", i))));
        }
        assertEquals(100, c.submitTransaction(hundred).getTransactionActionResponses().size());
        assertEquals(100, c.listEntities().stream().count());

        // The SDK checks none of these limits; the service's answers reach the caller.
        List<TableTransactionAction> over = new ArrayList<>();
        for (int i = 0; i < 101; i++) {
            over.add(action(TableTransactionActionType.CREATE, entity("p", String.format("b%03d", i))));
        }
        TableTransactionFailedException e = assertServiceError(TableTransactionFailedException.class, 400, "InvalidInput",
            () -> c.submitTransaction(over));
        // Cosmos DB's limit is Table storage's, its sentence its InvalidInput one (docs/cosmos.md).
        String sentence = Target.COSMOS ? "One of the input values is invalid\\."
            : "The batch request operation exceeds the maximum 100 changes per change set\\.";
        assertTrue(e.getValue().getErrorMessage().matches("(?s)^\\d+:" + sentence + ".*"), e.getValue().getErrorMessage());

        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("p", "dup")),
            action(TableTransactionActionType.UPSERT_MERGE, entity("p", "dup"))), 400, "InvalidDuplicateRow", 1);
        // Two partitions: the Java SDK sends them (the JS SDK refuses before sending).
        failed(c, List.of(action(TableTransactionActionType.CREATE, entity("a", "1")),
            action(TableTransactionActionType.CREATE, entity("b", "1"))), 400, "CommandsInBatchActOnDifferentPartitions", 1);
        assertEquals(100, c.listEntities().stream().count(), "nothing of the refused transactions was written");

        TableClient none = Target.table(Target.tableName("none"));
        List<TableTransactionAction> one = List.of(action(TableTransactionActionType.CREATE, entity("p", "r")));
        if (Target.COSMOS) {
            // Cosmos DB: ResourceNotFound, its message naming no operation (python-cosmos
            // test_new_non_existent_table).
            TableTransactionFailedException refused = assertServiceError(TableTransactionFailedException.class, 404,
                "ResourceNotFound", () -> none.submitTransaction(one));
            assertNull(refused.getFailedTransactionActionIndex(), refused.getMessage());
            return;
        }
        failed(none, one, 404, "TableNotFound", 0);
    }

    @Test
    void aTransactionOver4MiBIsRefusedWhole() {
        TableClient c = newTable("txs");
        List<TableTransactionAction> actions = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            actions.add(action(TableTransactionActionType.CREATE,
                entity("p", "r" + i, "S", "x".repeat(22000), "T", "y".repeat(22000))));
        }
        assertServiceError(413, "RequestBodyTooLarge", () -> c.submitTransaction(actions));
        assertEquals(0, c.listEntities().stream().count());
    }

    @Test
    void keysWithAwkwardCharactersInATransaction() {
        TableClient c = newTable("txk");
        List<TableTransactionAction> actions = new ArrayList<>();
        for (String k : EntitiesTest.awkwardKeys()) {
            actions.add(action(TableTransactionActionType.UPSERT_REPLACE, entity("p", k, "K", k)));
        }
        c.submitTransaction(actions);
        for (String k : EntitiesTest.awkwardKeys()) {
            assertEquals(k, c.getEntity("p", k).getProperty("K"), EntitiesTest.label(k));
        }
        List<TableTransactionAction> deletes = new ArrayList<>();
        for (String k : EntitiesTest.awkwardKeys()) {
            deletes.add(action(TableTransactionActionType.DELETE, entity("p", k)));
        }
        c.submitTransaction(deletes);
        assertEquals(0, c.listEntities().stream().count());
    }
}
