package tableemu.conformance;

import com.azure.core.credential.AzureNamedKeyCredential;
import com.azure.core.credential.AzureSasCredential;
import com.azure.core.http.HttpClient;
import com.azure.core.http.netty.NettyAsyncHttpClientBuilder;
import com.azure.core.http.policy.FixedDelayOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.data.tables.TableAsyncClient;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableClientBuilder;
import com.azure.data.tables.TableServiceAsyncClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The endpoint under test and clients for it.
 *
 * <p>run.sh starts tableemu on a free loopback port and passes its connection string in
 * TABLEEMU_TEST_CONNECTION_STRING (or -Dtableemu.connectionString). The same variable points the
 * suite at any other endpoint (Azurite, a storage account). TABLEEMU_OWN_SERVER=1 says the server
 * belongs to this run, so tests may change account-wide settings (service properties).
 *
 * <p>Under -Dtableemu.profile=cosmos (pom.xml's cosmos execution) the suite runs once more against
 * a tableemu --profile cosmos, whose connection string run.sh passes in
 * TABLEEMU_TEST_COSMOS_CONNECTION_STRING, with the SDK in its Cosmos mode: its builders take an
 * endpoint that contains "cosmos.azure." for Cosmos DB and then send a merge as POST with
 * X-HTTP-Method: MERGE (azure-data-tables' BuilderHelper and CosmosPatchTransformPolicy). So
 * ENDPOINT names the host tableemu.table.cosmos.azure.localhost, and HTTP carries each request to
 * the server's real address, WIRE_ENDPOINT. Tests whose answer differs under the profile assert
 * Cosmos DB's (COSMOS).
 */
final class Target {
    static final String CONNECTION_STRING;
    static final String ACCOUNT;
    static final String KEY;
    /** The table endpoint without a trailing slash, e.g. http://127.0.0.1:40123/devstoreaccount1. */
    static final String ENDPOINT;
    /** Where the server listens: ENDPOINT but under the cosmos profile. */
    static final String WIRE_ENDPOINT;
    static final boolean OWN_SERVER;
    /** The server answers as Azure Cosmos DB for Table, and the SDK is in its Cosmos mode. */
    static final boolean COSMOS = "cosmos".equals(System.getProperty("tableemu.profile"));

    /** One HTTP client for every SDK client: one connection pool, one event loop. */
    static final HttpClient HTTP;

    /** No retries: a test that provokes a failure must see it once, quickly. */
    static final RetryOptions NO_RETRY = new RetryOptions(new FixedDelayOptions(0, Duration.ofMillis(1)));

    private static final SecureRandom RANDOM = new SecureRandom();

    static {
        String cs = System.getProperty("tableemu.connectionString");
        if (cs == null || cs.isEmpty()) {
            cs = System.getenv(COSMOS ? "TABLEEMU_TEST_COSMOS_CONNECTION_STRING" : "TABLEEMU_TEST_CONNECTION_STRING");
        }
        if (cs == null || cs.isEmpty()) {
            throw new IllegalStateException("no endpoint: run conformance/java/run.sh, or set "
                + "TABLEEMU_TEST_CONNECTION_STRING to a connection string with AccountName, AccountKey and TableEndpoint");
        }
        Map<String, String> kv = parse(cs);
        String endpoint = kv.get("TableEndpoint");
        if (endpoint == null && kv.containsKey("EndpointSuffix")) {
            endpoint = kv.getOrDefault("DefaultEndpointsProtocol", "https") + "://" + kv.get("AccountName")
                + ".table." + kv.get("EndpointSuffix");
        }
        if (kv.get("AccountName") == null || kv.get("AccountKey") == null || endpoint == null) {
            throw new IllegalStateException("the connection string needs AccountName, AccountKey and TableEndpoint");
        }
        ACCOUNT = kv.get("AccountName");
        KEY = kv.get("AccountKey");
        WIRE_ENDPOINT = endpoint.replaceAll("/+$", "");
        HttpClient netty = new NettyAsyncHttpClientBuilder().build();
        if (COSMOS) {
            java.net.URI wire = java.net.URI.create(WIRE_ENDPOINT);
            ENDPOINT = wire.getScheme() + "://" + Cosmos.HOST + ":" + wire.getPort() + wire.getRawPath();
            HTTP = new Cosmos.Redirect(netty, ENDPOINT, WIRE_ENDPOINT);
        } else {
            ENDPOINT = WIRE_ENDPOINT;
            HTTP = netty;
        }
        CONNECTION_STRING = "DefaultEndpointsProtocol=" + ENDPOINT.substring(0, ENDPOINT.indexOf(':'))
            + ";AccountName=" + ACCOUNT + ";AccountKey=" + KEY + ";TableEndpoint=" + ENDPOINT + ";";
        OWN_SERVER = "1".equals(System.getenv("TABLEEMU_OWN_SERVER"));
    }

    private Target() {
    }

    static Map<String, String> parse(String cs) {
        Map<String, String> kv = new HashMap<>();
        for (String part : cs.split(";")) {
            int i = part.indexOf('=');
            if (i > 0) {
                kv.put(part.substring(0, i).trim(), part.substring(i + 1).trim());
            }
        }
        return kv;
    }

    static AzureNamedKeyCredential credential() {
        return new AzureNamedKeyCredential(ACCOUNT, KEY);
    }

    static TableServiceClientBuilder serviceBuilder() {
        return new TableServiceClientBuilder().endpoint(ENDPOINT).credential(credential()).httpClient(HTTP)
            .retryOptions(NO_RETRY);
    }

    static TableServiceClient service() {
        return serviceBuilder().buildClient();
    }

    static TableServiceAsyncClient asyncService() {
        return serviceBuilder().buildAsyncClient();
    }

    static TableClientBuilder tableBuilder(String name) {
        return new TableClientBuilder().endpoint(ENDPOINT).tableName(name).credential(credential()).httpClient(HTTP)
            .retryOptions(NO_RETRY);
    }

    static TableClient table(String name) {
        return tableBuilder(name).buildClient();
    }

    static TableAsyncClient asyncTable(String name) {
        return tableBuilder(name).buildAsyncClient();
    }

    /** A client for one table authorised only by a SAS token. */
    static TableClient sasTable(String name, String sas) {
        return new TableClientBuilder().endpoint(ENDPOINT).tableName(name).credential(new AzureSasCredential(sas))
            .httpClient(HTTP).retryOptions(NO_RETRY).buildClient();
    }

    /** A service client authorised only by a SAS token. */
    static TableServiceClient sasService(String sas) {
        return new TableServiceClientBuilder().endpoint(ENDPOINT).credential(new AzureSasCredential(sas))
            .httpClient(HTTP).retryOptions(NO_RETRY).buildClient();
    }

    /** A fresh, valid table name: a letter, then hex digits. */
    static String tableName(String prefix) {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        return prefix + HexFormat.of().formatHex(b);
    }

    /** Skips a test that changes account-wide settings unless the server is this run's own. */
    static void assumeOwnServer() {
        assumeTrue(OWN_SERVER, "needs its own tableemu (changes account-wide settings); set by run.sh");
    }
}
