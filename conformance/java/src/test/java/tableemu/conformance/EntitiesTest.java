package tableemu.conformance;

import com.azure.core.http.rest.Response;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static tableemu.conformance.Errors.assertServiceError;
import static tableemu.conformance.Errors.assertSwallowed;

/**
 * Single-entity operations through TableClient: insert, get with select, upsert and update in both
 * modes with ETag conditions, delete (docs/protocol.md 3.9–3.13, 5).
 */
class EntitiesTest extends Base {
    /** The service's ETag: the Timestamp, ':' escaped, in W/"datetime'…'" (docs/protocol.md 5). */
    static final Pattern ETAG = Pattern.compile("^W/\"datetime'\\d{4}-\\d\\d-\\d\\dT\\d\\d%3A\\d\\d%3A\\d\\d\\.\\d{7}Z'\"$");

    /**
     * The ETag header as the SDK hands it over: TableScrubEtagPolicy strips a leading and a trailing
     * '"', so W/"datetime'…'" loses its closing quote. The body's odata.etag (TableEntity.getETag)
     * is the service's value, intact. An SDK behaviour, documented here.
     */
    static String headerETag(Response<?> r) {
        String etag = r.getHeaders().getValue("ETag");
        assertNotNull(etag, "no ETag header");
        assertTrue(ETAG.matcher(etag + "\"").matches(), etag);
        return etag + "\"";
    }

    /** The user's properties of an entity as the SDK returns it (without keys, ETag, Timestamp). */
    static Map<String, Object> userProps(TableEntity e) {
        Map<String, Object> m = new TreeMap<>(e.getProperties());
        m.remove("PartitionKey");
        m.remove("RowKey");
        m.remove("Timestamp");
        // The SDK reads entities at fullmetadata ($format): odata.etag, odata.type, odata.id,
        // odata.editLink and the @odata.type annotations come back as properties.
        m.keySet().removeIf(k -> k.startsWith("odata.") || k.endsWith("@odata.type"));
        return m;
    }

    static TableEntity entity(String pk, String rk, Object... kv) {
        TableEntity e = new TableEntity(pk, rk);
        for (int i = 0; i < kv.length; i += 2) {
            e.addProperty((String) kv[i], kv[i + 1]);
        }
        return e;
    }

    @Test
    void insertsAndGetsAnEntityWithETagAndTimestamp() {
        TableClient c = newTable("ent");
        Response<Void> r = c.createEntityWithResponse(entity("p", "r", "Name", "n", "Count", 3, "Ok", true), null, null);
        assertEquals(204, r.getStatusCode(), "the SDK asks for return-no-content");
        String etag = headerETag(r);

        TableEntity e = c.getEntity("p", "r");
        assertEquals("p", e.getPartitionKey());
        assertEquals("r", e.getRowKey());
        assertEquals(etag, e.getETag());
        assertEquals(Map.of("Name", "n", "Count", 3, "Ok", true), userProps(e));
        OffsetDateTime ts = e.getTimestamp();
        assertNotNull(ts);
        // The ETag is the Timestamp with ':' escaped, to the 100 ns tick.
        String iso = String.format("%04d-%02d-%02dT%02d%%3A%02d%%3A%02d.%07dZ", ts.getYear(), ts.getMonthValue(),
            ts.getDayOfMonth(), ts.getHour(), ts.getMinute(), ts.getSecond(), ts.getNano() / 100);
        assertEquals("W/\"datetime'" + iso + "'\"", e.getETag());
    }

    @Test
    void insertErrors() {
        TableClient c = newTable("ins");
        c.createEntity(entity("p", "r"));
        assertServiceError(409, "EntityAlreadyExists", () -> c.createEntity(entity("p", "r", "X", 1)));
        assertServiceError(404, Cosmos.tableNotFound(), () -> Target.table(Target.tableName("none")).createEntity(entity("p", "r")));
        assertServiceError(400, "PropertyNameInvalid", () -> c.createEntity(entity("p", "bad", "1abc", 1)));
        assertServiceError(400, "PropertyValueTooLarge", () -> c.createEntity(entity("p", "big", "S", "x".repeat(32 * 1024 + 1))));
        // A key over 1 KiB (1024 UTF-16 units): the service's code for an oversized key (docs/protocol.md 1.5).
        assertServiceError(400, "PropertyValueTooLarge", () -> c.createEntity(entity("p", "k".repeat(1025))));
        assertServiceError(400, "OutOfRangeInput", () -> c.createEntity(entity("p", "a/b")));
        assertTrue(c.listEntities().stream().allMatch(e -> e.getRowKey().equals("r")), "nothing refused was written");
    }

    @Test
    void limitsWithTheServiceCodes() {
        TableClient c = newTable("lim");
        // Property names: C# identifiers, Unicode letters and '_' included, up to 255 characters.
        c.createEntity(entity("p", "names", "Größe", 1, "_under", 2, "n".repeat(255), 3));
        assertEquals(Map.of("Größe", 1, "_under", 2, "n".repeat(255), 3), userProps(c.getEntity("p", "names")));
        assertServiceError(400, "PropertyNameTooLong", () -> c.createEntity(entity("p", "long", "n".repeat(256), 1)));

        TableEntity many = new TableEntity("p", "many");
        for (int i = 0; i < 252; i++) {
            many.addProperty("P" + i, i);
        }
        c.createEntity(many); // 252 of the user's, plus PartitionKey, RowKey and Timestamp
        many.addProperty("P252", 252);
        assertServiceError(400, "TooManyProperties", () -> c.upsertEntity(many));

        TableEntity big = new TableEntity("p", "big");
        for (int i = 0; i < 20; i++) {
            big.addProperty("S" + i, "y".repeat(30000)); // 20 × 60,000 bytes as UTF-16
        }
        assertServiceError(400, "EntityTooLarge", () -> c.createEntity(big));
        assertEquals(2, c.listEntities().stream().count(), "names and many");
        // $top over 1000 (docs/protocol.md 6.5); a list's failure is unmapped (QueryTest). Cosmos DB
        // does not cap $top at 1000 (its FAQ).
        if (Target.COSMOS) {
            assertEquals(2, c.listEntities(new ListEntitiesOptions().setTop(1001), null, null).stream().count());
            return;
        }
        Errors.assertHttpError(400, "InvalidInput", () -> c.listEntities(new ListEntitiesOptions().setTop(1001), null, null)
            .iterableByPage().iterator().next());
    }

    @Test
    void getErrorsAndGetWithSelect() {
        TableClient c = newTable("get");
        c.createEntity(entity("p", "r", "A", 1, "B", "b", "C", true));
        assertServiceError(404, "ResourceNotFound", () -> c.getEntity("p", "nope"));
        assertServiceError(404, Cosmos.tableNotFound(), () -> Target.table(Target.tableName("none")).getEntity("p", "r"));

        TableEntity e = c.getEntityWithResponse("p", "r", List.of("A", "C"), null, null).getValue();
        assertEquals(Map.of("A", 1, "C", true), userProps(e));
        assertNull(e.getProperty("B"));
        assertTrue(ETAG.matcher(e.getETag()).matches(), "odata.etag comes back even when not selected");
        // A selected property the entity lacks comes back as null (docs/protocol.md 6.4).
        TableEntity missing = c.getEntityWithResponse("p", "r", List.of("A", "Nope"), null, null).getValue();
        assertEquals(1, missing.getProperty("A"));
        assertTrue(missing.getProperties().containsKey("Nope"));
        assertNull(missing.getProperty("Nope"));
    }

    @Test
    void upsertMergeKeepsOtherPropertiesAndReplaceDropsThem() {
        TableClient c = newTable("ups");
        // Either mode inserts when the entity is missing.
        c.upsertEntity(entity("p", "m", "Old", "o", "Keep", 1));
        c.upsertEntityWithResponse(entity("p", "r", "Old", "o", "Keep", 1), TableEntityUpdateMode.REPLACE, null, null);

        c.upsertEntityWithResponse(entity("p", "m", "Old", "changed", "New", 2.5), TableEntityUpdateMode.MERGE, null, null);
        assertEquals(Map.of("Old", "changed", "Keep", 1, "New", 2.5), userProps(c.getEntity("p", "m")));

        c.upsertEntityWithResponse(entity("p", "r", "New", "n"), TableEntityUpdateMode.REPLACE, null, null);
        assertEquals(Map.of("New", "n"), userProps(c.getEntity("p", "r")));
    }

    @Test
    void updateReplaceWithIfUnchanged() {
        TableClient c = newTable("upr");
        c.createEntity(entity("p", "r", "Old", "o", "Keep", 1));
        TableEntity v1 = c.getEntity("p", "r");

        // Read-modify-write of the entity as the SDK returned it: its body carries odata.etag and
        // Timestamp, which the service ignores.
        TableEntity edit = c.getEntity("p", "r");
        edit.getProperties().remove("Old");
        edit.getProperties().remove("Keep");
        edit.addProperty("New", "n");
        Response<Void> r = c.updateEntityWithResponse(edit, TableEntityUpdateMode.REPLACE, true, null, null);
        String v2 = headerETag(r);
        assertNotEquals(v1.getETag(), v2, "every write gets a new ETag");
        TableEntity now = c.getEntity("p", "r");
        assertEquals(Map.of("New", "n"), userProps(now));
        assertEquals(v2, now.getETag());

        // v1's ETag is stale now.
        v1.addProperty("X", 1);
        assertServiceError(412, "UpdateConditionNotSatisfied",
            () -> c.updateEntityWithResponse(v1, TableEntityUpdateMode.REPLACE, true, null, null));
        assertEquals(Map.of("New", "n"), userProps(c.getEntity("p", "r")), "a refused update changes nothing");
    }

    /**
     * The SDK sends a merge as PATCH to Table storage, and as POST with X-HTTP-Method: MERGE to an
     * endpoint it takes for Cosmos DB (one naming "cosmos.azure.": azure-data-tables'
     * CosmosPatchTransformPolicy), which Target.ENDPOINT is under the profile; tableemu takes both.
     */
    @Test
    void theSdkSendsAMergeAsItsModeSays() {
        TableClient c = newTable("mode");
        c.createEntity(entity("p", "r", "A", 1));
        List<String> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        TableClient watched = Target.tableBuilder(c.getTableName()).addPolicy((context, next) -> {
            String x = context.getHttpRequest().getHeaders().getValue("X-HTTP-Method");
            sent.add(context.getHttpRequest().getHttpMethod() + (x == null ? "" : " " + x));
            return next.process();
        }).buildClient();
        watched.updateEntity(entity("p", "r", "B", 2), TableEntityUpdateMode.MERGE);
        assertEquals(List.of(Target.COSMOS ? "POST MERGE" : "PATCH"), sent);
        assertEquals(Map.of("A", 1, "B", 2), userProps(c.getEntity("p", "r")));
    }

    @Test
    void updateMergeWithIfUnchanged() {
        TableClient c = newTable("upm");
        c.createEntity(entity("p", "r", "Old", "o", "Keep", 1));
        TableEntity v1 = c.getEntity("p", "r");
        TableEntity patch = entity("p", "r", "Old", "changed", "New", 2.5).addProperty("odata.etag", v1.getETag());
        Response<Void> r = c.updateEntityWithResponse(patch, TableEntityUpdateMode.MERGE, true, null, null);
        TableEntity now = c.getEntity("p", "r");
        assertEquals(Map.of("Old", "changed", "Keep", 1, "New", 2.5), userProps(now));
        assertEquals(headerETag(r), now.getETag(), "the merge's ETag is the entity's");

        assertServiceError(412, "UpdateConditionNotSatisfied",
            () -> c.updateEntityWithResponse(entity("p", "r", "X", 1).addProperty("odata.etag", v1.getETag()),
                TableEntityUpdateMode.MERGE, true, null, null));
        assertEquals(now.getETag(), c.getEntity("p", "r").getETag(), "a refused merge changes nothing");
    }

    @Test
    void theScrubbedHeaderETagIsNotAnETag() {
        // What TableScrubEtagPolicy leaves of the ETag header, W/"datetime'…' without its closing
        // quote, is neither '*' nor a weak ETag: used as If-Match it is 400 InvalidInput
        // (docs/protocol.md 0.1). The body's odata.etag, or the header with its quote put back,
        // is the entity's ETag.
        TableClient c = newTable("scrub");
        String scrubbed = c.createEntityWithResponse(entity("p", "r", "V", 1), null, null).getHeaders().getValue("ETag");
        assertServiceError(400, "InvalidInput", () -> c.updateEntityWithResponse(
            entity("p", "r", "V", 2).addProperty("odata.etag", scrubbed), TableEntityUpdateMode.MERGE, true, null, null));
        c.updateEntityWithResponse(entity("p", "r", "V", 3).addProperty("odata.etag", scrubbed + "\""),
            TableEntityUpdateMode.MERGE, true, null, null);
        assertEquals(3, c.getEntity("p", "r").getProperty("V"));
    }

    @Test
    void updateWithoutIfUnchangedNeedsTheEntityToExist() {
        TableClient c = newTable("upn");
        // ifUnchanged=false sends If-Match: *, which matches only an existing entity.
        assertServiceError(404, "ResourceNotFound", () -> c.updateEntity(entity("p", "nope", "X", 1), TableEntityUpdateMode.MERGE));
        assertServiceError(404, "ResourceNotFound", () -> c.updateEntity(entity("p", "nope", "X", 1), TableEntityUpdateMode.REPLACE));
        assertServiceError(404, Cosmos.tableNotFound(), () -> Target.table(Target.tableName("none")).updateEntity(entity("p", "r")));
        assertTrue(c.listEntities().stream().findAny().isEmpty());

        c.createEntity(entity("p", "r", "A", 1));
        c.updateEntity(entity("p", "r", "B", 2)); // MERGE is the default mode
        assertEquals(Map.of("A", 1, "B", 2), userProps(c.getEntity("p", "r")));
    }

    @Test
    void updateIfUnchangedWithoutAnETagIsAnUpsert() {
        // An SDK behaviour, documented: ifUnchanged=true on an entity that carries no ETag sends no
        // If-Match at all, and the service treats a PUT/MERGE without If-Match as an upsert
        // (docs/protocol.md 3.11, 3.12), so nothing is "unchanged"-checked.
        TableClient c = newTable("upe");
        c.updateEntityWithResponse(entity("p", "r", "A", 1), TableEntityUpdateMode.REPLACE, true, null, null);
        assertEquals(Map.of("A", 1), userProps(c.getEntity("p", "r")));
        c.updateEntityWithResponse(entity("p", "r", "B", 2), TableEntityUpdateMode.MERGE, true, null, null);
        assertEquals(Map.of("A", 1, "B", 2), userProps(c.getEntity("p", "r")));
    }

    @Test
    void deleteWithAnETag() {
        TableClient c = newTable("del");
        c.createEntity(entity("p", "r", "A", 1));
        TableEntity v1 = c.getEntity("p", "r");
        c.updateEntity(entity("p", "r", "A", 2));
        assertServiceError(412, "UpdateConditionNotSatisfied", () -> c.deleteEntityWithResponse(v1, true, null, null));
        assertEquals(2, c.getEntity("p", "r").getProperty("A"));

        TableEntity v2 = c.getEntity("p", "r");
        assertEquals(204, c.deleteEntityWithResponse(v2, true, null, null).getStatusCode());
        assertServiceError(404, "ResourceNotFound", () -> c.getEntity("p", "r"));

        // Deleting what is gone: the SDK swallows the 404; the response is the service's.
        assertSwallowed(c.deleteEntityWithResponse(v2, false, null, null), 404, "ResourceNotFound");
        c.deleteEntity("p", "r"); // no exception either
        // ifUnchanged=true on an entity that carries no ETag sends no If-Match, which Delete Entity
        // requires (docs/protocol.md 3.13).
        assertServiceError(400, "MissingRequiredHeader", () -> c.deleteEntityWithResponse(entity("p", "x"), true, null, null));
        // A missing table is not swallowed into silence: still a 404, with its own code.
        assertSwallowed(Target.table(Target.tableName("none")).deleteEntityWithResponse(v2, false, null, null), 404,
            Cosmos.tableNotFound());
    }

    /** Keys a client must escape somewhere (URL path, OData literal, JSON, multipart body): docs/protocol.md 1.3, 1.5. */
    static final List<String> AWKWARD = List.of("", "'", "''", "a'b", "it's a 'key'", "a b", " leading and trailing ",
        "%", "%25", "%2F", "+", "a+b=c&d", ":@$,;=", "(", ")", "(PartitionKey='x',RowKey='y')", "!*~", "\"",
        "<>[]{}|^`", "é", "日本語", "\uD83D\uDE00", "\u00a0", "\ufeff", ".", "..", "x".repeat(1024));

    /**
     * AWKWARD but for the keys Cosmos DB refuses under the profile: an empty one (python-cosmos
     * test_insert_entity_empty_string_pk) and a RowKey over 255 bytes (its FAQ).
     */
    static List<String> awkwardKeys() {
        return AWKWARD.stream().filter(k -> !Target.COSMOS
            || !k.isEmpty() && k.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 255).collect(Collectors.toList());
    }

    /** Forbidden anywhere in a key (docs/protocol.md 1.5). */
    static final List<String> FORBIDDEN = List.of("a/b", "a\\b", "a#b", "a?b", "a\tb", "a\nb", "\u0000", "\u007f",
        "\u0085", "\u009f");

    static String label(String k) {
        StringBuilder b = new StringBuilder();
        k.codePoints().limit(20).forEach(cp -> b.append(Character.isISOControl(cp) || Character.getType(cp) == Character.FORMAT
            ? String.format("\\u%04x", cp) : new String(Character.toChars(cp))));
        return "key '" + b + (k.length() > 20 ? "…" : "") + "'";
    }

    @Test
    void keysWithAwkwardCharactersInEveryOperation() {
        TableClient c = newTable("keys");
        for (String k : AWKWARD) {
            if (Target.COSMOS && k.isEmpty()) {
                // Cosmos DB refuses an empty key (python-cosmos test_insert_entity_empty_string_pk).
                assertServiceError(label(k), 400, "PropertiesNeedValue", () -> c.createEntity(entity(k, k, "V", 1)));
                continue;
            }
            if (Target.COSMOS && k.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
                // Cosmos DB takes a RowKey of up to 255 bytes (its FAQ); tableemu refuses a longer
                // one with storage's code for an oversized key (docs/cosmos.md).
                assertServiceError(label(k), 400, "PropertyValueTooLarge", () -> c.createEntity(entity(k, k, "V", 1)));
                continue;
            }
            String label = label(k);
            c.createEntity(entity(k, k, "V", 1));
            TableEntity e = c.getEntity(k, k);
            assertEquals(k, e.getPartitionKey(), label);
            assertEquals(k, e.getRowKey(), label);
            c.updateEntity(entity(k, k, "V", 2), TableEntityUpdateMode.REPLACE);
            c.upsertEntity(entity(k, k, "W", 3));
            assertEquals(Map.of("V", 2, "W", 3), userProps(c.getEntity(k, k)), label);
            c.updateEntityWithResponse(c.getEntity(k, k), TableEntityUpdateMode.MERGE, true, null, null);
            List<TableEntity> found = c.listEntities(new ListEntitiesOptions()
                .setFilter("PartitionKey eq '" + k.replace("'", "''") + "' and RowKey eq '" + k.replace("'", "''") + "'"),
                null, null).stream().collect(Collectors.toList());
            assertEquals(1, found.size(), label + ": found by a filter");
            assertEquals(204, c.deleteEntityWithResponse(c.getEntity(k, k), true, null, null).getStatusCode(), label);
            assertFalse(c.listEntities().stream().findAny().isPresent(), label);
        }
    }

    @Test
    void refusesForbiddenKeyCharacters() {
        TableClient c = newTable("bad");
        for (String bad : FORBIDDEN) {
            String label = label(bad);
            // In an insert body the key is out of range.
            assertServiceError(label + " RowKey", 400, "OutOfRangeInput", () -> c.createEntity(entity("p", bad)));
            assertServiceError(label + " PartitionKey", 400, "OutOfRangeInput", () -> c.createEntity(entity(bad, "r")));
            // Addressed in the URL (an upsert is a PUT): '/' and '\' break the service's URL parsing,
            // the others are out of range.
            String code = bad.equals("a/b") || bad.equals("a\\b") ? "InvalidInput" : "OutOfRangeInput";
            assertServiceError(label + " in the URL", 400, code,
                () -> c.upsertEntityWithResponse(entity("p", bad), TableEntityUpdateMode.REPLACE, null, null));
        }
        assertTrue(c.listEntities().stream().findAny().isEmpty(), "nothing with a forbidden key was stored");
    }
}
