package tableemu.conformance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Requests signed here with Shared Key Lite (docs/protocol.md 9.4), independently of the SDK: used
 * only to look at what the service stored or sent where the SDK hides it.
 */
final class Raw {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Raw() {
    }

    static HttpResponse<String> get(String pathAndQuery, String accept) throws Exception {
        URI uri = URI.create(Target.WIRE_ENDPOINT + pathAndQuery);
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
        String resource = "/" + Target.ACCOUNT + uri.getRawPath();
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(Target.KEY), "HmacSHA256"));
        String sig = Base64.getEncoder().encodeToString(mac.doFinal((date + "\n" + resource).getBytes(StandardCharsets.UTF_8)));
        HttpRequest req = HttpRequest.newBuilder(uri).GET().header("x-ms-date", date).header("x-ms-version", "2019-02-02")
            .header("Accept", accept).header("DataServiceVersion", "3.0")
            .header("Authorization", "SharedKeyLite " + Target.ACCOUNT + ":" + sig).build();
        return HTTP.send(req, HttpResponse.BodyHandlers.ofString());
    }
}
