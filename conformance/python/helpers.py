"""Assertions the test files share."""

import pytest
from azure.core.exceptions import HttpResponseError

from conftest import COSMOS

# The error codes the cosmos profile answers differently (docs/cosmos.md,
# "Error bodies"): a table that does not exist is 404 ResourceNotFound to
# entity operations (test_new_non_existent_table), a SAS without the
# permission is 403 Forbidden (ValidateSasCredentials).
TABLE_NOT_FOUND = "ResourceNotFound" if COSMOS else "TableNotFound"
PERMISSION = "Forbidden" if COSMOS else "AuthorizationPermissionMismatch"


def not_yet(reason):
    """A test whose cosmos run asserts what Cosmos DB answers (docs/cosmos.md
    names the recording) while tableemu's profile does not answer so yet:
    expected to fail on that run (xfail, not strict: it may pass once the
    profile does), and not skipped. Remove it when the profile gives that
    answer."""
    return pytest.mark.xfail(COSMOS, reason="cosmos profile, not yet in tableemu: " + reason, strict=False)


def expect_error(exc_type, status, code, decoded=True):
    """Context manager: the block raises exc_type (an HttpResponseError
    subclass) with this status, the service's code in x-ms-error-code and
    in the body, and error_code equal to it.

    decoded=False is for the one operation whose error the SDK re-raises
    undecoded (TableClient.create_entity in azure-data-tables 12.7.0: it
    decodes the error to look for key and table-name problems, then raises
    the original): it has no error_code attribute. That is asserted, so the
    test notices when the SDK changes."""
    return _Expect(exc_type, status, code, decoded)


def response_code(err):
    resp = err.response
    return resp.headers.get("x-ms-error-code") if resp is not None else None


class _Expect:
    def __init__(self, exc_type, status, code, decoded):
        self.exc_type, self.status, self.code, self.decoded = exc_type, status, code, decoded
        self.raises = pytest.raises(exc_type)

    def __enter__(self):
        self.info = self.raises.__enter__()
        return self.info

    def __exit__(self, *exc):
        suppressed = self.raises.__exit__(*exc)
        if not suppressed:
            return False  # another exception: let it through as it is
        err = self.info.value
        assert isinstance(err, HttpResponseError), f"{type(err).__name__}: {err}"
        assert err.status_code == self.status, f"status {err.status_code}, want {self.status}: {err}"
        assert response_code(err) == self.code, f"x-ms-error-code {response_code(err)!r}, want {self.code!r}: {err}"
        if self.decoded:
            assert err.error_code == self.code, f"error_code {err.error_code!r}, want {self.code!r}: {err}"
        else:
            assert not hasattr(err, "error_code"), f"the SDK now decodes this error: {err.error_code!r}"
        # The body carries the same code (docs/protocol.md 0.1).
        body = err.response.text() if err.response is not None else ""
        assert self.code in body, f"body does not carry {self.code}: {body}"
        return suppressed
