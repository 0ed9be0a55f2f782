package tableemu.conformance;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every EDM type through the SDK's Java types, read back by a single read and by a query, exact
 * (docs/protocol.md 4.2): Long (Edm.Int64, sent as a string), Integer (Edm.Int32), Double
 * (Edm.Double, NaN and ±Infinity included), Boolean, OffsetDateTime (Edm.DateTime, 100 ns ticks),
 * UUID (Edm.Guid), byte[] (Edm.Binary), String.
 */
class TypesTest extends Base {

    private static TableEntity readBoth(TableClient c, String pk, String rk, java.util.function.Consumer<TableEntity> check) {
        TableEntity single = c.getEntity(pk, rk);
        check.accept(single);
        List<TableEntity> listed = c.listEntities(new ListEntitiesOptions()
            .setFilter("PartitionKey eq '" + pk + "' and RowKey eq '" + rk + "'"), null, null).stream()
            .collect(Collectors.toList());
        assertEquals(1, listed.size());
        check.accept(listed.get(0));
        return single;
    }

    /** Row keys of the entities the filter selects, in order. */
    private static List<String> rows(TableClient c, String filter) {
        return c.listEntities(new ListEntitiesOptions().setFilter(filter), null, null).stream()
            .map(TableEntity::getRowKey).collect(Collectors.toList());
    }

    @Test
    void int64AtItsEdgesAndBeyond2To53() {
        TableClient c = newTable("i64");
        long[] values = {0L, 1L << 53, (1L << 53) + 1, -(1L << 53) - 1, Long.MAX_VALUE, Long.MIN_VALUE, 1234567890123456789L};
        for (int i = 0; i < values.length; i++) {
            c.createEntity(new TableEntity("p", "r" + i).addProperty("L", values[i]));
        }
        for (int i = 0; i < values.length; i++) {
            long want = values[i];
            readBoth(c, "p", "r" + i, e -> {
                assertInstanceOf(Long.class, e.getProperty("L"));
                assertEquals(want, (long) (Long) e.getProperty("L"));
            });
        }
        // Int64 literals compare as 64-bit integers, not as doubles.
        assertEquals(List.of("r2"), rows(c, "L eq 9007199254740993L"));
        assertEquals(List.of("r4"), rows(c, "L gt 9007199254740993L and L gt 1234567890123456789L"));
    }

    @Test
    void int32AtItsEdges() {
        TableClient c = newTable("i32");
        int[] values = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE};
        for (int i = 0; i < values.length; i++) {
            c.createEntity(new TableEntity("p", "r" + i).addProperty("I", values[i]));
        }
        for (int i = 0; i < values.length; i++) {
            int want = values[i];
            readBoth(c, "p", "r" + i, e -> assertEquals(want, e.getProperty("I")));
        }
        assertEquals(List.of("r3"), rows(c, "I lt -2147483647"));
    }

    @Test
    void doublesFiniteAndWhole() {
        TableClient c = newTable("dbl");
        double[] values = {0.0, 2.0, -0.5, 1.5e308, 4.9e-324, Math.PI, 1e20, 9007199254740993.0};
        for (int i = 0; i < values.length; i++) {
            c.createEntity(new TableEntity("p", "r" + i).addProperty("D", values[i]));
        }
        for (int i = 0; i < values.length; i++) {
            double want = values[i];
            readBoth(c, "p", "r" + i, e -> {
                // A whole Double keeps its type: the service writes 2.0, and annotates it at fullmetadata.
                assertInstanceOf(Double.class, e.getProperty("D"), "D=" + want);
                assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits((Double) e.getProperty("D")));
            });
        }
        assertEquals(List.of("r1"), rows(c, "D eq 2.0"));
        assertEquals(List.of("r3", "r6", "r7"), rows(c, "D gt 1e10 and D lt 1.6e308"));
    }

    @Test
    void specialDoublesNeedTheirAnnotation() {
        TableClient c = newTable("nan");
        // The SDK annotates no Double (EntityDataModelType lists no class for Edm.Double), and Jackson
        // writes NaN and the infinities as the JSON strings "NaN", "Infinity", "-Infinity". Without
        // an annotation the service takes such a string for an Edm.String: an SDK limitation,
        // documented here. The property then reads back as that String.
        c.createEntity(new TableEntity("p", "plain").addProperty("D", Double.NaN));
        readBoth(c, "p", "plain", e -> assertEquals("NaN", e.getProperty("D")));

        // With the annotation added by hand ("D@odata.type": "Edm.Double", which the SDK keeps), the
        // service stores Doubles and they read back as Doubles.
        double[] values = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
        for (int i = 0; i < values.length; i++) {
            c.createEntity(new TableEntity("p", "r" + i).addProperty("D", values[i]).addProperty("D@odata.type", "Edm.Double"));
        }
        for (int i = 0; i < values.length; i++) {
            double want = values[i];
            readBoth(c, "p", "r" + i, e -> {
                assertInstanceOf(Double.class, e.getProperty("D"), "D=" + want);
                assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits((Double) e.getProperty("D")));
            });
        }
        // Upserts and merges with the annotation too.
        c.upsertEntity(new TableEntity("p", "r0").addProperty("E", Double.NEGATIVE_INFINITY).addProperty("E@odata.type", "Edm.Double"));
        readBoth(c, "p", "r0", e -> assertEquals(Double.NEGATIVE_INFINITY, e.getProperty("E")));
    }

    @Test
    void booleansAndStrings() {
        TableClient c = newTable("str");
        String unicode = "ünïcødé ✓ 日本語 \uD83D\uDE00 \u00a0\ufeff \"quoted\" 'single' \\ back\nnew line\ttab";
        c.createEntity(new TableEntity("p", "r").addProperty("T", true).addProperty("F", false).addProperty("S", unicode)
            .addProperty("Empty", "").addProperty("Long", "x".repeat(32 * 1024)));
        readBoth(c, "p", "r", e -> {
            assertEquals(true, e.getProperty("T"));
            assertEquals(false, e.getProperty("F"));
            assertEquals(unicode, e.getProperty("S"));
            assertEquals("", e.getProperty("Empty"));
            assertEquals("x".repeat(32 * 1024), e.getProperty("Long"));
        });
        assertEquals(List.of("r"), rows(c, "T eq true and F eq false and S eq '" + unicode.replace("'", "''") + "'"));
        assertEquals(List.of(), rows(c, "T eq false"));
    }

    @Test
    void dateTimesWithSubSecondPrecisionAndOffsets() {
        TableClient c = newTable("dt");
        OffsetDateTime[] values = {
            OffsetDateTime.of(2024, 2, 29, 23, 59, 59, 123_456_700, ZoneOffset.UTC),
            OffsetDateTime.of(2024, 2, 29, 23, 59, 59, 123_456_700, ZoneOffset.ofHoursMinutes(5, 30)),
            OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 100, ZoneOffset.ofHours(-8)),
            OffsetDateTime.of(1601, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC),
            OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_900, ZoneOffset.UTC),
            OffsetDateTime.of(2000, 6, 15, 12, 0, 0, 500_000_000, ZoneOffset.ofHours(14)),
        };
        for (int i = 0; i < values.length; i++) {
            c.createEntity(new TableEntity("p", "r" + i).addProperty("DT", values[i]));
        }
        for (int i = 0; i < values.length; i++) {
            OffsetDateTime want = values[i];
            readBoth(c, "p", "r" + i, e -> {
                assertInstanceOf(OffsetDateTime.class, e.getProperty("DT"));
                OffsetDateTime got = (OffsetDateTime) e.getProperty("DT");
                // The service keeps the instant, to the 100 ns tick, and answers in UTC.
                assertEquals(want.toInstant(), got.toInstant());
                assertEquals(ZoneOffset.UTC, got.getOffset());
            });
        }
        // r0 and r1 are the same wall-clock time in different zones: different instants.
        assertEquals(List.of("r1"), rows(c, "DT eq datetime'2024-02-29T18:29:59.1234567Z'"));
        assertEquals(List.of("r0"), rows(c, "DT eq datetime'2024-02-29T23:59:59.1234567Z'"));
        assertEquals(List.of("r3"), rows(c, "DT lt datetime'1700-01-01T00:00:00Z'"));
    }

    @Test
    void dateTimesFinerThan100NanosecondsAreTruncated() {
        // Edm.DateTime has 100 ns ticks; OffsetDateTime has nanoseconds. What the SDK sends for
        // .123456789 keeps its nine digits; the service keeps .1234567.
        TableClient c = newTable("dtn");
        OffsetDateTime fine = OffsetDateTime.of(2024, 5, 6, 7, 8, 9, 123_456_789, ZoneOffset.UTC);
        c.createEntity(new TableEntity("p", "r").addProperty("DT", fine));
        readBoth(c, "p", "r", e -> assertEquals(fine.withNano(123_456_700).toInstant(),
            ((OffsetDateTime) e.getProperty("DT")).toInstant()));
    }

    @Test
    void otherJavaTimeTypesAreDateTimesToo() {
        // The SDK annotates Instant, ZonedDateTime, LocalDateTime, LocalDate and java.util.Date as
        // Edm.DateTime; a value without a zone (LocalDateTime, LocalDate) is taken as UTC
        // (docs/protocol.md 4.2). All read back as OffsetDateTime in UTC.
        TableClient c = newTable("jt");
        c.createEntity(new TableEntity("p", "r")
            .addProperty("LDT", java.time.LocalDateTime.of(2024, 1, 2, 3, 4, 5, 600_000_000))
            .addProperty("LD", java.time.LocalDate.of(2024, 1, 2))
            .addProperty("INS", java.time.Instant.parse("2024-01-02T03:04:05.123Z"))
            .addProperty("ZDT", java.time.ZonedDateTime.of(2024, 7, 2, 3, 4, 5, 0, java.time.ZoneId.of("Europe/Paris")))
            .addProperty("DATE", new java.util.Date(1700000000123L)));
        readBoth(c, "p", "r", e -> {
            assertEquals(OffsetDateTime.parse("2024-01-02T03:04:05.6Z"), e.getProperty("LDT"));
            assertEquals(OffsetDateTime.parse("2024-01-02T00:00:00Z"), e.getProperty("LD"));
            assertEquals(OffsetDateTime.parse("2024-01-02T03:04:05.123Z"), e.getProperty("INS"));
            assertEquals(OffsetDateTime.parse("2024-07-02T01:04:05Z"), e.getProperty("ZDT"));
            assertEquals(OffsetDateTime.parse("2023-11-14T22:13:20.123Z"), e.getProperty("DATE"));
        });
        assertEquals(List.of("r"), rows(c, "LDT eq datetime'2024-01-02T03:04:05.6Z' and ZDT lt datetime'2024-07-02T01:04:06Z'"));
    }

    @Test
    void guidsAndBinaries() {
        TableClient c = newTable("gb");
        // Written upper-case in the source; the SDK sends UUID.toString(), lower-case.
        UUID g = UUID.fromString("6F9619FF-8B86-D011-B42D-00CF4FC964FF");
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        byte[] big = new byte[64 * 1024];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        c.createEntity(new TableEntity("p", "r").addProperty("G", g).addProperty("B", all).addProperty("Empty", new byte[0])
            .addProperty("Big", big));
        readBoth(c, "p", "r", e -> {
            assertEquals(g, e.getProperty("G"));
            assertArrayEquals(all, (byte[]) e.getProperty("B"));
            assertArrayEquals(new byte[0], (byte[]) e.getProperty("Empty"));
            assertArrayEquals(big, (byte[]) e.getProperty("Big"));
        });
        assertEquals(List.of("r"), rows(c, "G eq guid'6f9619ff-8b86-d011-b42d-00cf4fc964ff'"));
        assertEquals(List.of("r"), rows(c, "Empty eq X''"));
        assertEquals(List.of("r"), rows(c, "B ge X'00' and G ne guid'00000000-0000-0000-0000-000000000000'"));
    }

    @Test
    void everyTypeInOneEntityThroughUpsertAndMerge() throws Exception {
        TableClient c = newTable("all");
        UUID g = UUID.randomUUID();
        OffsetDateTime dt = OffsetDateTime.of(2030, 3, 4, 5, 6, 7, 890_123_400, ZoneOffset.ofHours(3));
        TableEntity e = new TableEntity("p", "r").addProperty("L", Long.MAX_VALUE).addProperty("I", 7)
            .addProperty("D", 0.1).addProperty("T", true).addProperty("DT", dt).addProperty("G", g)
            .addProperty("B", new byte[] {1, 2, 3}).addProperty("S", "ß");
        c.upsertEntity(e);
        // Merging the entity as read (fullmetadata: annotations, odata.* and Timestamp included) changes no type.
        TableEntity read = c.getEntity("p", "r");
        c.updateEntity(read);
        readBoth(c, "p", "r", got -> {
            assertEquals(Long.MAX_VALUE, got.getProperty("L"));
            assertEquals(7, got.getProperty("I"));
            assertEquals(0.1, got.getProperty("D"));
            assertEquals(true, got.getProperty("T"));
            assertEquals(dt.toInstant(), ((OffsetDateTime) got.getProperty("DT")).toInstant());
            assertEquals(g, got.getProperty("G"));
            assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) got.getProperty("B"));
            assertEquals("ß", got.getProperty("S"));
            assertTrue(got.getTimestamp().isAfter(read.getTimestamp()) || got.getTimestamp().equals(read.getTimestamp()));
        });
        // What the service stored: the user's properties, nothing of the odata.* metadata or the
        // Timestamp the SDK sent back in the body.
        java.net.http.HttpResponse<String> raw = Raw.get("/" + c.getTableName() + "(PartitionKey='p',RowKey='r')",
            "application/json;odata=nometadata");
        assertEquals(200, raw.statusCode(), raw.body());
        for (String absent : List.of("odata.", "@odata.type")) {
            assertTrue(!raw.body().contains(absent), raw.body());
        }
        for (String present : List.of("\"L\":\"9223372036854775807\"", "\"I\":7", "\"D\":0.1", "\"S\":\"ß\"")) {
            assertTrue(raw.body().contains(present), present + " in " + raw.body());
        }
    }
}
