package tableemu.conformance;

import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.models.TableServiceCorsRule;
import com.azure.data.tables.models.TableServiceGeoReplicationStatus;
import com.azure.data.tables.models.TableServiceLogging;
import com.azure.data.tables.models.TableServiceMetrics;
import com.azure.data.tables.models.TableServiceProperties;
import com.azure.data.tables.models.TableServiceRetentionPolicy;
import com.azure.data.tables.models.TableServiceStatistics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static tableemu.conformance.Errors.assertHttpError;

/**
 * Service properties (logging, metrics, CORS) and statistics through TableServiceClient
 * (docs/protocol.md 3.5–3.7). Properties are account-wide: those tests need this run's own server,
 * and put the defaults back afterwards.
 */
class ServiceTest {

    static TableServiceRetentionPolicy retention(boolean enabled, Integer days) {
        return new TableServiceRetentionPolicy().setEnabled(enabled).setDaysToRetain(days);
    }

    static TableServiceProperties defaults() {
        return new TableServiceProperties()
            .setLogging(new TableServiceLogging().setAnalyticsVersion("1.0").setRetentionPolicy(retention(false, null)))
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(false).setRetentionPolicy(retention(false, null)))
            .setMinuteMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(false).setRetentionPolicy(retention(false, null)))
            .setCorsRules(Collections.emptyList());
    }

    static TableServiceCorsRule rule() {
        return new TableServiceCorsRule().setAllowedOrigins("https://www.example.com").setAllowedMethods("GET,PUT,MERGE")
            .setAllowedHeaders("x-ms-meta-data*").setExposedHeaders("x-ms-meta-source*").setMaxAgeInSeconds(500);
    }

    @AfterEach
    void restore() {
        if (Target.OWN_SERVER && !Target.COSMOS) {
            Target.service().setProperties(defaults());
        }
    }

    @Test
    void setsAndGetsLoggingMetricsAndCors() {
        Cosmos.absent("service properties, statistics or CORS", "ServiceTest.statisticsOnThePrimaryAre400InvalidQueryParameterValue");
        Target.assumeOwnServer();
        TableServiceClient svc = Target.service();
        assertEquals(202, svc.setPropertiesWithResponse(new TableServiceProperties()
            .setLogging(new TableServiceLogging().setAnalyticsVersion("1.0").setReadLogged(true).setWriteLogged(true)
                .setDeleteLogged(true).setRetentionPolicy(retention(true, 5)))
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(true).setIncludeApis(true)
                .setRetentionPolicy(retention(true, 7)))
            .setMinuteMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(false).setRetentionPolicy(retention(false, null)))
            .setCorsRules(List.of(rule())), null, null).getStatusCode());

        TableServiceProperties p = svc.getProperties();
        assertTrue(p.getLogging().isReadLogged());
        assertTrue(p.getLogging().isDeleteLogged());
        assertEquals(5, p.getLogging().getRetentionPolicy().getDaysToRetain());
        assertTrue(p.getHourMetrics().isEnabled());
        assertEquals(true, p.getHourMetrics().isIncludeApis());
        assertEquals(7, p.getHourMetrics().getTableServiceRetentionPolicy().getDaysToRetain());
        assertFalse(p.getMinuteMetrics().isEnabled());
        assertEquals(1, p.getCorsRules().size());
        TableServiceCorsRule got = p.getCorsRules().get(0);
        assertEquals("https://www.example.com", got.getAllowedOrigins());
        assertEquals("GET,PUT,MERGE", got.getAllowedMethods());
        assertEquals("x-ms-meta-data*", got.getAllowedHeaders());
        assertEquals("x-ms-meta-source*", got.getExposedHeaders());
        assertEquals(500, got.getMaxAgeInSeconds());

        // Only MinuteMetrics: logging, hour metrics and CORS keep their values.
        svc.setProperties(new TableServiceProperties().setMinuteMetrics(new TableServiceMetrics().setVersion("1.0")
            .setEnabled(true).setIncludeApis(false).setRetentionPolicy(retention(true, 1))));
        p = svc.getProperties();
        assertTrue(p.getMinuteMetrics().isEnabled());
        assertTrue(p.getLogging().isReadLogged());
        assertEquals(1, p.getCorsRules().size());

        // An empty CORS list clears the rules.
        svc.setProperties(new TableServiceProperties().setCorsRules(Collections.emptyList()));
        p = svc.getProperties();
        assertTrue(p.getCorsRules() == null || p.getCorsRules().isEmpty());
        assertTrue(p.getLogging().isReadLogged());
    }

    @Test
    void aCorsRuleSetThroughTheSdkAnswersPreflights() throws Exception {
        Cosmos.absent("service properties, statistics or CORS", "ServiceTest.statisticsOnThePrimaryAre400InvalidQueryParameterValue");
        Target.assumeOwnServer();
        Target.service().setProperties(new TableServiceProperties().setCorsRules(List.of(rule())));
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        URI tables = URI.create(Target.ENDPOINT + "/Tables");
        HttpResponse<String> ok = http.send(HttpRequest.newBuilder(tables).method("OPTIONS", HttpRequest.BodyPublishers.noBody())
            .header("Origin", "https://www.example.com").header("Access-Control-Request-Method", "PUT")
            .header("Access-Control-Request-Headers", "x-ms-meta-data-one").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, ok.statusCode());
        assertEquals("https://www.example.com", ok.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
        assertEquals("500", ok.headers().firstValue("Access-Control-Max-Age").orElse(null));
        HttpResponse<String> refused = http.send(HttpRequest.newBuilder(tables).method("OPTIONS", HttpRequest.BodyPublishers.noBody())
            .header("Origin", "https://evil.example").header("Access-Control-Request-Method", "PUT").build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(403, refused.statusCode());
        assertEquals("CorsPreflightFailure", refused.headers().firstValue("x-ms-error-code").orElse(null));
    }

    @Test
    void refusesInvalidProperties() {
        Cosmos.absent("service properties, statistics or CORS", "ServiceTest.statisticsOnThePrimaryAre400InvalidQueryParameterValue");
        Target.assumeOwnServer();
        TableServiceClient svc = Target.service();
        TableServiceProperties before = svc.getProperties();
        assertHttpError(400, "InvalidXmlDocument", () -> svc.setProperties(new TableServiceProperties()
            .setHourMetrics(new TableServiceMetrics().setVersion("1.0").setEnabled(false).setRetentionPolicy(retention(true, 366)))));
        TableServiceCorsRule any = new TableServiceCorsRule().setAllowedOrigins("*").setAllowedMethods("GET")
            .setAllowedHeaders("").setExposedHeaders("").setMaxAgeInSeconds(1);
        assertHttpError(400, "InvalidXmlDocument",
            () -> svc.setProperties(new TableServiceProperties().setCorsRules(Collections.nCopies(6, any))));
        TableServiceCorsRule fetch = new TableServiceCorsRule().setAllowedOrigins("*").setAllowedMethods("FETCH")
            .setAllowedHeaders("").setExposedHeaders("").setMaxAgeInSeconds(1);
        assertHttpError(400, "InvalidXmlDocument", () -> svc.setProperties(new TableServiceProperties().setCorsRules(List.of(fetch))));
        assertEquals(before.getHourMetrics().getTableServiceRetentionPolicy().isEnabled(),
            svc.getProperties().getHourMetrics().getTableServiceRetentionPolicy().isEnabled(), "a refused Set changes nothing");
    }

    @Test
    void statisticsAnswerOnTheSecondaryEndpoint() {
        Cosmos.absent("service properties, statistics or CORS", "ServiceTest.statisticsOnThePrimaryAre400InvalidQueryParameterValue");
        // The Java SDK calls getStatistics on the client's own endpoint (it rewrites nothing), so
        // the client is built for the -secondary account. It signs the path with the credential's
        // account name, "/devstoreaccount1/devstoreaccount1-secondary/" (docs/protocol.md 9.5).
        TableServiceClient secondary = new com.azure.data.tables.TableServiceClientBuilder()
            .endpoint(Target.ENDPOINT + "-secondary").credential(Target.credential()).httpClient(Target.HTTP)
            .retryOptions(Target.NO_RETRY).buildClient();
        TableServiceStatistics stats = secondary.getStatistics();
        assertEquals(TableServiceGeoReplicationStatus.LIVE, stats.getGeoReplication().getStatus());
        OffsetDateTime sync = stats.getGeoReplication().getLastSyncTime();
        assertTrue(Duration.between(sync, OffsetDateTime.now()).abs().toMinutes() < 5, sync.toString());
    }

    @Test
    void statisticsOnThePrimaryAre400InvalidQueryParameterValue() {
        if (Target.COSMOS) {
            // Cosmos DB for Table refuses Set Service Properties (python-cosmos
            // test_too_many_cors_rules) and has no statistics or CORS (its FAQ): tableemu answers
            // them all 405 (docs/cosmos.md).
            TableServiceClient svc = Target.service();
            assertHttpError(405, "MethodNotAllowed", svc::getStatistics);
            assertHttpError(405, "MethodNotAllowed", svc::getProperties);
            assertHttpError(405, "MethodNotAllowed", () -> svc.setProperties(defaults()));
            return;
        }
        assertHttpError(400, "InvalidQueryParameterValue", () -> Target.service().getStatistics());
    }
}
