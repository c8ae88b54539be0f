"""The service's one error shape, `{"error": {"code", "message"}}`, as typed exceptions.

Each HTTP status family has its own class so callers can catch what they can act on
(`NotFound`, `Conflict`, ...) and branch further on `code`, which the service never renames.
Failures that never reached an answer (timeouts, refused connections) are `TransportError`s.
"""

from __future__ import annotations


class JoustError(Exception):
    """An error answer of the service, or a request that got no answer.

    `status` is the HTTP status (0 when no answer came), `code` the service's stable error code
    (`unknown_experiment`, `outcome_conflict`, ...; `timeout` or `connection_error` when no answer
    came), `message` the human-readable text.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        request_id: str | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again may succeed (nothing was recorded)."""
        return self.status == 0 or self.status >= 500 or self.status in (408, 429)


class BadRequest(JoustError):
    """400: malformed JSON or body, or a forged or altered token (`invalid_token`)."""


class Unauthorized(JoustError):
    """401: no API key, or an unknown one."""


class Forbidden(JoustError):
    """403: the key's scope does not allow this request."""


class NotFound(JoustError):
    """404: unknown experiment or ranker."""


class Conflict(JoustError):
    """409: `outcome_conflict`, `experiment_paused`, `experiment_concluded`, `too_few_rankers`..."""


class Gone(JoustError):
    """410: `duel_expired`, the token is past the experiment's attribution window."""


class PayloadTooLarge(JoustError):
    """413: the body is over the service's limit."""


class UnsupportedMediaType(JoustError):
    """415: the body was not sent as JSON."""


class Invalid(JoustError):
    """422: a value the service refuses (names, policies, winners not in the duel...)."""


class ServerError(JoustError):
    """5xx other than 503: a fault of the service; the server log has the request id."""


class Unavailable(ServerError):
    """503: the service's database is unreachable; nothing was recorded, retry later.

    `retry_after` is the service's hint in seconds (None when it gave none).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status, code, message, request_id=request_id)
        self.retry_after = retry_after


class TransportError(JoustError):
    """No answer: the connection failed or was refused (`code` is `connection_error`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(0, code, message)


class Timeout(TransportError):
    """No answer within the deadline or timeout (`code` is `timeout`)."""

    def __init__(self, message: str) -> None:
        super().__init__("timeout", message)


ERROR_CLASS_BY_STATUS: dict[int, type[JoustError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: Invalid,
}


def error_for(
    status: int,
    code: str,
    message: str,
    *,
    request_id: str | None = None,
    retry_after: float | None = None,
) -> JoustError:
    """The exception for an error answer of this status."""
    if status == 503:
        return Unavailable(status, code, message, request_id=request_id, retry_after=retry_after)
    if status >= 500:
        return ServerError(status, code, message, request_id=request_id)
    error_class = ERROR_CLASS_BY_STATUS.get(status, JoustError)
    return error_class(status, code, message, request_id=request_id)
