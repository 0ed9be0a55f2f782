package tableemu.conformance;

import com.azure.core.http.HttpClient;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.HttpResponse;
import com.azure.core.util.Context;
import reactor.core.publisher.Mono;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The suite's second run, under tableemu --profile cosmos (Target.COSMOS; docs/cosmos.md, "How it
 * is tested").
 */
final class Cosmos {
    /**
     * The host ENDPOINT names under the profile: azure-data-tables takes an endpoint containing
     * "cosmos.azure." for Cosmos DB (BuilderHelper), and a host containing ".cosmos." too
     * (TableUtils.isCosmosEndpoint). Under .localhost, it names no machine outside this one.
     */
    static final String HOST = "tableemu.table.cosmos.azure.localhost";

    private Cosmos() {
    }

    /** Table storage's code, or Cosmos DB for Table's under the profile. */
    static String code(String storage, String cosmos) {
        return Target.COSMOS ? cosmos : storage;
    }

    /** The code of an entity operation on a missing table (python-cosmos test_new_non_existent_table). */
    static String tableNotFound() {
        return code("TableNotFound", "ResourceNotFound");
    }

    /** The code of a request its SAS does not permit (net-cosmos ValidateSasCredentials). */
    static String permissionMismatch() {
        return code("AuthorizationPermissionMismatch", "Forbidden");
    }

    /**
     * keys as the test may expect them: in the order given from Table storage, in any order from
     * Cosmos DB for Table, whose query results are not sorted (its FAQ), so sorted under the profile.
     */
    static java.util.List<String> unordered(java.util.List<String> keys) {
        return Target.COSMOS ? keys.stream().sorted().collect(java.util.stream.Collectors.toList()) : keys;
    }

    /**
     * Skips a test of what Cosmos DB for Table does not serve (its FAQ) under the profile; where
     * names the test that checks tableemu's refusal there.
     */
    static void absent(String what, String where) {
        assumeFalse(Target.COSMOS, "cosmos profile: Cosmos DB for Table has no " + what + " (its FAQ); " + where
            + " checks tableemu's 405 MethodNotAllowed");
    }

    /** Carries each request for ENDPOINT to WIRE_ENDPOINT, where the server listens. */
    static final class Redirect implements HttpClient {
        private final HttpClient next;
        private final String from;
        private final String to;

        Redirect(HttpClient next, String from, String to) {
            this.next = next;
            this.from = from.substring(0, from.indexOf('/', from.indexOf("://") + 3));
            this.to = to.substring(0, to.indexOf('/', to.indexOf("://") + 3));
        }

        private HttpRequest redirect(HttpRequest request) {
            String url = request.getUrl().toString();
            if (url.startsWith(from)) {
                request.setUrl(to + url.substring(from.length()));
            }
            return request;
        }

        @Override
        public Mono<HttpResponse> send(HttpRequest request) {
            return next.send(redirect(request));
        }

        @Override
        public Mono<HttpResponse> send(HttpRequest request, Context context) {
            return next.send(redirect(request), context);
        }

        @Override
        public HttpResponse sendSync(HttpRequest request, Context context) {
            return next.sendSync(redirect(request), context);
        }
    }
}
