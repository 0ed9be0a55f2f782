package tableemu.conformance;

import com.azure.core.http.rest.PagedResponse;
import com.azure.data.tables.TableAsyncClient;
import com.azure.data.tables.TableServiceAsyncClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static tableemu.conformance.EntitiesTest.entity;
import static tableemu.conformance.EntitiesTest.userProps;

/**
 * The async clients (TableServiceAsyncClient, TableAsyncClient) on reactor-netty: create, upsert,
 * get, list with paging, a transaction, and errors, checked with StepVerifier.
 */
class AsyncTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    String name;
    TableServiceAsyncClient svc;
    TableAsyncClient c;

    @BeforeEach
    void create() {
        svc = Target.asyncService();
        name = Target.tableName("async");
        StepVerifier.create(svc.createTable(name)).assertNext(t -> assertEquals(name, t.getTableName())).expectComplete()
            .verify(WAIT);
        c = Target.asyncTable(name);
    }

    @AfterEach
    void drop() {
        svc.deleteTable(name).onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(WAIT);
    }

    /** Expects a TableServiceException with this status and code (and equal x-ms-error-code). */
    static <T extends TableServiceException> void expectServiceError(reactor.core.publisher.Mono<?> call, Class<T> type,
        int status, String code) {
        StepVerifier.create(call).expectErrorSatisfies(e -> {
            assertInstanceOf(type, e, String.valueOf(e));
            Errors.assertCode((TableServiceException) e, status, code);
        }).verify(WAIT);
    }

    @Test
    void createTableTwiceAndMissingTables() {
        expectServiceError(svc.createTable(name), TableServiceException.class, 409, "TableAlreadyExists");
        // createTableIfNotExists swallows the 409 and completes.
        StepVerifier.create(svc.createTableIfNotExists(name)).expectNextCount(1).expectComplete().verify(WAIT);
        TableAsyncClient none = Target.asyncTable(Target.tableName("none"));
        expectServiceError(none.getEntity("p", "r"), TableServiceException.class, 404, Cosmos.tableNotFound());
        // Unlike the sync TableClient, a failed page here is mapped to TableServiceException.
        expectServiceError(none.listEntities().collectList(), TableServiceException.class, 404, Cosmos.tableNotFound());
        expectServiceError(c.listEntities(new ListEntitiesOptions().setFilter("N eq")).collectList(), TableServiceException.class,
            400, "InvalidInput");
    }

    @Test
    void upsertGetUpdateDelete() {
        StepVerifier.create(c.createEntity(entity("p", "r", "A", 1, "L", Long.MIN_VALUE))).expectComplete().verify(WAIT);
        expectServiceError(c.createEntity(entity("p", "r")), TableServiceException.class, 409, "EntityAlreadyExists");
        StepVerifier.create(c.upsertEntityWithResponse(entity("p", "r", "B", 2), TableEntityUpdateMode.MERGE))
            .assertNext(r -> assertEquals(204, r.getStatusCode())).expectComplete().verify(WAIT);
        TableEntity got = c.getEntity("p", "r").block(WAIT);
        assertNotNull(got);
        assertEquals(Map.of("A", 1, "B", 2, "L", Long.MIN_VALUE), userProps(got));

        StepVerifier.create(c.upsertEntityWithResponse(entity("p", "r", "C", 3), TableEntityUpdateMode.REPLACE))
            .expectNextCount(1).expectComplete().verify(WAIT);
        // A selected property the entity lacks comes back as null (docs/protocol.md 6.4).
        StepVerifier.create(c.getEntityWithResponse("p", "r", List.of("C", "A"))).assertNext(r -> {
            assertEquals(3, r.getValue().getProperty("C"));
            assertTrue(r.getValue().getProperties().containsKey("A"));
            assertNull(r.getValue().getProperty("A"));
            assertEquals(2, userProps(r.getValue()).size());
        }).expectComplete().verify(WAIT);

        // got's ETag is stale now.
        expectServiceError(c.updateEntityWithResponse(got, TableEntityUpdateMode.REPLACE, true), TableServiceException.class, 412,
            "UpdateConditionNotSatisfied");
        expectServiceError(c.deleteEntityWithResponse(got, true), TableServiceException.class, 412, "UpdateConditionNotSatisfied");
        TableEntity now = c.getEntity("p", "r").block(WAIT);
        StepVerifier.create(c.deleteEntityWithResponse(now, true)).assertNext(r -> assertEquals(204, r.getStatusCode()))
            .expectComplete().verify(WAIT);
        expectServiceError(c.getEntity("p", "r"), TableServiceException.class, 404, "ResourceNotFound");
    }

    @Test
    void listsInPagesAndResumesFromAToken() {
        List<TableTransactionAction> batch = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            batch.add(new TableTransactionAction(TableTransactionActionType.CREATE, entity("p", String.format("r%02d", i), "N", i)));
        }
        StepVerifier.create(c.submitTransaction(batch))
            .assertNext(r -> assertEquals(25, r.getTransactionActionResponses().size())).expectComplete().verify(WAIT);

        ListEntitiesOptions o = new ListEntitiesOptions().setFilter("N ge 3").setTop(10).setSelect(List.of("N"));
        List<PagedResponse<TableEntity>> pages = c.listEntities(o).byPage().collectList().block(WAIT);
        assertNotNull(pages);
        assertEquals(List.of(10, 10, 2), pages.stream().map(p -> p.getValue().size()).collect(Collectors.toList()));
        assertNull(pages.get(2).getContinuationToken());
        assertEquals(3, pages.get(0).getValue().get(0).getProperty("N"));

        String token = pages.get(0).getContinuationToken();
        List<Integer> rest = Target.asyncTable(name).listEntities(o).byPage(token)
            .flatMapIterable(PagedResponse::getValue).map(e -> (Integer) e.getProperty("N")).collectList().block(WAIT);
        List<Integer> want = new ArrayList<>();
        for (int i = 13; i < 25; i++) {
            want.add(i);
        }
        assertEquals(want, rest);
        StepVerifier.create(c.listEntities().count()).expectNext(25L).expectComplete().verify(WAIT);
    }

    @Test
    void aFailedTransactionNamesItsActionAndWritesNothing() {
        StepVerifier.create(c.createEntity(entity("p", "taken"))).expectComplete().verify(WAIT);
        List<TableTransactionAction> actions = List.of(
            new TableTransactionAction(TableTransactionActionType.UPSERT_MERGE, entity("p", "a", "V", 1)),
            new TableTransactionAction(TableTransactionActionType.UPSERT_REPLACE, entity("p", "b", "V", 1)),
            new TableTransactionAction(TableTransactionActionType.CREATE, entity("p", "taken")),
            new TableTransactionAction(TableTransactionActionType.DELETE, entity("p", "c")));
        StepVerifier.create(c.submitTransaction(actions)).expectErrorSatisfies(e -> {
            TableTransactionFailedException f = assertInstanceOf(TableTransactionFailedException.class, e);
            Errors.assertCode(f, 409, "EntityAlreadyExists");
            assertEquals(2, f.getFailedTransactionActionIndex());
        }).verify(WAIT);
        List<String> left = Flux.from(c.listEntities()).map(TableEntity::getRowKey).collectList().block(WAIT);
        assertEquals(List.of("taken"), left);
        assertFalse(left.contains("a"));
    }
}
