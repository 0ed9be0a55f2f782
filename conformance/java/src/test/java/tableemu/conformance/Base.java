package tableemu.conformance;

import com.azure.data.tables.TableClient;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/** Tables a test creates with {@link #newTable} are deleted after it, whatever its outcome. */
abstract class Base {
    private final List<String> created = new ArrayList<>();

    /** Creates a table with a fresh name and returns a client for it. */
    protected TableClient newTable(String prefix) {
        String name = Target.tableName(prefix);
        Target.service().createTable(name);
        created.add(name);
        return Target.table(name);
    }

    /** Deletes name after the test (for tables created some other way). */
    protected String cleanup(String name) {
        created.add(name);
        return name;
    }

    @AfterEach
    void deleteTables() {
        for (String name : created) {
            try {
                Target.service().deleteTable(name);
            } catch (RuntimeException ignored) {
                // Cleanup must not hide the test's own result.
            }
        }
        created.clear();
    }
}
