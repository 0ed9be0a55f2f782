package tableemu.conformance;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.HttpResponse;
import com.azure.data.tables.models.TableServiceException;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Assertions on the service's errors: the status and the Azure error code, never the status alone. */
final class Errors {
    private Errors() {
    }

    /**
     * Runs call, which must fail with a TableServiceException of this status and Azure error code.
     * The code is read from the error body (getValue().getErrorCode()); where the response also
     * carries x-ms-error-code, the two must agree (docs/protocol.md 0.1).
     */
    static <T extends TableServiceException> T assertServiceError(Class<T> type, int status, String code,
        Executable call) {
        T e = assertThrows(type, call, "want " + status + " " + code);
        assertCode(e, status, code);
        return e;
    }

    static TableServiceException assertServiceError(int status, String code, Executable call) {
        return assertServiceError(TableServiceException.class, status, code, call);
    }

    /** As assertServiceError, with what was tried in the failure message. */
    static TableServiceException assertServiceError(String context, int status, String code, Executable call) {
        try {
            return assertServiceError(TableServiceException.class, status, code, call);
        } catch (AssertionError e) {
            throw new AssertionError(context + ": " + e.getMessage(), e);
        }
    }

    static void assertCode(TableServiceException e, int status, String code) {
        assertNotNull(e.getValue(), "no error body: " + e.getMessage());
        assertNotNull(e.getValue().getErrorCode(), "no error code: " + e.getMessage());
        HttpResponse r = e.getResponse();
        if (r != null) {
            assertEquals(status + " " + code, r.getStatusCode() + " " + e.getValue().getErrorCode(), e.getMessage());
            String header = r.getHeaderValue("x-ms-error-code");
            if (header != null) {
                assertEquals(code, header, "x-ms-error-code differs from the body's code");
            }
        } else {
            assertEquals(code, e.getValue().getErrorCode().toString(), e.getMessage());
        }
    }

    /**
     * For failures the SDK does not turn into TableServiceException (SDK bugs, documented where
     * they are used): the sync list iterators throw the implementation's
     * TableServiceJsonErrorException, and the XML operations (ACLs, service properties,
     * statistics) expect an error element named TableServiceError, which no service sends, so
     * they throw a bare HttpResponseException. The status and x-ms-error-code are the service's;
     * the exception's message carries the body, which must name the same code.
     */
    static HttpResponseException assertHttpError(int status, String code, Executable call) {
        HttpResponseException e = assertThrows(HttpResponseException.class, call, "want " + status + " " + code);
        assertFalse(e instanceof TableServiceException, "the SDK maps this failure now: use assertServiceError");
        assertEquals(status + " " + code, e.getResponse().getStatusCode() + " " + e.getResponse().getHeaderValue("x-ms-error-code"),
            e.getMessage());
        assertTrue(e.getMessage().contains("\"code\":\"" + code + "\"") || e.getMessage().contains(">" + code + "</"),
            "the body names another code: " + e.getMessage());
        return e;
    }

    /** Asserts a response the SDK did not turn into an exception (a swallowed 404 or 409). */
    static void assertSwallowed(com.azure.core.http.rest.Response<?> r, int status, String code) {
        assertEquals(status, r.getStatusCode(), "status");
        assertEquals(code, r.getHeaders().getValue("x-ms-error-code"), "x-ms-error-code");
    }
}
