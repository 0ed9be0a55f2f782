package tableemu.conformance;

import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableClientBuilder;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.TableEntity;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Clients from connection strings: the one the server printed, and the development-storage shorthand. */
class ConnectionStringTest extends Base {

    @Test
    void theConnectionStringTableemuPrints() {
        String name = cleanup(Target.tableName("cs"));
        TableServiceClient svc = new TableServiceClientBuilder().connectionString(Target.CONNECTION_STRING)
            .httpClient(Target.HTTP).retryOptions(Target.NO_RETRY).buildClient();
        assertEquals(Target.ACCOUNT, Target.parse(Target.CONNECTION_STRING).get("AccountName"));
        TableClient c = svc.createTable(name);
        c.createEntity(new TableEntity("p", "r").addProperty("V", 1));
        TableClient again = new TableClientBuilder().connectionString(Target.CONNECTION_STRING).tableName(name)
            .httpClient(Target.HTTP).retryOptions(Target.NO_RETRY).buildClient();
        assertEquals(1, again.getEntity("p", "r").getProperty("V"));
    }

    @Test
    void useDevelopmentStorageMeansPort10002() {
        // Parsed only: the SDK resolves the shorthand to Azurite's (and tableemu's default) endpoint
        // and account, without sending anything.
        TableServiceClient svc = new TableServiceClientBuilder().connectionString("UseDevelopmentStorage=true")
            .httpClient(Target.HTTP).buildClient();
        assertEquals("http://127.0.0.1:10002/devstoreaccount1", svc.getServiceEndpoint().replaceAll("/+$", ""));
    }

    @Test
    void useDevelopmentStorageAgainstAServerOn10002() {
        // Port 10002 belongs to the Python suite's UseDevelopmentStorage test on this machine, and
        // this suite's server listens on a free port; run this by hand against `tableemu` with its
        // defaults by setting TABLEEMU_JAVA_DEVSTORE=1.
        assumeTrue("1".equals(System.getenv("TABLEEMU_JAVA_DEVSTORE")),
            "needs a tableemu on 127.0.0.1:10002 (set TABLEEMU_JAVA_DEVSTORE=1); port 10002 is not bound by this suite");
        String name = cleanup(Target.tableName("dev"));
        TableServiceClient svc = new TableServiceClientBuilder().connectionString("UseDevelopmentStorage=true")
            .httpClient(Target.HTTP).retryOptions(Target.NO_RETRY).buildClient();
        svc.createTable(name).createEntity(new TableEntity("p", "r"));
        assertEquals("r", svc.getTableClient(name).getEntity("p", "r").getRowKey());
        svc.deleteTable(name);
    }
}
